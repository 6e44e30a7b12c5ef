"""Pieces for tests that drive the runner itself: a minimal study, and a benchmark under which
an environment is killed mid-trial."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

from virtbench.benchmarks.base import Benchmark, Metric


@dataclass
class OneStudy:
    """What the runner reads of a study, nothing more."""

    trials: int = 3
    seed: int = 1
    quick: bool = True
    warmup: int = 0
    pin: str = "off"
    name: str = "test"

    def to_dict(self):
        return {"name": self.name}


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
