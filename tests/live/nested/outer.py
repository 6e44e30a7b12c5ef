"""The outer guest of the nested tests: virtbench's host image (`image build --variant host`)
booted under TCG with AMD-V exposed (`-cpu EPYC,+svm`, 2 vCPUs, 2 GiB), reached as the qemu
kind reaches any guest, through its agent. Inside it /dev/kvm works (kvm_amd, nested SVM), so
virtbench run there drives real KVM guests.
"""
from __future__ import annotations

import json
import re
import shlex
import time
import warnings
from typing import Callable, TypeVar

from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu import Qemu
from virtbench.measure.environments.qemu.vmm.process import console_text
from virtbench.core.errors import AgentError, AgentSilent
from virtbench.machinery.image import host_image
from virtbench.execution.run.keeper import still_alive_after_loss
from virtbench.machinery.agent.transport import ExecResult

SPEC = "qemu:accel=tcg,vcpus=2,mem=2G,boot_timeout=300"
CPU = "EPYC,+svm"          # TCG emulates AMD-V (SVM, NPT); it cannot emulate Intel VMX
PYTHON = f"{host_image.VENV}/bin/python"
STORE = "sqlite:////root/nested.db"
ENV = {"PATH": "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
       "VIRTBENCH_CACHE": host_image.GUEST_CACHE, "VIRTBENCH_STORE": STORE,
       "COLUMNS": "160", "LC_ALL": "C.UTF-8"}


# The outer guest's agent says it is alive every ALIVE_S / 4 s of a silent command; heard
# from for ALIVE_S s, the outer guest has stopped (CI saw both its vCPUs spin for an hour
# with nothing on its console and no agent, TCG emulating the SVM its KVM runs on): it is
# lost, booted again and the step tried once more, instead of a wait to the command's limit.
ALIVE_S = 120

T = TypeVar("T")


class CommandFailed(AssertionError):
    pass


class OuterGuestLost(AssertionError):
    """The outer guest stopped answering: why (QEMU's status, a panic) and its console's end."""


class InnerGuestReset(CommandFailed):
    """A KVM guest inside the outer guest ended while it booted (CI saw one reset once: TCG
    emulates the SVM that nested KVM runs on); the outer guest is fine."""


class StepHung(CommandFailed):
    """A command in the outer guest ran to its time limit (the agent killed it), its guest
    still answering: something in it hung (here once: capture_kvm.py, which takes 70-135 s,
    killed at 900 s). Said with what the outer guest's processes and kernel were doing."""


INNER_RESET = "QEMU failed to start: QEMU exited (status 0)"
# What was going on in the outer guest when a command hung: every process that is not a
# kernel thread, the kernel stacks of QEMU's, perf's and Python's threads, the kernel's end.
DIAGNOSE = r"""ps -eo pid,ppid,stat,etime,wchan:28,args | grep -v ' \[' | cut -c1-220
for p in $(pgrep -f 'qemu-system|perf|python'); do
  for t in /proc/$p/task/*; do
    echo "== $p $(cat /proc/$p/comm) task ${t##*/} $(cut -d' ' -f3 $t/stat 2>/dev/null)"
    head -6 $t/stack 2>/dev/null
  done
done
dmesg | tail -n 30"""


