"""The ssh transport: its failure messages on real ssh output, and a session against a private
sshd started here on 127.0.0.1."""
import os
import re
import time
from pathlib import Path

import pytest

from virtbench.errors import VirtbenchError
from virtbench.sshsession import (TIMED_OUT, SshOptions, SshSession, describe_failure,
                                  remote_command, ssh_argv)

OPTS = SshOptions(host="127.0.0.1", port=2222, known_hosts="/k/known_hosts")


def captured(fixture_text, case):
    text = fixture_text("ssh", f"{case}.txt")
    code = int(re.search(r"^exit: (\d+)$", text, re.M).group(1))
    return code, text.split("--stderr--\n", 1)[1]


@pytest.mark.parametrize("case, words", [
    ("wrong-key", "refused the key"),
    ("unknown-host-key", "is not known: add it to /k/known_hosts"),
    ("changed-host-key", "has changed since it was recorded"),
    ("refused", "nothing listens for ssh at 127.0.0.1:2222"),
    ("unresolvable", "does not resolve"),
])
def test_each_ssh_failure_is_one_line_with_the_fix(fixture_text, case, words):
    code, stderr = captured(fixture_text, case)
    message = describe_failure(OPTS, code, stderr)
    assert message is not None and words in message and "\n" not in message


def test_a_remote_commands_own_failure_is_not_sshs(fixture_text):
    code, stderr = captured(fixture_text, "no-python")
    assert code == 127 and describe_failure(OPTS, code, stderr) is None


def test_argv_verifies_host_keys_and_multiplexes():
    argv = ssh_argv(SshOptions("h", user="u", port=2200, key="/id"), "/c")
    assert argv[-1] == "h" and "StrictHostKeyChecking=yes" in argv and "BatchMode=yes" in argv
    assert "ControlPath=/c/cm" in argv and argv[argv.index("-i") + 1] == "/id"
    assert remote_command(["echo", "a b"], 2.5) == "timeout -k 5 3 echo 'a b'"


@pytest.fixture
def sshd(loopback_sshd):
    server, known = loopback_sshd
    return server, SshOptions("127.0.0.1", port=server.port, key=server.identity,
                              known_hosts=str(known))


def test_session_runs_commands_stages_files_and_leaves_nothing(sshd, tmp_path):
    server, opts = sshd
    local = tmp_path / "tool.sh"
    local.write_text("#!/bin/sh\necho staged-$1\n")
    with SshSession(opts) as s:
        assert re.fullmatch(r"3\.\d+", s.check())
        r = s.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
        assert (r.exit, r.stdout, r.stderr) == (3, "out\n", "err\n")
        assert s.run(["cat"], timeout=10, stdin=b"through").stdout == "through"
        where = s.stage({"tool.sh": local})
        assert s.run([f"{where}/tool.sh", "x"], timeout=10).stdout == "staged-x\n"
        control = Path(s._control)
    assert not Path(where).exists()          # the target here is this machine
    assert not control.exists()


def test_a_hung_remote_command_is_killed(sshd):
    _, opts = sshd
    with SshSession(opts) as s:
        t0 = time.monotonic()
        r = s.run(["sleep", "30"], timeout=1)
        assert r.exit == TIMED_OUT and time.monotonic() - t0 < 10


def test_a_wrong_key_is_one_line_naming_the_fix(sshd, tmp_path):
    _, opts = sshd
    from virtbench.sshd import keygen
    keygen(tmp_path / "other")
    bad = SshOptions(opts.host, port=opts.port, key=str(tmp_path / "other"),
                     known_hosts=opts.known_hosts)
    with SshSession(bad) as s, pytest.raises(VirtbenchError, match="refused the key"):
        s.run(["true"], timeout=10)
