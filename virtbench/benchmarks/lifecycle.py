"""The life cycle's costs, beyond steady state: how fast an environment starts (boot, cut
into phases), how much host memory it takes (footprint), how long a snapshot takes to save
and restore (snapshot), and what a live migration costs the workload (migrate).

Each asks the environment for what only it can do (a capability: boot_phases, footprint,
snapshot, migrate) and turns the answer into metrics; what the answer says beyond them goes
into the trial's detail, where the report's lifecycle section reads it (docs/lifecycle.md).
"""
from __future__ import annotations

from ..errors import AgentError, VirtbenchError
from ..outcome import Metric, TrialOutcome
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
        + (Metric("total_s", "s", False, "VMM process (or engine) start to the agent's first "
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


class Footprint(_Lifecycle):
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
