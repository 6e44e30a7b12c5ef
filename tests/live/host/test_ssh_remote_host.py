"""The `ssh` environment against a second machine: an sshd in a network namespace of its own,
reached over a veth from the root namespace, with its own /tmp (tests/support/nstarget.py). Unlike
the loopback sshd of test_ssh_environment.py, the target's addresses, routes and staged files
are not this process's: what virtbench does there, it does over SSH or not at all."""
import io
import json
import os
import time
from pathlib import Path

import pytest
from nstarget import RemoteHost, link_exists, ns_pids, stop_pids
from rich.console import Console
from runkit import KilledUptime, one_study

from virtbench.interface.cli import commands as cli
from virtbench.machinery.host.net import netns
from virtbench.measure.environments import create
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and sshd need root")


@pytest.fixture
def remote():
    """A remote host; torn down after the test, also when the test fails."""
    with RemoteHost() as host:
        yield host


@pytest.fixture
def known_hosts(remote, tmp_path):
    return remote.write_known_hosts(tmp_path / "known_hosts")


def test_what_is_staged_lives_on_the_target_and_goes_at_the_end(remote, known_hosts):
    env = create(remote.spec(known_hosts))
    env.resolve()
    with env:
        staged = env.kernel_path("pi").rsplit("/", 1)[0]
        assert staged.startswith("/tmp/virtbench-")
        assert os.path.basename(staged) in remote.target_tmp()   # there...
        assert not os.path.exists(staged)                         # ...and not here
        res = env.exec(["ip", "-4", "-o", "addr", "show", "dev", "vbt0"], timeout=30)
        assert f"{remote.address}/30" in res.stdout               # the target's own NIC
    assert left_on_target(remote) == []
    assert remote.sessions() == []


def left_on_target(host: RemoteHost) -> list[str]:
    """What virtbench staged in the target's /tmp (kernels) and /var/tmp (scratch)."""
    return [f"{d}/{n}" for d in ("/tmp", "/var/tmp") for n in host.target_tmp(d)
            if n.startswith("virtbench-")]


def test_the_quick_study_against_a_remote_host(remote, known_hosts, capsys, store_url):
    before = remote.link.counters()
    code = cli.main(["run", "--env", "native", "--env", remote.spec(known_hosts),
                     "--bench", "pi", "--bench", "stream", "--bench", "tcp", "--trials", "3",
                     "--quick", "--min-section", "0", "--no-progress", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 0, err
    over_veth = remote.link.counters() - before

    assert cli.main(["report", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    envs = {e["label"]: e for e in data["environments"]}
    native = envs.pop("native")["metadata"]
    [(label, ssh)] = envs.items()
    # the same machine underneath, detected from the target's side
    assert ssh["metadata"]["platform"] == native["platform"]
    assert label == "remote"                                  # name=remote is the label
    assert ssh["metadata"]["kind_label"] == f"ssh-{native['platform']}/{remote.address}"
    assert ssh["metadata"]["ssh_target"] == f"root@{remote.address}:22"

    store = Store(store_url)
    run_id = store.list_runs()[0]["id"]
    trials = [t for t in store.trials(run_id) if t["environment"] == label]
    assert sorted((t["benchmark"], t["status"]) for t in trials) == sorted(
        [(b, "ok") for b in ("pi", "stream", "tcp") for _ in range(3)])
    sampled = {s["benchmark"] for s in store.samples(run_id) if s["environment"] == label}
    assert sampled == {"pi", "stream", "tcp"}

    # iperf3 ran between the target's address and the peer's, over the veth
    moved = 0
    for t in trials:
        if t["benchmark"] != "tcp":
            continue
        out = json.loads(t["stdout"])
        [conn, *_] = out["start"]["connected"]
        assert (conn["local_host"], conn["remote_host"]) == (remote.address, remote.peer)
        end = out["end"]
        moved += end["sum_sent"]["bytes"] + end.get("sum_sent_bidir_reverse", {}).get("bytes", 0)
    assert moved > 0 and over_veth >= moved

    # nothing of the run is left on the target
    assert left_on_target(remote) == []
    assert remote.sessions() == []


def test_nothing_is_left_when_a_test_fails_midway(tmp_path):
    """The fixture's teardown with an agent still running on the target: the target's scratch
    goes with it (its own /var/tmp), nothing lands in ours."""
    ours = set(os.listdir("/var/tmp"))
    with pytest.raises(RuntimeError, match="the test failed"):
        with RemoteHost() as host:
            env = create(host.spec(host.write_known_hosts(tmp_path / "kh")))
            env.start()                           # agent and session running on the target
            ns, dev, pid, keys = host.ns, host.link.root_dev, host.pid, host.keys
            running = ns_pids(ns)
            assert pid in running and len(running) > 1
            assert [n for n in host.target_tmp("/var/tmp") if n.startswith("virtbench-")]
            raise RuntimeError("the test failed")  # env.stop() never runs
    assert ns not in netns.list_namespaces()
    assert not link_exists(dev)
    assert not [p for p in running if Path(f"/proc/{p}").exists()]
    assert not os.path.exists(keys)
    assert not (netns.OWNERS / ns).exists()
    assert set(os.listdir("/var/tmp")) <= ours
    env.stop()                                    # the client side's master and control dir


def sshd_sessions(host: RemoteHost) -> list[int]:
    """The target's per-connection sshd processes (not its listener)."""
    return [p for p in ns_pids(host.ns) if p != host.pid
            and Path(f"/proc/{p}/comm").read_text().strip() == "sshd"]


def test_the_target_dropping_the_connection_fails_that_trial_and_the_rest_runs(
        remote, known_hosts, store_url):
    env = create(remote.spec(known_hosts))
    env.resolve()
    store = Store(store_url)
    killed = []

    def drop(_env):               # on the target: its sshd ends our connection
        killed.extend(sshd_sessions(remote))
        stop_pids(killed)

    prepared = Prepared(one_study(name="remote-drop"), {env.label: env},
                        {"uptime": (KilledUptime(drop, sleep_s=6), {})}, None)
    out = Runner(store, console=Console(file=io.StringIO()), show_progress=False).start(prepared)
    trials = store.trials(out.run_id)
    assert killed
    assert [t["status"] for t in trials] == ["ok", "failed", "ok"]
    assert f"SSH connection to root@{remote.address}:22" in trials[1]["error"]
    assert [t["boot"] for t in trials] == [1, 1, 2]
    # the dropped boot's staged directory is removed (over a new connection, at its stop);
    # its agent and the command it was running end by themselves within the command's own
    # time limit (here a 6 s sleep, limit 60 s): a closed channel does not stop a remote
    # process
    deadline = time.monotonic() + 75
    while remote.sessions(wait_s=0) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert remote.sessions(wait_s=0) == []
    assert left_on_target(remote) == []
