"""The host executor: its results (a time limit reached and a missing program are results),
and benchmarks' host sides driven through a fake one that answers with captured output."""
from __future__ import annotations
import io
from hostkit import FakeHost, ok
from runkit import Inert
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.disk import physical_limit as pl
from virtbench.measure.environments.base import EnvSpec
from virtbench.machinery.host.executor import HostExecutor
from virtbench.machinery.host.net.netpath_types import NetPath
from virtbench.machinery.agent.transport import ExecResult

HOST_NS = ["ip", "netns", "exec", "vb-t-h"]

REMOTE_NS = ["ip", "netns", "exec", "vb-t-r"]


def test_no_benchmark_runs_host_commands_but_through_the_executor():
    """Benchmarks import neither subprocess nor os.system/Popen: the host is `env.host`."""
    import ast
    from pathlib import Path

    import virtbench.measure.benchmarks as package
    offenders = []
    for path in Path(package.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] == "subprocess" for n in names):
                offenders.append(path.name)
            if isinstance(node, ast.Attribute) and node.attr in ("system", "popen", "spawnv"):
                offenders.append(f"{path.name}: os.{node.attr}")
    assert offenders == []


def test_run_gives_exit_output_and_duration():
    res = HostExecutor().run(["sh", "-c", "cat; echo err >&2; exit 3"], timeout=10, input="in\n")
    assert (res.exit, res.stdout, res.stderr.strip(), res.timed_out) == (3, "in\n", "err", False)
    assert 0 < res.wall_s < 10


def test_a_time_limit_is_a_result_not_an_exception():
    res = HostExecutor().run(["sleep", "5"], timeout=0.3)
    assert res.timed_out and res.exit == -9 and res.wall_s < 3


class PathEnv(Inert):
    """An environment with a made-up network path and scripted commands inside."""

    kind = "path"

    def __init__(self, host, inside=lambda argv: ok()):
        super().__init__(EnvSpec("path"))
        self.host, self.inside, self.execs = host, inside, []

    def net_path(self):
        return NetPath(env_address="10.215.0.2", host_address="10.215.0.1",
                       host_prefix=HOST_NS, env_prefix=["ip", "netns", "exec", "vb-t-e"],
                       remote_address="10.216.0.2", remote_prefix=REMOTE_NS)

    def exec(self, argv, timeout, env=None):
        self.execs.append(list(argv))
        return self.inside(argv)


def test_ping_hops_pings_each_hop_from_its_namespace_and_parses_real_output(fixture_text):
    captured = fixture_text("network", "ping-veth-per-packet.stdout")
    host = FakeHost(lambda argv: captured)
    bench = REGISTRY["ping-hops"]
    params = bench.params(quick=True)
    outcome = bench.run_trial(PathEnv(host), params)
    assert outcome.ok, outcome.error
    pings = [(argv[:4], argv[-1], argv[argv.index("-c") + 1]) for argv, _, _ in host.runs]
    n, w = str(params["count"]), str(params["warmup"])
    assert pings == [(REMOTE_NS, "10.215.0.1", w), (REMOTE_NS, "10.215.0.1", n),
                     (HOST_NS, "10.215.0.2", w), (HOST_NS, "10.215.0.2", n),
                     (REMOTE_NS, "10.215.0.2", w), (REMOTE_NS, "10.215.0.2", n)]
    assert all(t == bench.timeout(params) for _, t, _ in host.runs)
    # the captured run's per-packet median is 30 µs on every hop
    assert outcome.values == {"peer_host_rtt_us": 30.0, "host_env_rtt_us": 30.0,
                              "peer_env_rtt_us": 30.0, "virt_hop_share_pct": 100.0}


def test_ping_hops_a_ping_past_its_time_limit_fails_the_trial_saying_so():
    host = FakeHost(lambda argv: ExecResult(exit=-9, stdout="", stderr="", wall_s=9,
                                            timed_out=True))
    bench = REGISTRY["ping-hops"]
    outcome = bench.run_trial(PathEnv(host), bench.params(quick=True))
    assert not outcome.ok and "ping 10.215.0.1 timed out" in outcome.error


def test_tcp_serves_on_the_host_side_through_the_executor(fixture_text):
    report = fixture_text("network", "iperf3-bidir-1.json")
    host = FakeHost(lambda argv: "tcp LISTEN 0 5 10.215.0.1:5201 *:*" if "ss" in argv else "")
    env = PathEnv(host, inside=lambda argv: ok(report))
    bench = REGISTRY["tcp"]
    outcome = bench.run_trial(env, bench.params(quick=True))
    assert outcome.ok, outcome.error
    [(server, proc)] = host.started
    assert server == HOST_NS + ["iperf3", "-s", "-1", "-B", "10.215.0.1", "-p", "5201"]
    assert proc.returncode == -15                      # stopped after the trial
    assert host.runs[0][0] == HOST_NS + ["ss", "-H", "-ltnu", "sport = :5201"]
    [client] = env.execs
    assert client[:4] == ["ip", "netns", "exec", "vb-t-e"] and client[4:7] == [
        "iperf3", "-c", "10.215.0.1"]
    assert outcome.values["send_mbit_s"] > 0 and outcome.values["receive_mbit_s"] > 0


