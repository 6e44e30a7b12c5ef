"""Disturbed trials: a trial during which the host took much of the time away from what it
measured is marked, kept in the store, and left out of the statistics (with its reason).

Two limits, study settings (`steal_limit` in %, `cpu_share_limit`), defaults in defaults.py:
- steal: the share of the host's CPU time its own hypervisor gave to others during the trial
  (/proc/stat); over steal_limit the trial is disturbed, whatever it measured.
- CPU share: for a CPU-bound benchmark (`cpu_bound`: our kernels), the CPU time the measured
  threads got over the trial's wall time and the CPUs it keeps busy (its processes): the
  command's own user + system time as the agent reports it, or, for a guest, its vCPU
  threads' time read on the host. A kernel alone on its CPU gets about 0.99 of it; on a host
  shared with other work its usual share is whatever that work leaves (0.31-0.55 measured
  here beside two TCG guests), the same for every trial of a block, which pairing cancels.
  So the limit is relative: a trial is disturbed when it got less than cpu_share_limit times
  the median share of the earlier trials of its environment and case in the run (once there
  are CPU_SHARE_HISTORY of them): something ran on its CPUs that did not run beside the
  others.
Run-queue length (procs_running, sampled) is recorded beside them, never judged: on a small
shared host it is rarely below the CPU count.

Pure: the figures come from virtbench.machinery.machine.load and the trial's outcome.
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from ...core import defaults
from ...machinery.machine.load import Load


@dataclass(frozen=True)
class Limits:
    steal_pct: float = defaults.STEAL_LIMIT_PCT     # 100: off
    cpu_share: float = defaults.CPU_SHARE_LIMIT     # x the usual share; 0: off
    history: int = defaults.CPU_SHARE_HISTORY

    @classmethod
    def of(cls, study) -> "Limits":
        """The study's limits."""
        return cls(float(study.steal_limit_pct), float(study.cpu_share_limit))

    def to_dict(self) -> dict:
        return {"steal_pct": self.steal_pct, "cpu_share": self.cpu_share}


def cpu_share(load: Load, cpu_s: float | None, exec_wall_s: float | None,
              busy: int) -> float | None:
    """CPU time of the measured threads per second of wall time and busy CPU: the vCPU
    threads' over the trial (a guest), else the command's own over its own wall time."""
    busy = max(1, busy)
    if load.threads_cpu_s is not None and load.wall_s > 0:
        return load.threads_cpu_s / load.wall_s / busy
    if cpu_s is not None and exec_wall_s:
        return cpu_s / exec_wall_s / busy
    return None


def usual_share(history: list[float], limits: Limits) -> float | None:
    """The median of the earlier shares, once there are limits.history of them."""
    return median(history) if len(history) >= max(1, limits.history) else None


def figures(load: Load, share: float | None) -> dict:
    """What a trial's detail keeps of its host's load ("load")."""
    out = load.to_dict()
    if share is not None:
        out["cpu_share"] = round(share, 4)
    return out


def judge(load: Load, share: float | None, usual: float | None, cpu_bound: bool,
          limits: Limits) -> dict | None:
    """None, or trials.detail["disturbed"]: the reason and the figures it is judged on."""
    reasons = []
    if load.steal_pct is not None and load.steal_pct > limits.steal_pct:
        reasons.append(f"steal {load.steal_pct:.1f} % of the host's CPU time, above the "
                       f"limit of {limits.steal_pct:g} %")
    if cpu_bound and share is not None and usual and share < limits.cpu_share * usual:
        reasons.append(f"the measured threads got {share:.2f} of their CPUs' time, less than "
                       f"{limits.cpu_share:g} x the {usual:.2f} this environment and case "
                       "usually get in this run: something else ran on them")
    if not reasons:
        return None
    out = {"reason": "; ".join(reasons), "limits": limits.to_dict(), **figures(load, share)}
    if usual is not None:
        out["usual_cpu_share"] = round(usual, 4)
    out.pop("samples", None)
    return out
