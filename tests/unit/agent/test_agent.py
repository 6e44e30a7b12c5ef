"""The agent and its host-side client, over the subprocess transport used by `native`."""
import json
import subprocess
import sys
import time
import pytest
from virtbench.core.errors import AgentError
from virtbench.machinery.agent.transport import AGENT_SOURCE, SubprocessAgent


@pytest.fixture
def agent():
    a = SubprocessAgent([sys.executable, str(AGENT_SOURCE), "--stdio"])
    yield a
    a.close()


def test_ping_reports_version_and_host(agent):
    reply = agent.ping()
    assert reply["agent_version"] == 1 and reply["hostname"]


def test_exec_returns_exit_output_and_times(agent):
    r = agent.exec(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (r.exit, r.stdout, r.stderr, r.timed_out) == (3, "out\n", "err\n", False)
    assert r.wall_s > 0


def test_exec_counts_cpu_time_of_the_child(agent):
    r = agent.exec([sys.executable, "-c", "sum(i*i for i in range(3_000_000))"], timeout=60)
    assert r.exit == 0 and r.user_s > 0.05


def test_exec_passes_env_and_stdin(agent):
    r = agent.exec(["sh", "-c", "echo $VB_X; cat"], timeout=10, env={"VB_X": "hello"}, stdin="in")
    assert r.stdout == "hello\nin"


def test_missing_program_is_exit_127_not_a_crash(agent):
    r = agent.exec(["/nonexistent/tool"], timeout=5)
    assert r.exit == 127 and "nonexistent" in r.stderr
    assert agent.ping()["ok"]


def test_put_and_get_round_trip(agent, tmp_path):
    path = str(tmp_path / "sub" / "file.bin")
    data = bytes(range(256)) * 100
    agent.put(path, data, mode=0o755)
    assert agent.get(path) == data
    assert (tmp_path / "sub" / "file.bin").stat().st_mode & 0o777 == 0o755


def test_bad_requests_get_errors_and_the_agent_survives(agent):
    with pytest.raises(AgentError, match="unknown op"):
        agent.request("dance", wait=5)
    with pytest.raises(AgentError, match="No such file"):
        agent.get("/nonexistent/file")
    assert agent.ping()["ok"]


def test_malformed_line_is_answered_not_fatal():
    proc = subprocess.run([sys.executable, str(AGENT_SOURCE), "--stdio"],
                          input=b'not json\n{"id": 7, "op": "ping"}\n', capture_output=True,
                          timeout=10)
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert replies[0]["ok"] is False and "malformed" in replies[0]["error"]
    assert replies[1]["id"] == 7 and replies[1]["ok"] is True


def test_a_dead_agent_is_an_agent_error(agent):
    agent.proc.kill()
    agent.proc.wait()
    with pytest.raises(AgentError):
        agent.ping(timeout=2)


class PartialWriter:
    """Like a virtio-serial port: each write takes at most 4 KB of what it is given."""

    def __init__(self):
        self.data = bytearray()

    def write(self, b):
        chunk = bytes(b[:4096])
        self.data += chunk
        return len(chunk)

    def flush(self):
        pass


def test_replies_are_written_whole_on_a_port_that_takes_part_of_each_write():
    import io

    from virtbench.machinery.agent import program as agent
    request = json.dumps({"id": 3, "op": "exec", "timeout": 30,
                          "argv": [sys.executable, "-c", "print('x' * 100_000)"]}) + "\n"
    out = PartialWriter()
    agent.serve(io.BytesIO(request.encode()), out)
    reply = json.loads(bytes(out.data))
    assert reply["id"] == 3 and len(reply["stdout"]) == 100_001


def test_large_replies_arrive_whole_over_a_serial_line():
    """The serial transport end to end, on a pty: a 200 KB reply arrives complete."""
    import os
    import termios

    from virtbench.machinery.agent.transport import AgentClient

    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, str(AGENT_SOURCE), "--serial", os.ttyname(slave)])
    try:
        # a guest's agent is up before the host speaks: wait until it has made the line raw
        deadline = time.monotonic() + 10
        while termios.tcgetattr(slave)[3] & termios.ECHO:
            assert time.monotonic() < deadline, "the agent never put the line in raw mode"
            time.sleep(0.05)
        client = AgentClient(master, master, name="serial")
        r = client.exec([sys.executable, "-c", "print('x' * 200_000)"], timeout=30)
        assert r.exit == 0 and len(r.stdout) == 200_001
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
        os.close(slave)


def test_exec_streams_the_output_while_the_command_runs(agent):
    events = []
    t0 = time.monotonic()
    reply = agent.request("exec", wait=30,
                          on_event=lambda e: events.append((time.monotonic() - t0, e)),
                          argv=["sh", "-c", "echo first; sleep 2.5; echo second"], timeout=20,
                          env={}, stream=True)
    assert reply["stdout"] == "first\nsecond\n"         # the reply still has all of it
    first = [(at, e) for at, e in events if "first" in e["stdout"]]
    assert first and first[0][0] < 2.0                    # seen well before the command ended
    assert all(e["event"] == "output" and e["id"] == reply["id"] for _, e in events)


def test_a_quiet_command_streams_nothing(agent):
    events = []
    reply = agent.request("exec", wait=30, on_event=events.append, argv=["sleep", "1.5"],
                          timeout=20, env={}, stream=True)
    assert reply["exit"] == 0 and events == []


def test_a_quiet_command_with_a_heartbeat_says_it_is_alive(agent):
    events = []
    t0 = time.monotonic()
    reply = agent.request("exec", wait=30, on_event=lambda e: events.append(
        (time.monotonic() - t0, e)), argv=["sleep", "3.5"], timeout=20, env={}, stream=True,
        heartbeat=1)
    assert reply["exit"] == 0 and reply["stdout"] == ""
    assert [e for _, e in events] == [{"event": "alive", "id": reply["id"]}] * len(events)
    assert 2 <= len(events) <= 4                    # about one a second, none after the end
    assert all(b - a >= 0.9 for (a, _), (b, _) in zip(events, events[1:]))


def test_streaming_sends_only_the_newest_part_of_a_flood(agent):
    events = []
    script = "import sys, time; sys.stdout.write('y' * 200000); sys.stdout.flush(); time.sleep(1.5)"
    reply = agent.request("exec", wait=30, on_event=events.append,
                          argv=[sys.executable, "-c", script], timeout=20, env={}, stream=True)
    assert len(reply["stdout"]) == 200000
    from virtbench.machinery.agent.program import STREAM_CHUNK
    assert events and all(len(e["stdout"]) <= STREAM_CHUNK for e in events)
    assert sum(len(e["stdout"]) + e.get("skipped", {}).get("stdout", 0) for e in events) == 200000


def test_an_agent_lost_mid_command_leaves_the_output_that_arrived(agent):
    import threading
    threading.Timer(2.0, agent.proc.kill).start()
    with pytest.raises(AgentError) as lost:
        agent.exec(["sh", "-c", "echo 'measured 42'; echo 'half way' >&2; sleep 30"],
                   timeout=60)
    assert lost.value.stdout == "measured 42\n" and lost.value.stderr == "half way\n"


def test_ping_says_the_agents_monotonic_clock(agent):
    before = time.monotonic()
    mono = agent.ping()["mono"]
    assert before <= mono <= time.monotonic()          # the same clock here: a local agent
