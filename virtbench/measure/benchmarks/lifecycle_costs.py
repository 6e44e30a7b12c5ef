"""The life cycle's costs, beyond steady state: how fast an environment starts (boot, cut
into phases), how much host memory it takes (footprint), how long a snapshot takes to save
and restore (snapshot), and what a live migration costs the workload (migrate).

Each asks the environment for what only it can do (a capability: boot_phases, footprint,
snapshot, migrate) and turns the answer into metrics; what the answer says beyond them goes
into the trial's detail, where the report's lifecycle section reads it (docs/lifecycle.md).
"""
from __future__ import annotations

import re

from ...core.errors import AgentError, VirtbenchError
from ...core.outcome import Metric, TrialOutcome
from .base import Benchmark

PHASE_WORDS = {
    "vmm_s": "VMM process start to the firmware's first output (or, without one, to the "
             "guest kernel's clock zero)",
    "firmware_s": "the firmware's first output to the guest kernel's clock zero",
    "kernel_s": "the guest kernel's clock zero to 'Run /init as init process'",
    "initramfs_s": "/init to the real root mounted (before switch_root)",
    "init_s": "switch_root to the agent's service starting (busybox init, rc)",
    "runtime_s": "the engine's run to the container's first process exec'd (a sandbox: to "
                 "its kernel's clock zero)",
    "sandbox_s": "the sandbox kernel's clock zero to the first process exec'd (gVisor)",
    "agent_s": "the agent's process starting to its first answer",
}
MISMATCH_LIMIT_PCT = 1.0     # phases must sum to the total within this
RATE_KEPT = 0.9              # the migration's workload kept at least this share of its rate


class _Lifecycle(Benchmark):
    family = "lifecycle"

    def timeout(self, params):
        return 900.0

    def argv(self, params, env):
        raise NotImplementedError(f"{self.name} runs through the environment, not a command")

    def measure(self, env, params) -> TrialOutcome:
        raise NotImplementedError

    def run_trial(self, env, params, start_at=None, slot_s=None) -> TrialOutcome:
        """Failure is an outcome: what the environment could not do is the trial's error."""
        try:
            return self.measure(env, params)
        except (VirtbenchError, OSError) as exc:
            return TrialOutcome(error=str(exc))
        except AgentError as exc:
            return TrialOutcome(error=f"agent lost: {exc}")


class Boot(_Lifecycle):
    name = "boot"
    description = ("a fresh copy of the environment started and its start cut into phases "
                   "on the host's and the guest's clocks (docs/lifecycle.md)")
    metrics = tuple(Metric(name, "s", False, words) for name, words in PHASE_WORDS.items()) \
        + (Metric("to_kernel_s", "s", False, "VMM process start to the guest kernel's clock "
                  "zero (vmm + firmware): the firmware's share, also where the firmware "
                  "prints nothing (OVMF)"),
           Metric("total_s", "s", False, "VMM process (or engine) start to the agent's first "
                  "answer, on the host's clock"),)
    needs = ("boot_phases",)

    def measure(self, env, params) -> TrialOutcome:
        phases = env.measure_boot()
        out = TrialOutcome(values=phases.values(), wall_s=phases.total_s)
        out.detail = {"boot": {**phases.detail, "order": list(phases.phases),
                               "sum_s": phases.sum_s, "mismatch_pct": phases.mismatch_pct}}
        if abs(phases.mismatch_pct) > MISMATCH_LIMIT_PCT:
            out.warnings.append(("boot_phase_mismatch", (
                f"the phases sum to {phases.sum_s:.3f} s against a total of "
                f"{phases.total_s:.3f} s ({phases.mismatch_pct:+.1f} %): the guest's clock and "
                "the host's disagree over the boot by more than 1 %; read the phases on the "
                "guest's clock with care")))
        return out


class FootprintBenchmark(_Lifecycle):
    name = "footprint"
    description = ("host memory of the running environment: PSS and USS of its VMM's or "
                   "sandbox's processes, the guest's RAM the host backs, the VMM's own "
                   "overhead (docs/lifecycle.md)")
    metrics = (
        Metric("pss_mib", "MiB", False, "PSS of its host processes (smaps_rollup)"),
        Metric("uss_mib", "MiB", False, "USS (private pages) of its host processes"),
        Metric("rss_mib", "MiB", False, "RSS of its host processes"),
        Metric("guest_resident_mib", "MiB", False, "guest RAM the host backs (a VM's RAM "
               "mapping; a sandbox's memory file; a container's own processes)"),
        Metric("overhead_mib", "MiB", False, "PSS minus the guest's part: the VMM's or the "
               "sandbox's own memory"),
        Metric("overhead_no_tcg_mib", "MiB", False, "a TCG guest's overhead without TCG's "
               "translation cache (what it would be under KVM, roughly)"),
    )
    needs = ("footprint",)

    def measure(self, env, params) -> TrialOutcome:
        fp = env.footprint()
        out = TrialOutcome(values=fp.values())
        out.detail = {"footprint": {**fp.detail, "tcg_buffer_mib": fp.tcg_buffer / 2**20,
                                    "swap_mib": fp.swap / 2**20,
                                    "anon_huge_mib": fp.anon_huge / 2**20}}
        return out


def _check_mem(name: str, params: dict) -> None:
    if params["mem"] and not re.fullmatch(r"\d+[MG]", params["mem"]):
        raise VirtbenchError(f"benchmark {name}: mem={params['mem']} is not a size; write "
                             "e.g. mem=512M or mem=2G (empty: the environment's own)")


