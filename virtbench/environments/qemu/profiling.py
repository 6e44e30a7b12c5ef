"""Exit profiles of a qemu guest (--profile exits). A mixin of class Qemu.

Under KVM the measured guest itself is profiled in its extra trial: `perf kvm stat` and the
kvm_exit tracepoint on its QEMU process, QMP query-stats before and after. Under TCG there
are no exits, only would-be exits, and counting them needs our TCG plugin loaded when QEMU
starts: a profiling twin of the guest (same options, plugin added) is booted once, the
measured guest is paused while the twin runs, and each profiled trial is the difference of
two snapshots of the plugin's counts, so the twin's boot does not count. Guest addresses are
symbolised with the guest's own /proc/kallsyms, read in the same boot."""
from __future__ import annotations

from ...capabilities import can
from ...errors import AgentError, VirtbenchError
from ...profile.model import Profile


class ExitProfiling:
    """What class Qemu does for --profile exits."""

    _twin = None           # the profiling twin under TCG, booted at the first profiled trial

    def _exit_profile_answer(self):
        accel = self.accel or self.values["accel"]
        if accel == "kvm":
            return can("kvm: perf kvm stat, kvm_exit by guest RIP, QMP query-stats")
        if accel == "tcg":
            return can("tcg: would-be exits counted by our TCG plugin in a profiling twin")
        return can("kvm or tcg, as the accelerator probe decides")

    def _kallsyms(self, env) -> str:
        res = env.exec(["cat", "/proc/kallsyms"], timeout=60)
        if res.exit != 0 or not res.stdout.strip():
            raise AgentError(f"{self.label}: reading the guest's /proc/kallsyms failed")
        return res.stdout

    def profiled_trial(self, bench, params: dict):
        self.resolve()
        if self.accel == "kvm":
            return self._profile_kvm(bench, params)
        return self._profile_tcg(bench, params)

    # -- KVM ---------------------------------------------------------------------------------
    def _profile_kvm(self, bench, params: dict):
        from ...profile import kvm, symbols
        if self.proc is None or self.qmp is None or self.workdir is None:
            raise VirtbenchError(f"{self.label}: profiled trial before start")
        table = symbols.parse_kallsyms(self._kallsyms(self))
        workdir = self.workdir / "kvm-profile"
        workdir.mkdir(exist_ok=True)
        profiler = kvm.KvmProfiler(kvm.SubprocessExecutor(), workdir,
                                   symbolise=lambda addr: symbols.function_and_caller(table, addr))
        profiler.check()
        cmd = kvm.query_stats_command()
        before = self.qmp.command(cmd["execute"], **cmd["arguments"])
        session = profiler.start(self.proc.pid, tids=self.vcpu_threads())
        try:
            outcome = bench.run_trial(self, params)
        finally:
            after = self.qmp.command(cmd["execute"], **cmd["arguments"])
            profile = profiler.stop(session, qmp_before=before, qmp_after=after)
        return outcome, profile

    # -- TCG ---------------------------------------------------------------------------------
    def _profile_tcg(self, bench, params: dict) -> tuple[object, Profile]:
        raise VirtbenchError(f"{self.label}: TCG exit profiles are not available yet")

    def end_profiling(self) -> None:
        twin, self._twin = self._twin, None
        if twin is not None:
            twin.stop()
