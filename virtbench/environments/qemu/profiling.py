"""Exit profiles of a qemu guest (--profile exits). A mixin of class Qemu.

Under KVM the measured guest itself is profiled in its extra trial: `perf kvm stat` and the
kvm_exit tracepoint on its QEMU process, QMP query-stats before and after. Under TCG there
are no exits, only would-be exits, and counting them needs our TCG plugin loaded when QEMU
starts: a profiling twin of the guest (same options, plugin added) is booted once, the
measured guest is paused while the twin runs, and each profiled trial is the difference of
two snapshots of the plugin's counts, so the twin's boot does not count. Guest addresses are
symbolised with the guest's own /proc/kallsyms, read in the same boot."""
from __future__ import annotations

import sys
import time

from ...capabilities import can
from ... import meminfo as host_meminfo
from ..capacity import twin_memory_refusal
from ...errors import AgentError, VirtbenchError
from ...guest import watch
from ...profile.model import Profile
from . import version


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
        from ...profile.tcg import KALLSYMS_ARGV
        res = env.exec(KALLSYMS_ARGV, timeout=60)
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
        profiler = kvm.KvmProfiler(kvm.HostCommands(self.host), workdir,
                                   symbolise=lambda addr: symbols.function_or_user_space(table, addr))
        profiler.check()
        cmd = kvm.query_stats_command()
        # perf records from the moment start() returns; KVM's counters are read inside the
        # same window, so both count the exits of the trial and little else
        session = profiler.start(self.proc.pid, tids=self.vcpu_threads())
        before = after = None
        try:
            before = self.qmp.command(cmd["execute"], **cmd["arguments"])
            outcome = bench.run_trial(self, params)
            after = self.qmp.command(cmd["execute"], **cmd["arguments"])
        finally:
            profile = profiler.stop(session, qmp_before=before, qmp_after=after)
        return outcome, profile

    # -- TCG ---------------------------------------------------------------------------------
    _tcg_session = None
    _twin_kallsyms: str | None = None
    _twin_error: str | None = None

    def _twin_memory_refusal(self, meminfo: str | None = None) -> str | None:
        """Why the host cannot hold a profiling twin beside this (paused) guest, or None: the
        twin holds a second copy of the guest's RAM for as long as the profiles take."""
        if meminfo is None:
            meminfo = host_meminfo.host_text() or ""
        return twin_memory_refusal(self.label, self.host_memory_reserved(),
                                   host_meminfo.available(meminfo))

    def _profiling_twin(self):
        """The same guest booted with our plugin (once; a failed boot is not retried)."""
        if self._twin_error:
            raise VirtbenchError(self._twin_error)
        if self._twin is None:
            from ...profile import tcg
            refusal = self._twin_memory_refusal()
            if refusal:
                raise VirtbenchError(refusal)     # stored as this profile's failure, not retried
            twin = type(self)(self.spec)
            twin.net_index = self.net_index
            print(f"  booting a profiling twin of {self.label} (our TCG plugin loaded; "
                  "a profiled boot takes about twice as long)", file=sys.stderr, flush=True)
            try:
                self._tcg_session = tcg.TcgSession(qemu=version.qemu_binary(),
                                                   workdir=self._private_dir("vbexits-"))
                twin.extra_argv = list(self._tcg_session.argv)
                twin.start()
                self._twin_kallsyms = self._kallsyms(twin)   # in the same boot (KASLR)
            except (VirtbenchError, AgentError, OSError) as exc:
                twin.stop()
                self._twin_error = f"the profiling twin of {self.label} did not come up: {exc}"
                raise VirtbenchError(self._twin_error) from None
            self._twin = twin
        return self._twin

    def _private_dir(self, prefix: str):
        """A directory in the work root that this guest's guardian (and, after a crash, the
        next run's sweep) removes: listed in this guest's manifest, with a manifest of its own."""
        d = watch.private_dir(prefix)
        self._manifest.setdefault("dirs", []).append(str(d))
        self._save_manifest()
        return d

    def _profile_tcg(self, bench, params: dict) -> tuple[object, Profile]:
        from ...profile import tcg
        twin = self._profiling_twin()
        self.pause()                       # the measured guest waits while its twin runs
        try:
            self._tcg_session.mark()
            t0 = time.monotonic()
            outcome = bench.run_trial(twin, params)
            duration = time.monotonic() - t0
            counts = self._tcg_session.since_mark()
        finally:
            self.resume()
        return outcome, tcg.to_profile(counts, self._twin_kallsyms, duration)

    def end_profiling(self) -> None:
        twin, self._twin = self._twin, None
        if twin is not None:
            twin.stop()
        session, self._tcg_session = self._tcg_session, None
        if session is not None:
            session.close()
        self._twin_kallsyms = self._twin_error = None
