"""Exit profiles of a qemu guest (--profile exits): a collaborator the environment makes at its
first profiled trial and releases after the profiles (or at stop).

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
from typing import Callable

from ....machinery.machine import meminfo as host_meminfo
from ....core.capabilities import Answer, can
from ....core.errors import AgentError, VirtbenchError
from ....machinery.exits.exit_profile import ExitProfile
from ..capacity import twin_memory_refusal
from .vmm import version


def exit_profile_answer(accel: str) -> Answer:
    """What --profile exits measures for a guest under `accel` (kvm, tcg or auto)."""
    if accel == "kvm":
        return can("kvm: perf kvm stat, kvm_exit by guest RIP, QMP query-stats")
    if accel == "tcg":
        return can("tcg: would-be exits counted by our TCG plugin in a profiling twin")
    return can("kvm or tcg, as the accelerator probe decides")


def kallsyms(env, label: str) -> str:
    """The guest's /proc/kallsyms, read through `env`'s agent."""
    from ....machinery.exits.tcg import KALLSYMS_ARGV
    res = env.exec(KALLSYMS_ARGV, timeout=60)
    if res.exit != 0 or not res.stdout.strip():
        raise AgentError(f"{label}: reading the guest's /proc/kallsyms failed")
    return res.stdout


class ExitProfiler:
    """Profiled trials of one measured guest. It is given the guest (to run the trial in,
    pause and resume, read kallsyms from), its VMM (pid, QMP, vCPU threads), its work
    directory, and a factory of unstarted twins (the same spec with extra QEMU arguments)."""

    def __init__(self, measured, vmm, work, make_twin: Callable[[list[str]], object]):
        self.measured, self.vmm, self.work, self.make_twin = measured, vmm, work, make_twin
        self.label = measured.label
        self._twin = None
        self._session = None
        self._twin_kallsyms: str | None = None
        self._twin_error: str | None = None

    def profiled_trial(self, bench, params: dict, accel: str):
        if accel == "kvm":
            return self._kvm(bench, params)
        return self._tcg(bench, params)

    # -- KVM ---------------------------------------------------------------------------------
    def _kvm(self, bench, params: dict):
        from ....machinery.exits import kvm, symbols
        if self.vmm is None or self.vmm.pid is None or self.vmm.qmp is None or self.work is None:
            raise VirtbenchError(f"{self.label}: profiled trial before start")
        table = symbols.parse_kallsyms(kallsyms(self.measured, self.label))
        workdir = self.work.path / "kvm-profile"
        workdir.mkdir(exist_ok=True)
        profiler = kvm.KvmProfiler(kvm.HostCommands(self.measured.host), workdir,
                                   symbolise=lambda addr: symbols.function_or_user_space(table, addr))
        profiler.check()
        cmd = kvm.query_stats_command()
        qmp = self.vmm.qmp
        # perf records from the moment start() returns; KVM's counters are read inside the
        # same window, so both count the exits of the trial and little else
        session = profiler.start(self.vmm.pid, tids=self.vmm.vcpu_threads())
        before = after = None
        try:
            before = qmp.command(cmd["execute"], **cmd["arguments"])
            outcome = bench.run_trial(self.measured, params)
            after = qmp.command(cmd["execute"], **cmd["arguments"])
        finally:
            profile = profiler.stop(session, qmp_before=before, qmp_after=after)
        return outcome, profile

    # -- TCG ---------------------------------------------------------------------------------
    def twin_memory_refusal(self, meminfo: str | None = None) -> str | None:
        """Why the host cannot hold a profiling twin beside this (paused) guest, or None: the
        twin holds a second copy of the guest's RAM for as long as the profiles take."""
        if meminfo is None:
            meminfo = host_meminfo.host_text() or ""
        return twin_memory_refusal(self.label, self.measured.host_memory_reserved(),
                                   host_meminfo.available(meminfo))

    def twin(self):
        """The same guest booted with our plugin (once; a failed boot is not retried)."""
        if self._twin_error:
            raise VirtbenchError(self._twin_error)
        if self._twin is None:
            from ....machinery.exits import tcg
            refusal = self.twin_memory_refusal()
            if refusal:
                raise VirtbenchError(refusal)     # stored as this profile's failure, not retried
            print(f"  booting a profiling twin of {self.label} (our TCG plugin loaded; "
                  "a profiled boot takes about twice as long)", file=sys.stderr, flush=True)
            twin = None
            try:
                qemu = getattr(self.measured, "qemu", None)    # (the environment's QEMU)
                self._session = tcg.TcgSession(
                    qemu=qemu.path if qemu is not None else version.qemu_binary(),
                    workdir=self.work.private_dir("vbexits-"),
                    qemu_env=qemu.process_env() if qemu is not None else None,
                    qemu_args=qemu.data_argv() if qemu is not None else ())
                twin = self.make_twin(list(self._session.argv))
                twin.start()
                self._twin_kallsyms = kallsyms(twin, self.label)   # in the same boot (KASLR)
            except (VirtbenchError, AgentError, OSError) as exc:
                if twin is not None:
                    twin.stop()
                self._twin_error = f"the profiling twin of {self.label} did not come up: {exc}"
                raise VirtbenchError(self._twin_error) from None
            self._twin = twin
        return self._twin

    def _tcg(self, bench, params: dict) -> tuple[object, ExitProfile]:
        from ....machinery.exits import tcg
        twin = self.twin()
        self.measured.pause()              # the measured guest waits while its twin runs
        try:
            self._session.mark()
            t0 = time.monotonic()
            outcome = bench.run_trial(twin, params)
            duration = time.monotonic() - t0
            counts = self._session.since_mark()
        finally:
            self.measured.resume()
        return outcome, tcg.to_profile(counts, self._twin_kallsyms, duration)

    def end(self) -> None:
        """Let go of the twin and the plugin's session; idempotent."""
        twin, self._twin = self._twin, None
        if twin is not None:
            twin.stop()
        session, self._session = self._session, None
        if session is not None:
            session.close()
        self._twin_kallsyms = self._twin_error = None
