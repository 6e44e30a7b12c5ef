"""The live part of tests/unit/agent/test_agent.py: its tests that need root and this host.

The agent and its host-side client, over the subprocess transport used by `native`.
"""
import json
import subprocess
import sys
import time
import pytest
from virtbench.core.errors import AgentError, AgentSilent
from virtbench.machinery.agent.transport import AGENT_SOURCE, SubprocessAgent


@pytest.fixture
def agent():
    a = SubprocessAgent([sys.executable, str(AGENT_SOURCE), "--stdio"])
    yield a
    a.close()


def test_exec_timeout_kills_the_whole_process_group(agent, tmp_path):
    marker = tmp_path / "grandchild-alive"
    script = f"(sleep 3; touch {marker}) & sleep 30"
    t0 = time.monotonic()
    r = agent.exec(["sh", "-c", script], timeout=0.5)
    assert r.timed_out and time.monotonic() - t0 < 5
    time.sleep(3.5)
    assert not marker.exists()


def test_a_host_that_goes_away_mid_command_takes_the_command_with_it(tmp_path):
    """--stdio: the host's end closes (an ssh connection dropped) while a command runs: the
    agent kills it at once instead of leaving it to its time limit, then ends."""
    marker = tmp_path / "still-running"
    proc = subprocess.Popen([sys.executable, str(AGENT_SOURCE), "--stdio"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    req = {"id": 1, "op": "exec", "argv": ["sh", "-c", f"sleep 4; touch {marker}"],
           "timeout": 60}
    proc.stdin.write((json.dumps(req) + "\n").encode())
    proc.stdin.flush()
    time.sleep(0.5)                           # the command is running
    t0 = time.monotonic()
    proc.stdin.close()
    proc.stdout.close()
    assert proc.wait(timeout=10) is not None
    assert time.monotonic() - t0 < 3          # not the 4 s the command would take
    time.sleep(4.5)
    assert not marker.exists()


def test_an_agent_silent_past_alive_is_no_sign_of_life_not_a_late_answer(agent):
    import signal
    import threading
    from virtbench.machinery.agent.transport import SILENT
    r = agent.exec(["sleep", "3"], timeout=20, alive=2)     # alive, silent command: fine
    assert r.exit == 0
    threading.Timer(1.0, agent.proc.send_signal, (signal.SIGSTOP,)).start()  # a wedged machine
    t0 = time.monotonic()
    try:
        with pytest.raises(AgentSilent, match=f"{SILENT} for 2 s"):
            agent.exec(["sh", "-c", "echo before; sleep 60"], timeout=120, alive=2)
        assert time.monotonic() - t0 < 10                   # not the command's 120 s
    finally:
        agent.proc.send_signal(signal.SIGCONT)
    with pytest.raises(AgentError, match="no answer in time"):  # without alive: its limit
        agent.request("exec", wait=1.5, argv=["sleep", "5"], timeout=20, env={}, stream=True)
    agent.proc.kill()                          # not a shutdown behind the sleeps still queued
    agent.proc.wait()
