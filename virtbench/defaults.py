"""The method's defaults, in one place: every module that needs one imports it from here.

The seed method (RIKEN 2012): 12 trials, drop the highest and the lowest, mean of the rest,
pass within 10 % of bare metal. virtbench adds a warm-up trial, pinning and a significance
level for its verdicts.
"""
TRIALS = 12           # measured trials (blocks) per environment x benchmark
WARMUP = 1            # unmeasured trials per environment x benchmark before the measured ones
THRESHOLD_PCT = 10.0  # the verdicts' band: within ±10 % of the reference passes
ALPHA = 0.05          # significance level of the verdicts
PIN = "auto"          # pin our kernels / vCPU threads to host CPUs when there are enough
