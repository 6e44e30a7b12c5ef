"""`virtbench fleet run` with bad input: an unreachable broker or store, a host no worker
serves, a study that fails validation. Each: one line naming the thing and the fix, exit 2,
nothing enqueued (the hosts' queues stay empty) and no fleet row written."""
from __future__ import annotations

import pytest
import redis

from fleetkit import Worker, queue_length, run_cli
from redisserver import free_port, redis_server  # noqa: F401  (fixture)
from virtbench.foundations.store import Store

STUDY = ("--env", "native", "--bench", "pi", "--trials", "2", "--quick")


@pytest.fixture
def fleet_store(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store(url)
    return url


@pytest.fixture
def worker_a(redis_server, fleet_store, tmp_path):  # noqa: F811
    w = Worker("a", redis_server.url, fleet_store, tmp_path).wait_ready()
    yield w
    w.stop()


def _nothing_done(broker: str, store: str, hosts=("a", "b", "c")) -> None:
    assert all(queue_length(broker, h) == 0 for h in hosts)
    assert redis.Redis.from_url(broker).keys("virtbench:unit:*") == []
    assert Store(store).list_fleets() == []


def _one_line(res, *words: str) -> str:
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert res.stdout == ""
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_unreachable_broker(redis_server, fleet_store, worker_a):  # noqa: F811
    dead = f"redis://127.0.0.1:{free_port()}/0"
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *STUDY, "--host", "a",
                  "--broker", dead)
    _one_line(res, f"broker {dead}: unreachable", "--broker")
    _nothing_done(redis_server.url, fleet_store)


def test_unreachable_store(redis_server, fleet_store, worker_a):  # noqa: F811
    dead = f"postgresql://virtbench@127.0.0.1:{free_port()}/virtbench"
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *STUDY, "--host", "a",
                  "--store", dead)
    _one_line(res, "store postgresql", "cannot open", "--store")
    _nothing_done(redis_server.url, fleet_store)


def test_host_without_a_worker(redis_server, fleet_store, worker_a):  # noqa: F811
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *STUDY, "--host", "a",
                  "--host", "c", "--worker-timeout", "1")
    line = _one_line(res, "host c:", "virtbench.host.c", "virtbench worker --name c")
    assert "host a" not in line
    _nothing_done(redis_server.url, fleet_store)


def test_invalid_study_says_what_run_says(redis_server, fleet_store, worker_a):  # noqa: F811
    bad = ("--env", "native", "--bench", "no-such-benchmark")
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *bad, "--host", "a")
    line = _one_line(res, "no-such-benchmark")
    direct = run_cli(redis_server.url, fleet_store, "run", *bad)
    assert direct.returncode == 2 and direct.stderr.strip() == line
    _nothing_done(redis_server.url, fleet_store)


def test_bad_host_name_and_missing_broker(redis_server, fleet_store, monkeypatch):  # noqa: F811
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *STUDY, "--host", "a:b")
    _one_line(res, "host name 'a:b'")
    monkeypatch.delenv("VIRTBENCH_BROKER", raising=False)
    res = run_cli("", fleet_store, "fleet", "run", *STUDY, "--host", "a")
    _one_line(res, "no broker", "--broker redis://")
    _nothing_done(redis_server.url, fleet_store)
