"""The live part of tests/unit/environments/test_ssh_environment.py: its tests that need a server.

The `ssh` environment against a target it did not start: a private sshd on 127.0.0.1
(this machine standing for a remote one).
"""
import io
import json
import os
import signal
import tempfile
from pathlib import Path
import pytest
from rich.console import Console
from runkit import KilledUptime, one_study
from virtbench.interface.cli import commands as cli
from virtbench.measure.environments import create
from virtbench.core.errors import VirtbenchError
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store


@pytest.fixture
def target(loopback_sshd):
    server, known = loopback_sshd
    return (f"ssh:host=127.0.0.1,port={server.port},key={server.identity},"
            f"known_hosts={known},name=loop")


def test_the_default_scratch_is_private_to_the_run_and_removed_at_stop(target):
    env = create(target)
    env.resolve()
    with env:
        scratch = env.scratch_dir()
        assert scratch.startswith("/var/tmp/virtbench-scratch-")
        st = os.stat(scratch)               # the target is this machine
        assert st.st_mode & 0o777 == 0o700 and st.st_uid == os.geteuid()
    assert not os.path.exists(scratch)


def test_label_names_what_the_target_runs_on_and_nothing_is_left(target):
    env = create(target)
    assert env.label == "loop"                   # name=loop is the label
    env.resolve()
    # the label the kind makes names what the target runs on: the development machine is a
    # KVM guest (its hypervisor, not the container it also is)
    assert env.label == "loop" and env.kind_label == f"ssh-{env.platform.label}/127.0.0.1"
    with env:
        staged = env.kernel_path("pi").rsplit("/", 1)[0]
        assert os.path.isdir(staged)             # the target is this machine
        res = env.exec([env.kernel_path("pi"), "-k", "10"], timeout=60)
        assert res.exit == 0 and '"verified":true' in res.stdout
        meta = env.metadata()
        assert meta["platform"] == env.platform.label
    assert not os.path.exists(staged)


def test_a_run_through_ssh_beside_native(target, capsys, store_url):
    code = cli.main(["run", "--env", "native", "--env", target, "--bench", "pi",
                     "--trials", "2", "--quick", "--min-section", "0", "--no-progress", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert cli.main(["report", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    labels = {e["label"] for e in data["environments"]}
    assert labels == {"native", "loop"}
    rows = [r for r in data["results"] if r["environment"] == "loop"]
    assert rows and rows[0]["n"] + len(rows[0]["disturbed"]) == 2 and rows[0]["n"] >= 1


def test_a_wrong_host_key_stops_before_anything_runs(target, tmp_path, capsys, store_url):
    bad_known = tmp_path / "kh"
    bad_known.write_text("")
    spec = ",".join(p for p in target.split(",") if not p.startswith("known_hosts=")) \
        + f",known_hosts={bad_known}"
    code = cli.main(["run", "--env", spec, "--bench", "pi", "--trials", "1", "--quick", "--min-section", "0",
                     "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "host key" in err and "is not known" in err
    assert not os.path.exists(store_url[len("sqlite:///"):])
    assert own_control_dirs() == []                                  # no control directory


def test_a_connection_killed_mid_trial_fails_that_trial_and_the_rest_runs(target, store_url):
    env = create(target)
    env.resolve()
    store = Store(store_url)
    kill = KilledUptime(lambda e: os.kill(e.agent.proc.pid, signal.SIGKILL))
    prepared = Prepared(one_study(name="ssh-loss"), {env.label: env}, {"uptime": (kill, {})},
                        None)
    out = Runner(store, console=Console(file=io.StringIO()), show_progress=False).start(prepared)
    trials = store.trials(out.run_id)
    assert [t["status"] for t in trials] == ["ok", "failed", "ok"]
    assert "SSH connection to root@127.0.0.1:" in trials[1]["error"]
    assert "ended" in trials[1]["error"]
    assert [t["boot"] for t in trials] == [1, 1, 2]
    assert env.agent is None and env.session is None          # stopped at the end


CRASHING_CHILD = """
import os, signal, sys
from virtbench.measure.environments import create
env = create(sys.argv[1])
env.resolve()
env.start()
print(env.kernel_path("pi").rsplit("/", 1)[0], os.getpid(), env.scratch_dir(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)     # virtbench dies without stopping anything
"""


def test_what_was_staged_is_removed_when_virtbench_dies(target, tmp_path):
    import subprocess
    import sys
    import time
    child = subprocess.run([sys.executable, "-c", CRASHING_CHILD, target], capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    staged = child.stdout.split()[0]
    assert staged.startswith("/tmp/virtbench-")
    scratch = child.stdout.split()[2]         # scratch=auto: the run's own, gone with it
    assert scratch.startswith("/var/tmp/virtbench-scratch-")
    # the target's agent removes both when the connection dies, one after the other
    deadline = time.monotonic() + 20
    while (os.path.exists(staged) or os.path.exists(scratch)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not os.path.exists(staged)        # the target is this machine
    assert not os.path.exists(scratch)
    from virtbench.machinery.host import workroot
    from virtbench.machinery.host.net.sshsession import CONTROL_PREFIX, sweep_stale_control_dirs
    stale = [d for d in workroot.root().glob(f"{CONTROL_PREFIX}*") if json.loads(
        (d / "manifest.json").read_text())["owner"].split()[0] == child_pid(child)]
    assert stale                  # the dead run's control directory, in the work root...
    assert set(sweep_stale_control_dirs()) >= {d.name for d in stale}   # ...swept next time
    assert not any(d.exists() for d in stale)
    assert not list(Path(tempfile.gettempdir()).glob("vb-ssh-*"))   # nothing in /tmp


def child_pid(child) -> str:
    return child.stdout.split()[1]


def own_control_dirs() -> list[str]:
    """This process's ssh control directories in the work root."""
    from virtbench.machinery.host import workroot
    from virtbench.machinery.host.net.sshsession import CONTROL_PREFIX
    return [d.name for d in workroot.root().glob(f"{CONTROL_PREFIX}*") if json.loads(
        (d / "manifest.json").read_text())["owner"].split()[0] == str(os.getpid())]


def test_network_benchmarks_need_the_peer_address_and_then_measure_the_real_path(target):
    from virtbench.measure.benchmarks import REGISTRY
    with create(target) as env:
        with pytest.raises(VirtbenchError, match="need peer=ADDR"):
            env.net_path()
    with create(target + ",peer=127.0.0.1") as env:
        path = env.net_path()
        assert (path.env_address, path.host_address, path.host_prefix) == (
            "127.0.0.1", "127.0.0.1", [])
        rr = REGISTRY["rr"]
        outcome = rr.run_trial(env, rr.params(quick=True))
        assert outcome.error is None, outcome.error
        assert outcome.values["transactions_per_s"] > 0
