"""Native instances (`native:instances=N`): each its own scratch directory, BLAST database and
scp target; nothing stopped by name; the memory bound on N."""
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from virtbench.measure import environments
from virtbench.measure.benchmarks import network
from virtbench.measure.benchmarks.application import Blast
from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.measure.benchmarks.memory import Stream
from virtbench.measure.benchmarks.transfer import Scp, source_file
from virtbench.measure.environments import capacity
from virtbench.measure.environments import group as group_mod
from virtbench.measure.environments.native import AUTO_SCRATCH
from virtbench.machinery.machine.meminfo import field as meminfo_bytes
from virtbench.measure.environments.qemu.cmdline.options import size_bytes
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.agent.transport import ExecResult

PACKAGE = Path(__file__).resolve().parents[3] / "virtbench"


# -- isolation -----------------------------------------------------------------------------
def test_each_native_instance_has_its_own_scratch_blast_db_and_scp_target(tmp_path):
    g = environments.create(f"native:scratch={tmp_path},instances=3")
    dirs = [m.scratch_dir() for m in g.members]
    assert dirs == [str(tmp_path / f"virtbench-instance-{i}") for i in range(3)]
    assert all(os.path.isdir(d) for d in dirs)
    blast = Blast()
    params = blast.params(quick=True)
    dbs = {blast._workdir(m, params) for m in g.members}
    targets = {Scp().target_path(m) for m in g.members}
    assert len(dbs) == 3 and len(targets) == 3
    assert all(t.startswith(d + "/") for t, d in zip(sorted(targets), dirs))
    assert [m.net_index for m in g.members] == [0, 1, 2]
    assert all(m.instance_of is g for m in g.members)
    g.stop()
    assert list(tmp_path.iterdir()) == []           # empty instance directories go


def test_a_single_native_environment_gets_a_private_scratch_removed_at_stop(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("VIRTBENCH_TMP", str(tmp_path))
    env = environments.create("native")
    assert env.values["scratch"] == AUTO_SCRATCH
    d = Path(env.scratch_dir())
    assert d.parent == tmp_path / "virtbench" and d.name.startswith("vbscratch-")
    assert d.stat().st_mode & 0o777 == 0o700 and env.scratch_dir() == str(d)
    (d / "file").write_text("x")
    env.stop()
    assert not d.exists()


def test_scp_source_file_made_once_by_concurrent_instances(tmp_path):
    paths, errors = [], []

    def make():
        try:
            paths.append(source_file(3, tmp_path))
        except Exception as exc:        # noqa: BLE001 - the test reports it
            errors.append(exc)

    threads = [threading.Thread(target=make) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(paths)) == 1 and paths[0].stat().st_size == 3 * 10**6
    assert not list(tmp_path.glob("*.part*"))


# -- nothing stopped by name ---------------------------------------------------------------
def test_no_process_is_stopped_by_name_anywhere_in_the_package():
    offenders = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py")
                 for n, line in enumerate(p.read_text().splitlines(), 1)
                 if re.search(r"\b(pkill|killall)\b", line)]
    assert offenders == []


def test_stop_pidfile_stops_only_the_server_started_with_that_pidfile(tmp_path):
    piddir = tmp_path / "virtbench-iperf3.x"
    piddir.mkdir(mode=0o700)
    pidfile = piddir / "iperf3.pid"
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
    ours = subprocess.Popen(sleeper + ["-I", str(pidfile)])     # names the pidfile, as iperf3
    other = subprocess.Popen(sleeper)                          # same program, not ours
    try:
        # a pidfile naming a process that was not started with it (planted, or a PID reused
        # after the one-shot server left): nothing is killed
        pidfile.write_text(f"{other.pid}\n")
        assert subprocess.run(network.stop_pidfile_argv(str(pidfile))).returncode == 0
        assert other.poll() is None and not piddir.exists()
        piddir.mkdir(mode=0o700)
        pidfile.write_text(f"{ours.pid}\n")
        assert subprocess.run(network.stop_pidfile_argv(str(pidfile))).returncode == 0
        assert ours.wait(timeout=10) != 0
        assert other.poll() is None
        assert not piddir.exists()          # the private directory goes with it
        # a server that already left (one-shot iperf3 removes its pidfile): nothing to do
        assert subprocess.run(network.stop_pidfile_argv(str(pidfile))).returncode == 0
        assert other.poll() is None
    finally:
        for p in (ours, other):
            if p.poll() is None:
                p.kill()
                p.wait()


class _Recorder:
    def __init__(self):
        self.argvs = []

    def exec(self, argv, timeout, env=None):
        self.argvs.append(argv)
        out = ("LISTEN 0 5 10.0.0.2:5201 *:*" if "ss" in argv else
               "/tmp/virtbench-iperf3.Ab3dE6gH\n" if argv[0] == "mktemp" else "{}")
        return ExecResult(exit=0, stdout=out, stderr="", wall_s=0.1, timed_out=False)


