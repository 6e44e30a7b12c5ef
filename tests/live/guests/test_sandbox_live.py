"""Real containers (podman with runc or crun) and gVisor sandboxes on this host: start, run,
stop and leave nothing; a virtbench killed with SIGKILL or interrupted with Ctrl-C leaves
nothing either; what a dead run left is swept at the next start; a container killed
mid-trial fails that trial only. Each start is about a second."""
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from runkit import KilledUptime, one_study

from virtbench.machinery.host.net import netns
from virtbench.machinery.host import workroot
from virtbench.measure.environments import create
from virtbench.measure.environments.container import cleanup, podman
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store

HERE = Path(__file__).resolve().parent
# the Debian tree is built (once, cached) by a session fixture (conftest.py), not looked for
# at collection time: on a fresh machine the tests build it and run
pytestmark = [pytest.mark.skipif(os.geteuid() != 0 or not podman.shutil.which("podman"),
                                 reason="containers need root and podman"),
              pytest.mark.usefixtures("debian_rootfs")]


def containers() -> set[str]:
    out = podman.run_podman(["ps", "-a", "--format", "{{.Names}}"]).stdout
    return set(out.split())


def gone(name: str, workdir: str, namespaces: list[str], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (name not in containers() and not Path(workdir).exists()
                and not set(namespaces) & set(netns.list_namespaces())):
            return True
        time.sleep(0.2)
    return False


def test_a_container_starts_runs_and_leaves_nothing():
    env = create("container:storage=volume,mem=256M")
    env.start()
    try:
        name, workdir = env._name, str(env.work.path)
        spaces = list(env.work.data["extra_netns"])
        volume = env._volume
        assert name in containers() and Path(workdir).is_dir() and len(spaces) == 3
        assert env.label.startswith("container-podman/") and env.label.endswith(
            "/mem=256M/storage=volume")
        res = env.exec([env.kernel_path("pi"), "-k", "10"], timeout=60)
        assert res.exit == 0, res.stderr
        path = env.net_path()
        ping = env.exec(["ping", "-c", "1", "-W", "5", path.host_address], timeout=30)
        assert ping.exit == 0, ping.stdout + ping.stderr
        assert env.scratch_dir() == podman.SCRATCH_IN
        assert env.scratch_backing().endswith(f"/volumes/{volume}/_data")
        meta = env.metadata()
        assert meta["engine"] == "podman" and meta["engine_version"]
        assert meta["runtime"] in ("crun", "runc") and meta["runtime_version"]
        limits = meta["cgroup_limits"]     # the cgroup holds the limit (v1 or v2 file names)
        assert str(256 * 2**20) in limits.values(), limits
        assert env.memory_bytes() == 256 * 2**20
    finally:
        env.stop()
    assert gone(name, workdir, spaces, timeout=5)
    assert volume not in podman.run_podman(["volume", "ls", "--format", "{{.Name}}"]).stdout
    env.stop()                                   # twice is harmless


def test_a_gvisor_sandbox_starts_runs_and_leaves_nothing():
    if not podman.shutil.which("runsc"):
        pytest.skip("runsc not installed")
    env = create("gvisor:storage=bind")
    env.start()
    try:
        name, workdir = env._name, str(env.work.path)
        spaces = list(env.work.data.get("extra_netns", []))
        res = env.exec(["dmesg"], timeout=30)
        assert "gVisor" in res.stdout                     # the sentry, not the host kernel
        assert env.exec([env.kernel_path("pi"), "-k", "10"], timeout=60).exit == 0
        assert env.label.startswith("gvisor-ptrace/") and env.label.endswith("/storage=bind")
        meta = env.metadata()
        assert meta["runtime"] == "runsc" and meta["gvisor_platform"] == "ptrace"
        assert meta["platform"] != "ptrace"          # the fingerprint's: what the host is
        assert meta["runtime_version"] and meta["platform_probe"].startswith("ptrace: works")
        assert meta["network"] in ("sandbox", "host")
    finally:
        env.stop()
    assert gone(name, workdir, spaces, timeout=5)


def _start_child(spec: str):
    proc = subprocess.Popen([sys.executable, str(HERE / "_sandbox_child.py"), spec],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail(f"the child did not start: {proc.stderr.read()[-500:]}")
    return proc, json.loads(line)


@pytest.mark.parametrize("spec", ["container:storage=volume", "gvisor"])
def test_sigkill_of_virtbench_leaves_nothing(spec):
    if spec.startswith("gvisor") and not podman.shutil.which("runsc"):
        pytest.skip("runsc not installed")
    proc, made = _start_child(spec)
    assert made["name"] in containers()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert gone(made["name"], made["workdir"], made["netns"]), made   # the guardian's work
    volumes = podman.run_podman(["volume", "ls", "--format", "{{.Name}}"]).stdout
    assert not set(made["volumes"]) & set(volumes.split())


def test_the_next_start_sweeps_what_a_dead_run_left(tmp_path, debian_rootfs):
    root = debian_rootfs
    name = "vbctr-sweeptest"
    podman.run_podman(["rm", "-f", "--ignore", name])
    proc = podman.run_podman(["create", "--name", name, "--label",
                              f"{podman.OWNER_LABEL}=1 0", "--rootfs", f"{root}:O", "true"])
    assert proc.returncode == 0, proc.stderr
    live = "vbctr-sweeplive"                     # ours, alive: must stay
    podman.run_podman(["create", "--name", live, "--label",
                       f"{podman.OWNER_LABEL}={cleanup.owner()}", "--rootfs", f"{root}:O", "true"])
    workdir = workroot.ensure() / "vbctr-sweeptest"
    workdir.mkdir(mode=0o700, exist_ok=True)
    ns = "vb-5eeb7e-e"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    (workdir / "manifest.json").write_text(json.dumps(
        {"owner": "1 0", "workdir": str(workdir), "extra_netns": [ns]}))
    try:
        removed = cleanup.sweep_stale()
        assert name in removed and workdir.name in removed
        assert name not in containers() and live in containers()
        assert not workdir.exists() and ns not in netns.list_namespaces()
    finally:
        podman.run_podman(["rm", "-f", "--ignore", name, live])
        netns.delete(ns)


def test_a_container_killed_mid_trial_fails_that_trial_and_a_restart_serves_the_rest(store_url):
    env = create("container")
    env.resolve()
    store = Store(store_url)
    kill = KilledUptime(lambda e: podman.run_podman(["kill", e._name]))
    prepared = Prepared(one_study(name="container-loss"), {env.label: env},
                        {"uptime": (kill, {})}, None)
    out = Runner(store, console=Console(file=io.StringIO()), show_progress=False).start(prepared)
    trials = store.trials(out.run_id)
    assert [t["status"] for t in trials] == ["ok", "failed", "ok"]
    assert "the container was killed" in trials[1]["error"]
    assert [t["boot"] for t in trials] == [1, 1, 2]
    assert len(store.samples(out.run_id)) == 2       # the samples taken are kept
    assert env.agent is None and env.work is None   # stopped at the end


def test_ctrl_c_of_a_run_leaves_nothing(tmp_path):
    before = containers()
    env = dict(os.environ, VIRTBENCH_STORE=f"sqlite:///{tmp_path / 'store.db'}")
    proc = subprocess.Popen([sys.executable, "-m", "virtbench.interface.cli.commands", "run", "--env",
                             "container:storage=bind", "--bench", "pi:k=24", "--trials", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=tmp_path)
    deadline = time.monotonic() + 60
    new: set[str] = set()
    while time.monotonic() < deadline and not new:
        time.sleep(0.3)
        new = {n for n in containers() - before if n.startswith(podman.NAME_PREFIX)}
    assert new, "no container appeared"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and new & containers():
        time.sleep(0.2)
    assert not new & containers()
    # none of the interrupted run's work directories is left (another run's may be there)
    left = [d.name for d in workroot.root().glob("vbctr-*") if (d / "manifest.json").exists()
            and json.loads((d / "manifest.json").read_text()).get("owner", "").split()[:1]
            == [str(proc.pid)]]
    assert left == []


def test_network_bridge_reaches_podmans_gateway_from_the_host_namespace():
    env = create("container:network=bridge,storage=bind")
    env.start()
    try:
        path = env.net_path()
        assert path.host_prefix == [] and path.remote_address is None
        assert path.nic == "podman bridge" and path.env_address != path.host_address
        ping = env.exec(["ping", "-c", "1", "-W", "5", path.host_address], timeout=30)
        assert ping.exit == 0, ping.stdout + ping.stderr
        assert env.scratch_backing().endswith("/scratch")
    finally:
        env.stop()


def test_a_platform_that_does_not_work_here_is_one_line_exit_2(capsys, store_url):
    from virtbench.interface.cli import commands as cli
    from virtbench.measure.environments.gvisor import platform as platforms
    if not podman.shutil.which("runsc"):
        pytest.skip("runsc not installed")
    if platforms.probe("systrap")[0]:
        pytest.skip("this runsc has systrap")
    code = cli.main(["run", "--env", "gvisor:platform=systrap", "--bench", "pi"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "platform=systrap is not usable here (systrap: " in err