class OuterGuest:
    def __init__(self):
        self.env = Qemu(EnvSpec.parse(SPEC))
        self.env.image_variant = "host"
        self.env.cpu = CPU
        self.log: list[tuple[str, float, int]] = []     # (command, seconds, exit)
        self.is_lost = False       # lost in a step that was not tried again: boot anew first

    def start(self) -> None:
        self.env.start()
        self.is_lost = False

    def stop(self) -> None:
        self.env.stop()

    def again_if_lost(self, step: Callable[[], T]) -> T:
        """step(), and once more if the outer guest itself was lost during it (on a freshly
        booted one: CI saw its agent's connection close once, during capture_kvm.py) or an
        inner KVM guest reset while booting (CI saw that once too; TCG emulates the SVM that
        the nested KVM uses). The loss or reset, with QEMU's status and the console's end,
        is a warning in pytest's summary; a second one fails the test. A guest lost by an
        earlier step (whose test failed) is booted again before this one starts."""
        if self.is_lost:
            self.stop()
            self.start()
        try:
            return step()
        except OuterGuestLost as exc:
            warnings.warn(f"the outer guest was lost; booted again for one more try: {exc}")
            self.stop()
            self.start()
            return step()
        except InnerGuestReset as exc:
            warnings.warn(f"an inner KVM guest reset while booting; one more try: {exc}")
            return step()
        except StepHung as exc:
            warnings.warn(f"a step hung in the outer guest; booted again for one more try: "
                          f"{exc}")
            self.stop()
            self.start()
            return step()

    def failed(self, script: str, res: ExecResult) -> CommandFailed:
        """`script` exited non-zero: InnerGuestReset when an inner guest reset at boot (with
        its console's end, read from the log virtbench kept), CommandFailed otherwise."""
        text = f"in the outer guest: {script!r} exited {res.exit}\n" \
               f"stdout: {res.stdout[-3000:]}\nstderr: {res.stderr[-3000:]}"
        if res.timed_out:
            seen = self.sh(DIAGNOSE, timeout=120, check=False)
            return StepHung(f"{text}\nkilled at its limit after {res.wall_s:.0f} s; the outer "
                            f"guest then:\n{seen.stdout[-6000:]}")
        out = " ".join((res.stdout + " " + res.stderr).split())    # rich wraps long lines
        if INNER_RESET not in out:
            return CommandFailed(text)
        logs = re.findall(r"console log: (\S+-console\.log)", out)
        if logs:
            tail = self.sh(f"tail -n 40 {shlex.quote(logs[-1])}", check=False).stdout
            text += f"\nthe inner guest's console's last lines:\n{tail}"
        return InnerGuestReset(text)

    def lost(self, lines: int = 40) -> str:
        """Why the outer guest went away and the last `lines` of its serial console."""
        vmm = self.env.vmm
        still_alive_after_loss(self.env)
        tail = console_text(vmm.console_log).splitlines()[-lines:]
        return vmm.lost_reason() + "\nits console's last lines:\n" + "\n".join(tail)

    @property
    def boot_s(self) -> float | None:
        return self.env.boot_s

    def sh(self, script: str, timeout: float = 120, check: bool = True) -> ExecResult:
        """`sh -c script` in the outer guest, bounded by `timeout`."""
        t0 = time.monotonic()
        try:
            res = self.env.agent.exec(["sh", "-c", script], timeout=timeout, env=ENV,
                                      alive=ALIVE_S)
        except AgentError as exc:
            raise self._lost(exc, script, t0) from exc
        self.log.append((script[:80], round(time.monotonic() - t0, 1), res.exit))
        if check and res.exit != 0:
            raise self.failed(script, res)
        return res

    def virtbench(self, *args: str, timeout: float = 600, check: bool = True) -> ExecResult:
        return self.sh("virtbench " + " ".join(shlex.quote(a) for a in args), timeout, check)

    def python(self, path: str, *args: str, timeout: float = 600) -> ExecResult:
        return self.sh(" ".join(shlex.quote(a) for a in (PYTHON, path, *args)), timeout)

    def _lost(self, exc: AgentError, what: str, t0: float, transfer: bool = False) -> AgentError:
        """OuterGuestLost when `exc` says the guest went away (its connection closed) or
        stopped (its agent silent for ALIVE_S s, or no answer to a file transfer); `exc`
        itself otherwise (an exec's reply late beyond its own limit: not retried)."""
        text = str(exc)
        late = transfer and "no answer in time" in text
        if "connection" not in text and not isinstance(exc, AgentSilent) and not late:
            return exc
        self.is_lost = True
        return OuterGuestLost(f"{exc} during {what[:120]!r} after "
                              f"{time.monotonic() - t0:.0f} s: {self.lost()}")

    def put(self, path: str, data: bytes, mode: int = 0o644) -> None:
        t0 = time.monotonic()
        try:
            self.env.agent.put(path, data, mode=mode)
        except AgentError as exc:
            raise self._lost(exc, f"put {path}", t0, transfer=True) from exc

    def get(self, path: str) -> bytes:
        t0 = time.monotonic()
        try:
            return self.env.agent.get(path, timeout=120)
        except AgentError as exc:
            raise self._lost(exc, f"get {path}", t0, transfer=True) from exc

    def get_dir(self, path: str, names: list[str]) -> dict[str, str]:
        return {n: self.get(f"{path}/{n}").decode() for n in names}

    def report_json(self, run_id: str = "") -> dict:
        res = self.virtbench("report", *([run_id] if run_id else []), "--format", "json",
                             timeout=300)
        return json.loads(res.stdout)
