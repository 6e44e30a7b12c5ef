"""Pieces for the fleet tests: workers standing for hosts (`virtbench worker` subprocesses,
stopped by PID), the CLI as a subprocess, and counting what the store and the queues hold."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis
import sqlalchemy as sa

from virtbench.execution.fleet.app import queue_name
from virtbench.foundations.store import Sample, Store, TrialRecord

# short enough for a test: a dead worker's unit is back within ~3 s, its lease gone in 2 s
TEST_ENV = {"VIRTBENCH_VISIBILITY_TIMEOUT": "2", "VIRTBENCH_LEASE_TTL": "2",
            "VIRTBENCH_STORE_RETRY_S": "1"}


def virtbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "virtbench.interface.cli.commands", *args]


def env(broker: str, store: str) -> dict:
    return {**os.environ, **TEST_ENV, "VIRTBENCH_BROKER": broker, "VIRTBENCH_STORE": store}


def run_cli(broker: str, store: str, *args: str, timeout: float = 60):
    return subprocess.run(virtbench(*args), capture_output=True, text=True, timeout=timeout,
                          env=env(broker, store))


class Worker:
    """`virtbench worker --name NAME` in its own session; its stderr goes to a file."""

    def __init__(self, name: str, broker: str, store: str, logdir: Path):
        self.name = name
        self.log = logdir / f"worker-{name}-{time.monotonic_ns()}.log"
        self._fh = self.log.open("w")
        self.proc = subprocess.Popen(virtbench("worker", "--name", name, "--broker", broker,
                                               "--store", store),
                                     stdout=self._fh, stderr=subprocess.STDOUT,
                                     env=env(broker, store), start_new_session=True)
        self.broker = broker

    def wait_ready(self) -> "Worker":
        client = redis.Redis.from_url(self.broker)
        name = self.name
        deadline = time.monotonic() + 30
        while not client.exists(f"virtbench:worker:{name}"):
            assert self.proc.poll() is None, self.text()
            assert time.monotonic() < deadline, f"worker {name} not ready: {self.text()}"
            time.sleep(0.1)
        # Celery's remote control answers a little after the worker_ready signal
        time.sleep(0.3)
        return self

    def text(self) -> str:
        self._fh.flush()
        return self.log.read_text()

    def signal(self, sig) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def kill_hard(self) -> None:
        """SIGKILL the worker's whole session: the host dies with its unit."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._fh.close()


def count(store: str, sql: str, **params) -> int:
    engine = sa.create_engine(store)
    try:
        with engine.connect() as c:
            return c.execute(sa.text(sql), params).scalar()
    except sa.exc.OperationalError:
        return 0
    finally:
        engine.dispose()


def queue_length(broker: str, host: str) -> int:
    return redis.Redis.from_url(broker).llen(queue_name(host))


def wait_for(predicate, timeout: float, what: str, poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(poll)


def host_run(store: Store, fleet: str, host: str, values: list[float]) -> str:
    """A complete stored run of `values` as pi seconds on native, for `host` of `fleet`."""
    run = store.create_run({"name": "s", "trials": len(values), "baseline": "native",
                            "benchmarks": [{"label": "pi", "name": "pi"}]},
                           seed=1, quick=True, version="t", host=host, fleet=fleet)
    store.upsert_environment(run, "native", kind="native", spec="native", options={},
                             status="up")
    for i, v in enumerate(values):
        store.record_trial(run, TrialRecord(
            environment="native", benchmark="pi", benchmark_name="pi",
            params={}, trial=i, seq=i, status="ok", samples=[Sample("seconds", v, "s", False)]))
    store.set_run_status(run, "complete")
    return run