class Snapshot(_Lifecycle):
    name = "snapshot"
    description = ("save a running guest's state to a file and restore it until its agent "
                   "answers (a twin at memory size mem), then check its clock and network")
    metrics = (
        Metric("save_s", "s", False, "stop to the state written (QMP migrate to a file)"),
        Metric("save_mib", "MiB", False, "size of the state file"),
        Metric("save_s_per_gib", "s/GiB", False, "save_s per GiB of guest RAM"),
        Metric("restore_load_s", "s", False, "a new VMM started to its state loaded"),
        Metric("restore_s", "s", False, "a new VMM started to the restored guest's agent "
               "answering"),
        Metric("restore_s_per_gib", "s/GiB", False, "restore_s per GiB of guest RAM"),
        Metric("clock_lag_s", "s", False, "how far the restored guest's wall clock fell "
               "behind the host's over the save and restore"),
    )
    needs = ("snapshot",)
    defaults = {"mem": "", "fill_mib": 64}
    quick = {"fill_mib": 16}

    def check(self, params):
        _check_mem(self.name, params)
        if not 0 <= params["fill_mib"] <= 65536:
            raise VirtbenchError("benchmark snapshot: fill_mib from 0 to 65536")

    def measure(self, env, params) -> TrialOutcome:
        got = env.snapshot_cycle(params)
        out = TrialOutcome(values=got["values"], wall_s=got["values"].get("save_s"))
        out.detail = {"snapshot": got["detail"]}
        d = got["detail"]
        if not d.get("clock_ok") or not d.get("net_ok"):
            out.warnings.append(("restore_broken", (
                f"after a restore at mem={d.get('mem')}, the guest's "
                + " and ".join(w for w, ok in (("clock", d.get("clock_ok")),
                                               ("network", d.get("net_ok"))) if not ok)
                + f" did not work (clock rate {d.get('clock_rate')}, ping: {d.get('net')})")))
        return out


class Migrate(_Lifecycle):
    name = "migrate"
    description = ("live migration of a running guest to a second VMM on this host under a "
                   "memory-dirtying workload: QEMU's total time and downtime, the downtime "
                   "the guest's ticker shows and the work it lost")
    metrics = (
        Metric("total_s", "s", False, "migration start to its end (QEMU's total-time)"),
        Metric("downtime_s", "s", False, "the guest stopped, as QEMU reports it"),
        Metric("downtime_guest_s", "s", False, "the largest gap in the guest ticker's lines "
               "as the host received them"),
        Metric("work_lost_s", "s", False, "the workload's pages not written during the "
               "migration, in seconds of its rate before it (PerfKitBenchmarker's "
               "disruption)"),
        Metric("setup_s", "s", False, "QEMU's setup time"),
        Metric("transferred_mib", "MiB", False, "bytes of RAM sent"),
        Metric("dirty_rate_mib_s", "MiB/s", False, "the dirty rate QEMU measured"),
    )
    needs = ("migrate",)
    # 8 MB/s: a rate a Python loop in a TCG guest keeps on a busy host, so that the work it
    # loses is the migration's, not its own falling behind (raise it on KVM)
    defaults = {"mem": "", "dirty_mb_s": 8, "buffer_mib": 128, "tick_ms": 2,
                "bandwidth_mib_s": 0, "downtime_ms": 0, "mode": "precopy",
                "before_s": 3.0, "after_s": 2.0, "max_s": 120.0}
    quick = {"buffer_mib": 64, "before_s": 2.0, "after_s": 1.0}

    def check(self, params):
        _check_mem(self.name, params)
        if params["mode"] not in ("precopy", "postcopy"):
            raise VirtbenchError("benchmark migrate: mode=precopy or mode=postcopy")
        for key, low, high in (("dirty_mb_s", 0, 100000), ("buffer_mib", 1, 65536),
                               ("tick_ms", 1, 1000), ("bandwidth_mib_s", 0, 100000),
                               ("downtime_ms", 0, 600000)):
            if not low <= params[key] <= high:
                raise VirtbenchError(f"benchmark migrate: {key} from {low} to {high}")
        for key in ("before_s", "after_s", "max_s"):
            if not 0 < params[key] <= 3600:
                raise VirtbenchError(f"benchmark migrate: {key} above 0, at most 3600")

    def measure(self, env, params) -> TrialOutcome:
        got = env.migrate_cycle(params)
        d = got["detail"]
        if not d.get("converged"):
            return TrialOutcome(error=(
                f"the migration did not converge in {params['max_s']:g} s (status "
                f"{d.get('status')}); raise bandwidth_mib_s or downtime_ms, lower "
                "dirty_mb_s, or use mode=postcopy"), detail={"migrate": d})
        out = TrialOutcome(values=got["values"], wall_s=got["values"].get("total_s"))
        out.detail = {"migrate": d}
        asked = params["dirty_mb_s"] * 1e6 / 4096
        kept = (d.get("rate_pages_s") or 0.0) / asked if asked else 1.0
        if kept < RATE_KEPT:
            out.warnings.append(("ticker_below_rate", (
                f"before the migration the guest's workload wrote {kept:.0%} of the "
                f"{params['dirty_mb_s']} MB/s asked: the guest cannot keep that rate here, "
                "so the work lost is against the rate it did keep; lower dirty_mb_s")))
        return out
