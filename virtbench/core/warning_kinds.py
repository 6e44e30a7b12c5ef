"""Every kind of warning virtbench gives, in one place: its code (the report's `kind`), its
severity, the form of its message (fields in braces vary), where it comes from and what it
means. The report's warnings carry their severity and documentation anchor from here;
docs/warnings.md is generated from it (`python -m virtbench.core.warning_kinds`), and
tests/unit/core/test_warning_kinds.py fails when a warning is emitted anywhere in the package with a
kind not listed here, or when the page and this list disagree.

Severities: "error": part of the study was not measured (an environment or a benchmark did
not run); "warning": the figures were measured, read them with care; "note": how something
was measured, nothing wrong with the figures.

Plain data; it imports nothing of virtbench.
"""
from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING, NOTE = "error", "warning", "note"
SEVERITIES = (ERROR, WARNING, NOTE)
DOC = "docs/warnings.md"


@dataclass(frozen=True)
class WarningKind:
    code: str
    severity: str
    message: str        # its form: {fields} vary; " | " between the forms it takes; "..." a
                        # part left out
    source: str         # who gives it
    meaning: str        # what it means, what to do
    gist: str = ""      # the grouped view's words for many of them whose messages differ
                        # (results/report/words/warning_groups.py adds their figures' range)
    advice: str = ""    # the grouped view's one piece of advice (report/words/warning_groups.py
                        # may choose another that applies on the host: docs/warnings.md)

    @property
    def anchor(self) -> str:
        """Where docs/warnings.md explains it."""
        return f"{DOC}#{self.code}"


