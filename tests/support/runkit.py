"""Pieces for tests that drive the runner itself: a study made for them, a benchmark under which
an environment is killed mid-trial, an environment that runs nothing and a benchmark whose
chosen trials fail after measuring part of what they measure."""
from __future__ import annotations

import threading
from typing import Callable

from virtbench.measure.benchmarks.base import Benchmark, Metric, TrialOutcome
from virtbench.measure.environments.base import Environment, EnvSpec
from virtbench.study.design import BenchmarkCase, Study


def one_study(cases=(), **overrides) -> Study:
    """A real Study for tests that hand the runner a Prepared of their own: no warm-up, no
    pinning, no calibration (min_section_s 0) unless a test asks, seed 1, quick sizes.
    `cases`: (label, benchmark name) pairs, stored with the run for a report of it; the
    environments are the Prepared's. `overrides`: any other field of Study."""
    settings = dict(name="test", environments=[], trials=3, seed=1, quick=True, warmup=0,
                    pin="off", min_section_s=0.0,
                    # the real host's steal (up to 20 % on this shared VM) must not mark a
                    # test's trials disturbed: tests that judge steal set it
                    # (tests/unit/run/test_disturbance_runner.py)
                    steal_limit_pct=100.0,
                    benchmarks=[BenchmarkCase(name, {}, label) for label, name in cases])
    return Study(**{**settings, **overrides})


class KilledUptime(Benchmark):
    """Reads /proc/uptime; in trial `kill_at` (counting from 1) it starts a `sleep_s` (30 s)
    command and calls `kill(env)` one second in: the trial must fail and the run go on."""

    name = "uptime"
    family = "test"
    metrics = (Metric("uptime_s", "s", False),)

    def __init__(self, kill: Callable, kill_at: int = 2, sleep_s: int = 30):
        self.kill, self.kill_at, self.calls = kill, kill_at, 0
        self.sleep_s = sleep_s

    def run_trial(self, env, params):
        self.calls += 1
        if self.calls == self.kill_at:
            threading.Timer(1.0, self.kill, (env,)).start()
            return self.outcome_of(env.exec(["sleep", str(self.sleep_s)], timeout=60), 60)
        return self.outcome_of(env.exec(["cat", "/proc/uptime"], timeout=30))

    def parse(self, stdout):
        return {"uptime_s": float(stdout.split()[0])}


class Inert(Environment):
    """An environment with nothing to start or stop, whose kernels are their names: the base
    of the tests' fakes, which add only what their test asks of an environment."""

    def start(self):
        pass

    def stop(self):
        pass

    def kernel_path(self, name):
        return name


class Quiet(Inert):
    """An environment that runs nothing itself: its trials are what the benchmark returns.
    `name` is its label."""

    kind = "quiet"

    def __init__(self, name: str = "quiet"):
        super().__init__(EnvSpec("quiet"))
        self.name = name

    @property
    def label(self):
        return self.name


class Flaky(Benchmark):
    """A benchmark whose calls in `fail_on` (counting from 1, per environment label in
    `fail_on_env`, or every environment when None) fail after measuring `partial`, with exit
    status 3 and `noise` bytes of output; the others give {"rate": calls, "time": 1 / calls}."""

    name = "flaky"
    family = "test"
    metrics = (Metric("rate", "MB/s", True), Metric("time", "s", False))

    def __init__(self, fail_on=(2,), partial=None, noise: int = 0, fail_on_env=None):
        self.fail_on, self.noise, self.fail_on_env = set(fail_on), noise, fail_on_env
        self.partial = {"rate": 0.5} if partial is None else dict(partial)
        self.calls: dict[str, int] = {}

    def run_trial(self, env, params):
        n = self.calls[env.label] = self.calls.get(env.label, 0) + 1
        if n in self.fail_on and self.fail_on_env in (None, env.label):
            out = "x" * self.noise + "\nmeasured before the failure\n"
            return TrialOutcome(error="exit status 3: verification failed", exit=3, stdout=out,
                                stderr="e" * self.noise + "\nverification failed\n",
                                partial=dict(self.partial))
        return TrialOutcome(values={"rate": float(n), "time": 1.0 / n}, exit=0, stdout=f"{n}\n")


def run_study(store, envs, benches, trials: int = 4, console=None):
    """Run `benches` ({case label: benchmark}) on `envs` through the real runner."""
    import io

    from rich.console import Console

    from virtbench.execution.run.runner import Prepared, Runner
    study = one_study(trials=trials, cases=[(label, b.name) for label, b in benches.items()])
    prepared = Prepared(study, {e.label: e for e in envs},
                        {label: (b, {}) for label, b in benches.items()}, None)
    runner = Runner(store, console=console or Console(file=io.StringIO()), show_progress=False)
    return runner.start(prepared)


def forbid_building_probing_starting(monkeypatch) -> list[str]:
    """For a dry run: every builder (kernels, guest image), probe (KVM, every kind's) and
    every environment class's resolve() and start() replaced by one that records its name
    and fails; the list it records into (a dry run leaves it empty)."""
    from virtbench.measure import environments
    from virtbench.measure.environments.qemu.vmm import kvm_probe
    from virtbench.machinery.image import guest_image as image
    from virtbench.machinery.kernels import build as kernels
    called: list[str] = []

    def record(what):
        def fake(*args, **kwargs):
            called.append(what)
            raise AssertionError(f"a dry run called {what}")
        return fake

    monkeypatch.setattr(kernels, "build", record("kernels.build"))
    monkeypatch.setattr(image, "build", record("image.build"))
    monkeypatch.setattr(kvm_probe, "kvm_probe", record("kvm_probe"))
    for kind, entry in environments.KINDS.items():
        monkeypatch.setattr(entry, "probe", classmethod(record(f"{kind}.probe")))
    classes, todo = [], [environments.Environment]     # every kind's class (libvirt: both forms)
    while todo:
        cls = todo.pop()
        classes.append(cls)
        todo += cls.__subclasses__()
    for cls in classes:
        if cls.__module__.startswith("virtbench."):
            monkeypatch.setattr(cls, "resolve", record(f"{cls.__name__}.resolve"))
            monkeypatch.setattr(cls, "start", record(f"{cls.__name__}.start"))
    return called
