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


# -- the twin a boot measurement, a snapshot or a migration works on (qemu/twin.py) ----------
from virtbench.measure.environments.qemu import twin as twin_mod  # noqa: E402
from virtbench.measure.environments.qemu.booted import boottimer  # noqa: E402
from virtbench.measure.environments.qemu.vmstate import migrate, snapshot  # noqa: E402


class Caps:
    def __init__(self, pause: bool):
        self.pause = pause


class FakeEnv:
    label = "qemu-tcg/ide/e1000"

    def __init__(self, events: list, can_pause: bool = True, paused: bool = False):
        self.events, self.can_pause, self.paused = events, can_pause, paused

    def capabilities(self):
        return Caps(self.can_pause)

    def pause(self):
        self.events.append("pause")
        self.paused = True

    def resume(self):
        self.events.append("resume")
        self.paused = False


class FakeTwin:
    def __init__(self, events: list, start_fails: bool = False, stop_fails: bool = False):
        self.events, self.start_fails, self.stop_fails = events, start_fails, stop_fails
        self.shared_root = False

    def start(self):
        self.events.append("start")
        if self.start_fails:
            raise VirtbenchError("the twin did not boot")

    def stop(self):
        self.events.append("stop")
        if self.stop_fails:
            raise OSError("stop failed")


def test_a_twin_runs_while_the_guest_is_paused_and_is_stopped_before_it_resumes():
    events = []
    with twin_mod.twin_running(FakeEnv(events), FakeTwin(events)) as twin:
        events.append("work")
        assert isinstance(twin, FakeTwin)
    assert events == ["pause", "start", "work", "stop", "resume"]


@pytest.mark.parametrize("where", ["start", "work", "stop"])
def test_whatever_fails_the_twin_is_stopped_and_the_guest_resumed(where):
    events = []
    env = FakeEnv(events)
    with pytest.raises((VirtbenchError, OSError, RuntimeError)):
        with twin_mod.twin_running(env, FakeTwin(events, start_fails=where == "start",
                                                 stop_fails=where == "stop")):
            if where == "work":
                raise RuntimeError("the measurement failed")
    assert events[-2:] == ["stop", "resume"] and not env.paused


@pytest.mark.parametrize("can_pause, paused", [(False, False), (True, True)])
def test_a_guest_that_cannot_pause_or_already_is_paused_is_left_as_it_is(can_pause, paused):
    events = []
    env = FakeEnv(events, can_pause=can_pause, paused=paused)
    with twin_mod.twin_running(env, FakeTwin(events)):
        pass
    assert events == ["start", "stop"] and env.paused is paused


def test_the_state_twin_has_the_memory_asked_and_a_root_disk_a_second_qemu_opens():
    made = []

    def make_twin(extra_argv, **options):
        made.append((extra_argv, options))
        return FakeTwin([])

    twin = twin_mod.state_twin(make_twin, {"mem": "2G"}, ("-x",))
    assert twin.shared_root and made == [(["-x"], {"mem": "2G"})]
    twin_mod.state_twin(make_twin, {"mem": ""})
    assert made[-1] == ([], {})


def _no_timer(monkeypatch):
    class Timer:
        closed = False

        def argv(self):
            return ["-timer"]

        @staticmethod
        def boot_args():
            return []

        def close(self):
            Timer.closed = True

    monkeypatch.setattr(boottimer, "BootTimer", Timer)
    return Timer


@pytest.mark.parametrize("cycle", ["boot", "snapshot", "migrate"])
def test_each_cycle_pauses_the_guest_for_its_twin_and_resumes_it_after_a_failed_boot(
        cycle, monkeypatch):
    events = []
    env = FakeEnv(events)
    timer = _no_timer(monkeypatch)
    made_dirs = []
    real_private_dir = migrate.watch.private_dir

    def private_dir(prefix):
        made_dirs.append(real_private_dir(prefix))
        return made_dirs[-1]

    monkeypatch.setattr(migrate.watch, "private_dir", private_dir)
    make_twin = lambda extra_argv, **options: FakeTwin(events, start_fails=True)  # noqa: E731
    params = {"mem": "", "mode": "precopy"}
    run = {"boot": lambda: boottimer.measure_boot(env, make_twin),
           "snapshot": lambda: snapshot.snapshot_cycle(env, params, make_twin),
           "migrate": lambda: migrate.migrate_cycle(env, params, make_twin)}[cycle]
    with pytest.raises(VirtbenchError, match="did not boot"):
        run()
    assert events == ["pause", "start", "stop", "resume"] and not env.paused
    if cycle == "boot":
        assert timer.closed
    if cycle == "migrate":
        assert len(made_dirs) == 1 and not made_dirs[0].exists()    # the tick sockets' dir