_KINDS = (
    # -- analysis: the statistics of a row ------------------------------------------------
    WarningKind("few_samples", WARNING,
                "only {n} samples: the CI and p-value are rough; {advice} | only {n} samples: "
                "the CI and p-value are rough", "analysis (stats.noise_warnings)",
                "Fewer than the samples a CI and a permutation test need to be more than rough; "
                "said once per environment x benchmark. The trials it advises follow one rule "
                "(the run's `trials_advised`): the published studies' 12, or more when a lone "
                "difference among the run's compared rows needs more blocks to survive the "
                "correction (2 / 2^n < alpha / rows); the dry run's reach note says the same.",
                gist="few samples: the CI and p-value are rough",
                advice="run 12 trials (--trials 12) as the published studies did, or the count "
                       "the message names"),
    WarningKind("high_cv", WARNING,
                "CV {cv} % is above {limit} %: {advice} | CV {cv} % is above {limit} %",
                "analysis (stats.noise_warnings)",
                "The samples of a row scatter more than 5 % around their mean: the host was "
                "busy, its clock varied, or the benchmark is noisy. Verdicts need more trials "
                "to decide. The grouped view advises what applies on the host: the CPU "
                "governor only when the host has cpufreq and its governor is not "
                "performance.", gist="CV above 5 %",
                advice="stop other work on the host while virtbench measures"),
    WarningKind("outlier", WARNING,
                "{trials} ({values}) is an outlier by MAD against the median {median}: "
                "something disturbed it; check the host's load at that time or rerun | "
                "{trials} ({values}) are outliers by MAD against the median {median}: "
                "something disturbed them; check the host's load at that time or rerun",
                "analysis (stats.noise_warnings)",
                "A sample far from the others by the median absolute deviation; it stays in "
                "the figures (the trimmed mean drops the extremes). Find what ran then.",
                gist="samples far from their row's median (MAD)",
                advice="check the host's load at those trials' times (--verbose names them)"),
    WarningKind("failed_trials", WARNING,
                "{failed} of {planned} trials failed; the figures are from the survivors | "
                "{failed} trials failed; the figures are from the survivors", "analysis",
                "Some trials of an environment x benchmark failed; the figures are from the "
                "others, which biases them (a guest that fails its slow trials looks fast). "
                "What the failed ones measured is in failed_trial_evidence.",
                gist="trials failed; the figures are from the survivors",
                advice="read why in failed_trial_evidence (--format json)"),
    WarningKind("all_trials_failed", ERROR,
                "all {failed} of {planned} trial(s) failed; last error: {error} | all {failed} "
                "trial(s) failed; last error: {error}", "analysis",
                "No trial of an environment x benchmark succeeded: it has no figures. The "
                "errors and output tails are in failed_trial_evidence."),
    WarningKind("zero_reference", WARNING,
                "{reference}'s {metric} is 0 (trimmed mean): no ratio or overhead against it",
                "analysis",
                "The reference measured 0 (no retransmits, say): there is no ratio to it; the "
                "row's figures stand alone."),
    WarningKind("no_ratio", WARNING,
                "a trimmed mean of 0 or below ({sides}): no ratio, no verdict", "analysis",
                "A value of 0 or below on one side of a comparison (a metric that counts "
                "events, say): there is no ratio, so no overhead and no verdict; the row's "
                "figures stand alone (docs/decisions.md, values of 0 or below)."),
    WarningKind("order_effect", NOTE,
                "against {reference}: a value is {pct} % {higher_or_lower} when it runs first in "
                "its block (p {p}; environment first in {n} blocks, second in {m}), "
                "Holm-adjusted p {p_holm}; the random order makes it noise, not bias "
                "(order-balanced ratio {ratio})", "analysis (stats.paired.position_effect)",
                "Inside a block the order is random, yet the one that ran first measured "
                "differently (a warm cache, a CPU boost); significant after Holm over the run's "
                "rows. Random order turns it into noise in the verdict, not bias; the "
                "order-balanced ratio removes it."),
    WarningKind("no_usable_trials", ERROR,
                "every trial was left out of the statistics as disturbed: no figures; run it "
                "again when the host is quieter",
                "analysis (trials the runner marked disturbed)",
                "Every trial of an environment x benchmark was disturbed (see "
                "disturbed_trials): its rows have no sample to make figures of and are left "
                "out of the results; the trials stay in the store. A resumed run does not "
                "run them again; a new run (or more trials) does.",
                gist="no trial left to make figures of",
                advice="stop other work on the host while virtbench measures, then run again"),
    WarningKind("disturbed_trials", WARNING,
                "{n} trial(s) left out of the statistics as disturbed: {trials}",
                "analysis (trials the runner marked disturbed)",
                "The host was disturbed while these trials ran (steal time, run queue, the "
                "measured process's CPU share): they stay in the store and are left out of "
                "every statistic of their rows, each with its reason (results[].disturbed).",
                gist="trials left out of the statistics as disturbed",
                advice="stop other work on the host while virtbench measures (--verbose: "
                       "each trial's reason)"),
    WarningKind("no_like_for_like_baseline", WARNING,
                "no like-for-like baseline: the run has no {kind}/x{n} ({kind}:instances={n}); "
                "the aggregate over {n} instances is not compared with a single baseline "
                "process (per-instance rows are) | host {host} has no {label}: nothing to "
                "compare {environment} with", "analysis (references)",
                "A group's aggregate is compared only with the baseline run at the same N "
                "(add native:instances=N); in a fleet, a host's environment only with the "
                "first host's same one. Without it the row has no verdict."),
    WarningKind("baseline_virtualized", WARNING,
                "the baseline itself runs under a hypervisor, {hypervisor}; overheads are "
                "relative to that, not to bare metal | the baseline itself runs under a "
                "hypervisor, {hypervisor}, inside a {container} container; overheads are "
                "relative to that, not to bare metal",
                "analysis",
                "The host that ran the baseline is itself a guest (CPUID's hypervisor bit, "
                "the kernel's \"Hypervisor detected\", systemd-detect-virt --vm): every "
                "overhead is against a virtual machine. The message names the hypervisor (and "
                "its product: Firecracker, QEMU...) and, apart, a container between it and the "
                "baseline; the environment's metadata has both (`hypervisor`, "
                "`hypervisor_product`, `container`, `platform_description`)."),
    WarningKind("host_without_run", WARNING,
                "no run yet on {hosts} (see `virtbench fleet status`)", "fleet report",
                "A fleet host has not run the study yet; its column is missing."),
    # -- the runner and the environments' life cycle ---------------------------------------
    WarningKind("environment_skipped", ERROR, "{spec}: {why}", "runner",
                "An environment of the study cannot run here (a target not configured, a "
                "hypervisor virtbench cannot provide): left out before the run."),
    WarningKind("benchmark_skipped", ERROR, "{benchmark} on {environment}: {why}", "runner",
                "An environment cannot run a benchmark (a capability it lacks, not enough "
                "memory): that pair is left out; the rest runs."),
    WarningKind("environment_failed", ERROR,
                "environment {label} failed to start: {error} | environment {label}: {why}",
                "life cycle",
                "An environment did not start, or was lost too often: its remaining trials "
                "were not run."),
    WarningKind("environment_lost", WARNING,
                "{label} lost ({why}); restart {n} of at most {max}", "life cycle",
                "An environment died during a trial (a guest crashed, a connection dropped): "
                "that trial failed and the environment was restarted."),
    WarningKind("environment_note", NOTE, "{note}", "environments",
                "What an environment says about how it was made (a runtime chosen instead of "
                "another, an option this host cannot honour)."),
    WarningKind("not_pinned", WARNING, "{label}: not pinned for {benchmark}: {why}",
                "life cycle",
                "virtbench could not pin this environment's CPUs for a benchmark: the "
                "scheduler may move it, which adds noise."),
    WarningKind("short_section", WARNING,
                "{benchmark} on {environment}: the measured section lasted {seconds} s per "
                "trial ({k} repetition(s)), below the minimum of {minimum} s ({why}): timer "
                "and scheduler noise weigh on its figures; give the benchmark a larger size "
                "| ... raise the repetitions with a larger --min-section",
                "runner (sections.py)",
                "A kernel's measured section could not be repeated to the minimum "
                "(min_section, default 0.5 s): a group of instances runs it once per trial, "
                "or the repetitions reached their cap (200). A section virtbench can repeat "
                "is repeated until it reaches the minimum, never warned about. Short "
                "sections measure the timer and the scheduler as much as the kernel "
                "(docs/decisions.md). (Runs stored before 2026-11-28's issue 30 also say it "
                "of sections virtbench repeated too few times.)",
                gist="measured sections below the minimum", advice="give the benchmark a "
                "larger size"),
    WarningKind("undecided", WARNING,
                "adaptive trials stopped ({reason}) after {seconds} s with {n} case(s) still "
                "undecided: {cases}", "runner (adaptive.py)",
                "trials = \"auto\" ran out of its budget or reached max_trials before every "
                "verdict was decided; each undecided row says in the report how many blocks "
                "would decide it. Raise the budget or max_trials, or accept the resolution."),
    WarningKind("tune_unconfirmed", WARNING,
                "the recommended configuration ({spec}) was not confirmed against the base: "
                "{why}", "runner (tune.py)",
                "A tune's recommendation could not run against the base in this run (the "
                "base was lost, or the recommended configuration could not be made or "
                "started here): its screening's effects stand, its gain is unmeasured. Run "
                "the recommended configuration against the base with `virtbench run`."),
    WarningKind("profile_skipped", NOTE, "{why}", "exit profiles",
                "An environment cannot give an exit profile (--profile exits): not a guest "
                "whose exits virtbench can count."),
    # -- a benchmark's trial ---------------------------------------------------------------
    WarningKind("stream-cache-rule", WARNING,
                "each STREAM array ({size} MB over {n} process(es)) is smaller than 4 x the "
                "{llc} MiB last-level cache: the rates include cache hits, not only memory; "
                "STREAM's rule wants elements >= {need} per process (the published studies' "
                "10,000,000 may be below it on today's caches) | ... (the seed studies' "
                "10,000,000 may be below it on today's caches)", "benchmark stream",
                "STREAM's own rule: arrays of at least 4 x the last-level cache, else the "
                "rates measure the cache too. Raise elements. (Runs stored before 2026-11-28 "
                "say \"the seed studies'\".)",
                gist="STREAM arrays under 4 x the last-level cache: the rates include cache "
                     "hits", advice="raise elements to STREAM's rule (--verbose: how many)"),
    WarningKind("primitives-skipped", NOTE, "{primitive}: {why}", "benchmark primitives",
                "A primitive the kernel did not measure in this environment (a cross-CPU figure "
                "on one CPU, huge pages not granted, no I/O port outside a guest): left out of "
                "the price list with its reason, never a 0 (docs/primitives.md)."),
    WarningKind("primitives-clocksource", NOTE,
                "clocksource {source}: clock_gettime is a system call here (the vDSO reads only "
                "tsc-based clocksources), plus a read of the device",
                "benchmark primitives",
                "The environment's clocksource is one the vDSO cannot read (hpet, acpi_pm, "
                "...): every clock read enters the kernel, as Zhang measured between "
                "clocksources. clock_gettime_ns measures that, not a vDSO read."),
    WarningKind("primitives-short-loop", WARNING,
                "loops shorter than target_ms (their cap was reached): {primitives}",
                "benchmark primitives",
                "A calibrated loop reached its iteration cap before lasting target_ms: its "
                "figure rests on a shorter interval than asked, so timer resolution and noise "
                "weigh more. Raise target_ms or read it with care."),
    WarningKind("physical-limit", WARNING,
                "{figures} exceeds {where}device {device} limit ({rated} MB/s, {how}): {cause} "
                "| {figures} measured through a page cache, not a device speed: {why}",
                "disk benchmarks",
                "A disk rate above what the device behind it can do: a cache served it, not "
                "the device (docs/instances-and-limits.md)."),
    WarningKind("unmeasured", NOTE,
                "bonnie++ printed +++++ for {tests}: the test finished too fast to time; use a "
                "larger size_mb | iperf3 {version} reports no receiver-side UDP throughput "
                "(only the sender's rate; iperf3 3.11 added it) and its JSON lacks the packets, "
                "lost packets, block size or time to compute it ...",
                "benchmarks bonnie, udp",
                "A figure the tool did not measure: left out, never a 0."),
    WarningKind("unsupported_cipher", NOTE,
                "{cipher}: not offered by this OpenSSH (ssh -Q cipher); reported as "
                "unsupported, not 0", "benchmark scp",
                "The guest's OpenSSH does not offer a cipher the study asks for."),
    WarningKind("percentile_left_out", NOTE,
                "{case}: {percentiles} left out: {requests} requests in a trial, and a "
                "percentile q needs 100/(1-q) ({needed} for {percentile}); give the trial more "
                "requests (a longer or faster run)",
                "workload benchmarks (measure/benchmarks/workloads/percentiles.py)",
                "A latency percentile rests on the requests beyond it: q needs at least "
                "100/(1-q) requests in a trial (p50 200, p99 10,000, p99.9 100,000). A case "
                "whose parameters send fewer leaves that percentile out, never a figure made of "
                "a handful of the slowest requests."),
    WarningKind("ring_left_out", NOTE,
                "hpcc on 1 rank: ring_latency_us, ring_bandwidth_gbs left out (b_eff's ring "
                "needs two ranks); give the environment two CPUs or ranks=2",
                "benchmark hpcc", "The HPC Challenge ran on one MPI rank (ranks=0 takes one "
                "per CPU, and the environment has one): b_eff's ring tests need two ranks and "
                "did not run, so the environment has no ring latency or bandwidth rows. Give "
                "it two CPUs (qemu:vcpus=2) or ranks=2 (two ranks then share its CPU)."),
    WarningKind("rate_not_kept", WARNING,
                "pgbench latency run: {done} of the {offered} transactions offered ({rate}/s "
                "for {seconds} s) were done, {not_done} not done; schedule lag avg {lag} ms "
                "(max {max}): the percentiles count a queue that grew[; {percentiles} left out "
                "({done} transactions done)]; lower rate",
                "benchmark pgbench", "An open-loop latency run whose environment could not keep "
                "the offered rate: transactions waited behind their schedule, more the longer "
                "the run, so its percentiles measure the queue, not the service, and the "
                "transactions never sent are not in them. A percentile whose trial did too few "
                "transactions for it (100/(1-q)) is left out of that trial. Lower `rate` "
                "below the environment's throughput (its `tps`)."),
    WarningKind("method", NOTE,
                "dd-write form=sync-mount: could not loop-mount an ext4 image -o sync ({why}); "
                "measured with oflag=sync on the scratch file system instead ... | "
                "udp_mbit_s computed: iperf3 {version} reports no receiver-side UDP throughput "
                "(3.11 added it), so it is (end.sum.packets - end.sum.lost_packets) x "
                "start.test_start.blksize x 8 / end.sum.seconds, the receiver's datagrams ...",
                "benchmarks dd-write, udp",
                "The benchmark measured with a fallback method; the message says which."),
    WarningKind("cleanup", WARNING, "{command} failed: {error}", "disk benchmarks",
                "Undoing a trial's set-up failed (an unmount, a removal): later trials may "
                "see what it left."),
    # -- a group of instances --------------------------------------------------------------
    WarningKind("instances_apart", WARNING,
                "in the block {metric}'s aggregate rests on, the instances started {skew} ms "
                "apart, {share} of its common interval ({interval} ms): they did not run it "
                "side by side, and the aggregate is lower for it", "instances",
                "A group's instances were told one start moment and did not keep it: the "
                "aggregate over their common interval understates them "
                "(docs/instances-and-limits.md)."),
    WarningKind("clock_uncertainty", WARNING,
                "the instances' clocks are mapped onto the host's to within ±{bound} ms, "
                "{share} of the shortest common interval ({interval} ms): the aggregate may be "
                "off by that much; larger sizes make it smaller", "instances",
                "How well the instances' clocks are known against the host's, against how "
                "short the measured interval is."),
    # -- the life cycle's costs (benchmarks boot, snapshot, migrate; virtbench density) ------
    WarningKind("boot_phase_mismatch", WARNING,
                "the phases sum to {sum} s against a total of {total} s ({pct} %): the "
                "guest's clock and the host's disagree over the boot by more than 1 %; read "
                "the phases on the guest's clock with care", "benchmark boot",
                "A boot's guest-side phases are on the guest kernel's clock, the others on the "
                "host's (docs/lifecycle.md); their sum misses the total by the guest clock's "
                "drift over the boot. More than 1 % says the guest's clock ran at another "
                "rate than the host's."),
    WarningKind("restore_broken", WARNING,
                "after a restore at mem={mem}, the guest's {what} did not work (clock rate "
                "{rate}, ping: {ping})", "benchmark snapshot",
                "A guest restored from its saved state answered its agent, but its clock did "
                "not keep time (its rate over a second off by more than 5 %) or it could not "
                "ping the host side of its network: the restore is not a working guest."),
    WarningKind("ticker_below_rate", WARNING,
                "before the migration the guest's workload wrote {share} of the {rate} MB/s "
                "asked: the guest cannot keep that rate here, so the work lost is against the "
                "rate it did keep; lower dirty_mb_s", "benchmark migrate",
                "The migration's memory-dirtying workload is paced; when the guest cannot keep "
                "its pace even before the migration, its own slack and the migration's cost "
                "mix in the work lost."),
)