def test_a_server_that_exits_fails_the_trial_with_its_last_line():
    host = FakeHost(lambda argv: "")                 # never listening
    env = PathEnv(host)

    def dead_popen(argv, **kwargs):
        proc = FakeHost.popen(host, argv)
        proc.returncode = 1
        proc.stderr = io.BytesIO(b"iperf3: error - unable to bind\n")
        return proc

    host.popen = dead_popen
    bench = REGISTRY["tcp"]
    outcome = bench.run_trial(env, bench.params(quick=True))
    assert outcome.error == "iperf3 exited: iperf3: error - unable to bind"
    assert env.execs == []                           # no client without a server


def test_the_host_device_behind_a_backing_file_is_read_through_the_executor(fixture_text):
    outputs = {"/dev/loop0": fixture_text("physical_limit", "host-loop-device.txt"),
               "/var/tmp/vb-pl-capture.img": fixture_text("physical_limit",
                                                          "host-image-file.txt")}
    host = FakeHost(lambda argv: outputs[argv[-1]])
    facts = pl.host_device_facts("/dev/loop0", pl.on_host(host))
    assert facts["disk"] == ["vda"]
    assert [argv[:3] for argv, _, _ in host.runs] == [["sh", "-c", pl.DEVICE_FACTS_SCRIPT]] * 2
    assert [argv[-1] for argv, _, _ in host.runs] == ["/dev/loop0", "/var/tmp/vb-pl-capture.img"]


def test_stop_sends_sigint_first_and_collects_output():
    import subprocess
    import sys
    from virtbench.machinery.host.executor import HostExecutor
    host = HostExecutor()
    # a recorder that writes its file on SIGINT, as perf record does (its own handler, so it
    # works even where SIGINT was ignored on entry: a shell's trap would not)
    p = host.popen([sys.executable, "-c",
                    "import signal, sys, time\n"
                    "def done(*_):\n    print('wrote', flush=True); sys.exit(3)\n"
                    "signal.signal(signal.SIGINT, done)\n"
                    "print('started', flush=True)\ntime.sleep(30)\n"],
                   stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "started\n"
    r = host.stop(p, timeout=5)
    assert (r.exit, r.stdout, r.timed_out) == (3, "wrote\n", False)


def test_stop_kills_what_ignores_the_signal():
    import signal
    import subprocess
    from virtbench.machinery.host.executor import HostExecutor
    host = HostExecutor()
    p = host.popen(["sh", "-c", "trap '' INT; echo started; while :; do sleep 0.05; done"],
                   stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "started\n"
    r = host.stop(p, timeout=0.5)
    assert r.timed_out and r.exit == -signal.SIGKILL


def test_the_kvm_profiler_runs_its_commands_through_the_host_executor():
    from virtbench.machinery.exits.kvm import HostCommands
    from virtbench.machinery.agent.transport import ExecResult

    class Host:
        ran = []

        def run(self, argv, timeout, input=None):
            self.ran.append(argv)
            if argv[0] == "missing":
                return ExecResult(exit=127, stdout="", stderr="missing: not found on this host", wall_s=0.0)
            return ExecResult(exit=0, stdout="perf version 6.1\n", stderr="", wall_s=0.0)

    cmds = HostCommands(Host())
    assert cmds.run(["perf", "--version"], 30) == (0, "perf version 6.1\n", "")
    assert Host.ran == [["perf", "--version"]]
    import pytest
    with pytest.raises(FileNotFoundError):
        cmds.run(["missing"], 30)


def test_a_host_server_dies_with_virtbench_even_on_sigkill():
    # a SIGKILLed run used to leave its sockperf/iperf3 server running (own session, PID
    # recorded nowhere): the kernel now kills it with the process that started it
    import os
    import signal
    import subprocess
    import sys
    import time
    code = ("import subprocess, sys, time; from virtbench.machinery.host.executor import HostExecutor; "
            "p = HostExecutor().popen(['sleep', '300']); print(p.pid, flush=True); time.sleep(300)")
    owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    server = int(owner.stdout.readline())
    try:
        os.kill(server, 0)                       # it runs
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{server}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break                    # dead, waiting for init to reap it
            except FileNotFoundError:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the server outlived its SIGKILLed owner")
    finally:
        try:
            os.kill(server, signal.SIGKILL)
        except ProcessLookupError:
            pass
        owner.stdout.close()
