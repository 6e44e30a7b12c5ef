"""The TCG profiling twin is refused, with one line, when the host cannot hold it."""
import pytest

from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu import Qemu
from virtbench.measure.environments.qemu.profiling import ExitProfiler
from virtbench.measure.environments.capacity import TWIN_HEADROOM, twin_memory_refusal
from virtbench.core.errors import VirtbenchError

GIB = 2**30


def test_a_twin_fits_when_its_ram_and_headroom_are_available():
    assert twin_memory_refusal("g", 1 * GIB, 1 * GIB + TWIN_HEADROOM) is None
    assert twin_memory_refusal("g", 1 * GIB, None) is None


def test_a_twin_that_does_not_fit_is_one_line_naming_the_fix():
    why = twin_memory_refusal("qemu-tcg/ide/e1000", 4 * GIB, 3 * GIB)
    assert why.startswith("qemu-tcg/ide/e1000: its profiling twin needs 4.00 GiB")
    assert "3.00 GiB available" in why and "lower mem" in why and "\n" not in why


def test_the_twin_is_not_booted_when_it_would_not_fit(monkeypatch):
    env = Qemu(EnvSpec.parse("qemu:mem=4G,accel=tcg"))
    env.accel = "tcg"
    booted = []
    monkeypatch.setattr(Qemu, "start", lambda self: booted.append(self))
    monkeypatch.setattr(ExitProfiler, "twin_memory_refusal",
                        lambda self: twin_memory_refusal(self.label,
                                                         self.measured.host_memory_reserved(),
                                                         2 * GIB))
    with pytest.raises(VirtbenchError, match="profiling twin needs 4.00 GiB"):
        env.exit_profiler().twin()
    assert booted == []


def test_the_host_reading_uses_memavailable():
    env = Qemu(EnvSpec.parse("qemu:mem=2G,accel=tcg"))
    profiler = env.exit_profiler()
    assert profiler.twin_memory_refusal("MemTotal: 8000000 kB\nMemAvailable: 1000000 kB\n")
    assert profiler.twin_memory_refusal("MemTotal: 8000000 kB\nMemAvailable: 7000000 kB\n") is None