def test_guest_to_guest_stops_its_own_iperf3_by_pid():
    server, client = _Recorder(), _Recorder()
    path = group_mod.PairPath("10.0.0.1", "10.0.0.2", ["c"], ["s"])
    bench = network.GuestToGuestTcp()
    bench.run_pair(client, server, path, bench.params(quick=True))
    made, start, stop = server.argvs[0], server.argvs[1], server.argvs[-1]
    assert made == network.PIDDIR_ARGV          # a private directory, never a name in /tmp
    assert "-D" in start and "-I" in start
    pidfile = start[start.index("-I") + 1]
    assert pidfile == "/tmp/virtbench-iperf3.Ab3dE6gH/iperf3.pid"
    assert stop[:1] == ["s"] and pidfile in stop
    assert not any(a in ("pkill", "killall") for argv in server.argvs + client.argvs for a in argv)


# -- the memory bound on N -----------------------------------------------------------------
def test_meminfo_parsed_from_this_hosts_proc_meminfo(fixture_text):
    text = fixture_text("host", "proc-meminfo.txt")
    assert meminfo_bytes(text, "MemTotal") == 24683656 * 1024
    assert meminfo_bytes(text, "MemAvailable") == 21980888 * 1024
    assert meminfo_bytes(text, "HugePages_Total") == 0          # no unit: a count
    assert meminfo_bytes(text, "NoSuchField") is None


def test_native_memory_is_what_the_host_has_available():
    avail = environments.create("native").memory_bytes()
    total = meminfo_bytes(Path("/proc/meminfo").read_text(), "MemTotal")
    assert 0 < avail <= total


def test_qemu_sizes_in_bytes():
    assert size_bytes("1G") == 2**30 and size_bytes("512M") == 512 * 2**20
    assert size_bytes("256") == 256 * 2**20          # QEMU's -m default unit is MiB


def test_qemu_instances_bounded_by_host_memory():
    total = meminfo_bytes(Path("/proc/meminfo").read_text(), "MemTotal")
    per = -(-int(total * 0.5) // 2**30)               # GiB, rounded up: 2 of them > 80 %
    with pytest.raises(VirtbenchError, match=r"2 instances need .* GiB, more than 80% of the host"):
        environments.create(f"qemu:mem={per}G,instances=2")
    g = environments.create("qemu:mem=256M,instances=2")
    assert g.memory_bytes() == 256 * 2**20 and g.host_memory_reserved() == 512 * 2**20


def test_memory_refusal_pure():
    gib = 2**30
    assert capacity.memory_refusal("native:instances=2", 2, gib, 3 * gib, True, "x") is None
    text = capacity.memory_refusal("native:instances=4", 4, gib, 3 * gib, True, "stream")
    assert "4 instances x 1.00 GiB for stream need 4.00 GiB" in text
    assert "lower instances to 3" in text
    # a guest's RAM is its own: N does not multiply it
    assert capacity.memory_refusal("qemu:instances=8", 8, gib, 2 * gib, False, "x") is None
    assert "per instance" in capacity.memory_refusal("q", 8, 3 * gib, 2 * gib, False, "x")
    assert "lower instances" not in capacity.memory_refusal("q", 1, 3 * gib, 2 * gib, True, "x")
    assert capacity.memory_refusal("q", 8, 0, 1, True, "x") is None        # unknown need
    assert capacity.memory_refusal("q", 8, gib, None, True, "x") is None   # unknown memory


def test_stream_says_how_much_memory_it_holds():
    s = Stream()
    assert s.memory_need(s.params({"elements": 10_000_000, "processes": 4})) == 3 * 8 * 10**7 * 4


class _Hungry(Benchmark):
    name = "hungry"
    family = "memory"
    metrics = (Metric("x", "s", False),)

    def __init__(self, need):
        self.need = need
        self.ran = 0

    def memory_need(self, params):
        return self.need

    def run_trial(self, env, params):
        self.ran += 1
        raise AssertionError("must not run")


def test_native_group_refuses_n_that_does_not_fit_and_runs_nothing(tmp_path, monkeypatch):
    g = environments.create(f"native:scratch={tmp_path},instances=2")
    avail = g.members[0].memory_bytes()
    for m in g.members:         # MemAvailable moves between reads on a busy host: hold it
        monkeypatch.setattr(m, "memory_bytes", lambda: avail)
    hungry = _Hungry(avail // 2 + 2**30)          # one fits, two do not
    out = g.run_trial(hungry, {})
    assert not out.ok and hungry.ran == 0
    assert "2 instances x" in out.error and "lower instances to 1" in out.error
    assert g.memory_bytes() == avail // 2


def test_a_single_environment_refuses_what_cannot_fit(tmp_path):
    env = environments.create(f"native:scratch={tmp_path}")
    hungry = _Hungry(env.memory_bytes() + 2**30)
    out = env.run_trial(hungry, {})
    assert not out.ok and hungry.ran == 0
    assert "hungry needs" in out.error and "lower the benchmark's size" in out.error
    assert "guest" not in out.error
    guest = environments.create("qemu:mem=512M")
    text = guest.memory_refusal(Stream(), Stream().params({"elements": 30_000_000}))
    assert "stream needs 0.67 GiB, more than the 0.50 GiB" in text and "more mem" in text
    assert guest.memory_refusal(Stream(), Stream().params()) is None
