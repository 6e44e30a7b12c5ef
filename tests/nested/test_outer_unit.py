"""The outer guest's reading of a failed step (no guest booted): an inner KVM guest that
reset while booting is told apart from any other failure, so that step runs once more."""
import pytest
from outer import CommandFailed, InnerGuestReset, OuterGuest

from virtbench.transport import ExecResult

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
