"""The outer guest's reading of a failed step (no guest booted): an inner KVM guest that
reset while booting is told apart from any other failure, so that step runs once more."""
import pytest
from outer import CommandFailed, InnerGuestReset, OuterGuest

from virtbench.machinery.agent.transport import ExecResult

# virtbench run's stderr as rich printed it at 160 columns (CI's nested run, the message
# as virtbench now words it), the wrap inside the line included
RESET = ("environment qemu-kvm/virtio-blk/virtio-net/clocksource=acpi_pm failed to start: "
         "qemu-kvm/virtio-blk/virtio-net/clocksource=acpi_pm: QEMU failed to start: QEMU\n"
         "exited (status 0): the guest reset or powered off while booting (-no-reboot ends "
         "QEMU then); console log:\n/root/.cache/virtbench/logs/20261125-165121-qemu-kvm_"
         "virtio-blk_virtio-net_clocksource=acpi_pm-console.log\n")


def result(stderr: str) -> ExecResult:
    return ExecResult(exit=1, stdout="", stderr=stderr, wall_s=1.0)


def test_an_inner_reset_is_its_own_failure_with_the_inner_console(monkeypatch):
    guest = OuterGuest()
    asked = []

    def sh(script, timeout=120, check=True):
        asked.append(script)
        return ExecResult(exit=0, stdout="[    2.1] SVM: kvm: nested vmexit\n", stderr="",
                          wall_s=0.1)
    monkeypatch.setattr(guest, "sh", sh)
    exc = guest.failed("virtbench run acpi", result(RESET))
    assert isinstance(exc, InnerGuestReset)
    assert asked == ["tail -n 40 /root/.cache/virtbench/logs/20261125-165121-qemu-kvm_"
                     "virtio-blk_virtio-net_clocksource=acpi_pm-console.log"]
    assert "the inner guest's console's last lines:\n[    2.1] SVM" in str(exc)


def test_any_other_failure_is_not_retried():
    guest = OuterGuest()
    exc = guest.failed("virtbench run acpi", result("1 trial(s) failed: exit status 1"))
    assert type(exc) is CommandFailed and "exited 1" in str(exc)


def test_a_second_reset_fails_the_step(monkeypatch):
    guest = OuterGuest()
    monkeypatch.setattr(guest, "sh", lambda *a, **k: ExecResult(0, "", "", 0.1))
    calls = []

    def step():
        calls.append(1)
        raise guest.failed("virtbench run acpi", result(RESET))
    with pytest.warns(UserWarning, match="an inner KVM guest reset while booting"):
        with pytest.raises(InnerGuestReset):
            guest.again_if_lost(step)
    assert len(calls) == 2


class _Agent:
    """The outer guest's agent as a step meets it: each exec raises the next error given."""

    def __init__(self, *errors):
        self.errors, self.asked = list(errors), []

    def exec(self, argv, timeout, env=None, alive=None):
        self.asked.append((argv[-1], alive))
        raise self.errors.pop(0)


def test_a_silent_or_closed_agent_is_a_lost_guest_a_late_reply_is_not(monkeypatch):
    from outer import ALIVE_S, OuterGuestLost

    from virtbench.core.errors import AgentError, AgentSilent
    guest = OuterGuest()
    monkeypatch.setattr(guest, "lost", lambda: "QEMU is running; console: (quiet)")
    guest.env.agent = _Agent(AgentSilent("outer: no sign of life for 120 s"),
                             AgentError("outer: connection closed"),
                             AgentError("outer: no answer in time"))
    for said in ("no sign of life", "connection closed"):
        guest.is_lost = False
        with pytest.raises(OuterGuestLost, match=said + ".*during 'capture'.*QEMU is running"):
            guest.sh("capture", timeout=900)
        assert guest.is_lost
    guest.is_lost = False
    with pytest.raises(AgentError, match="no answer in time") as late:
        guest.sh("capture", timeout=900)
    assert type(late.value) is AgentError and not guest.is_lost
    assert guest.env.agent.asked == [("capture", ALIVE_S)] * 3      # every exec asks for beats


def test_a_guest_lost_by_an_earlier_step_is_booted_again_before_the_next(monkeypatch):
    guest = OuterGuest()
    boots = []
    monkeypatch.setattr(guest, "stop", lambda: boots.append("stop"))
    monkeypatch.setattr(guest.env, "start", lambda: boots.append("start"))
    assert guest.again_if_lost(lambda: "ran") == "ran" and boots == []
    guest.is_lost = True
    assert guest.again_if_lost(lambda: "ran") == "ran"
    assert boots == ["stop", "start"] and not guest.is_lost


def test_a_step_killed_at_its_limit_is_said_with_the_guests_processes_and_tried_again(
        monkeypatch):
    from outer import DIAGNOSE, StepHung
    guest = OuterGuest()
    asked, boots, calls = [], [], []

    def sh(script, timeout=120, check=True):
        asked.append(script)
        return ExecResult(0, "  412 D  kvm_vcpu_block  qemu-system-x86_64 -accel kvm\n", "", 1)
    monkeypatch.setattr(guest, "sh", sh)
    monkeypatch.setattr(guest, "stop", lambda: boots.append("stop"))
    monkeypatch.setattr(guest.env, "start", lambda: boots.append("start"))
    hung = ExecResult(exit=-9, stdout="", stderr="capture_kvm:   12.0 s a profiled trial\n",
                      wall_s=600.2, timed_out=True)
    exc = guest.failed("capture_kvm.py", hung)
    assert type(exc) is StepHung and asked == [DIAGNOSE]
    assert "killed at its limit after 600 s" in str(exc) and "kvm_vcpu_block" in str(exc)
    assert "a profiled trial" in str(exc)

    def step():
        calls.append(1)
        if len(calls) == 1:
            raise guest.failed("capture_kvm.py", hung)
        return "captured"
    with pytest.warns(UserWarning, match="a step hung in the outer guest"):
        assert guest.again_if_lost(step) == "captured"
    assert boots == ["stop", "start"] and len(calls) == 2