CATALOGUE: dict[str, WarningKind] = {k.code: k for k in _KINDS}


def get(code: str) -> WarningKind | None:
    """The kind of `code`, or None for one this virtbench does not know (an older store's)."""
    return CATALOGUE.get(code)


GROUPED_VIEW = (
    "## The grouped view", "",
    "The terminal, Markdown and HTML reports show the warnings grouped: one line per kind, "
    "errors first, then warnings, then notes, each kind in the order it first appears. The "
    "line names how many rows (or benchmarks, or environments) the kind affects, the first "
    "few of them (`native · stream (4 metrics)`: four of that benchmark's metrics), what "
    "they say, and one piece of advice:", "",
    "```",
    "high_cv on 9 rows: native · himeno · mflops, native · stream (4 metrics), and 4 more: "
    "CV above 5 % (11.3-22.6 %); stop other work on the host while virtbench measures",
    "```", "",
    "- When every warning of the kind says the same, the line says it once; when their "
    "figures differ, it gives the kind's gist with their range (below, \"grouped\"), "
    "and the advice.",
    "- The advice is one that applies on the host that ran the baseline (its fingerprint "
    "in the JSON report's environment metadata): for `high_cv`, setting the CPU governor to "
    "performance only when that host has cpufreq (`cpufreq: true`) and its governor is "
    "another one; for `few_samples`, dropping `--quick` only when it capped the run's "
    "trials at 5.",
    "- A tool's own error line is put in words (the KVM probe's: \"KVM unusable here: "
    "QEMU's KVM probe failed (details in --verbose)\"); the raw line is the warning's "
    "`detail`.",
    "- `--verbose` (`virtbench report`, `virtbench run`) lists every warning with its "
    "details; `--quiet` prints only the header and the verdicts, and the warnings as one "
    "line of counts.",
    "- The JSON report keeps every warning (`warnings`, for machines) and adds the grouped "
    "view (`warning_groups`: kind, count, places, summary, advice, line).", "")


def doc_text() -> str:
    """docs/warnings.md."""
    out = ["# Warnings", "",
           "Every warning a report can carry (its `kind`), generated from "
           "`virtbench/core/warning_kinds.py` by `python -m virtbench.core.warning_kinds`: edit that "
           "list, not this page. The JSON report gives each warning its `severity` and "
           "`doc` (this page's anchor).", "",
           "- **error**: part of the study was not measured;",
           "- **warning**: the figures were measured, read them with care;",
           "- **note**: how something was measured, nothing wrong with the figures.", "",
           *GROUPED_VIEW]
    for k in _KINDS:
        forms = [f"> {form}" for form in k.message.split(" | ")]
        grouped = ([f"Grouped: \"{k.gist}\" with the figures' range; advice: {k.advice}.", ""]
                   if k.gist else [])
        out += [f"## {k.code}", "", f"**{k.severity}**, from {k.source}. The message:", "",
                *[x for form in forms for x in (form, ">")][:-1], "", k.meaning, "",
                *grouped]
    return "\n".join(out)


if __name__ == "__main__":
    import sys
    sys.stdout.write(doc_text())
