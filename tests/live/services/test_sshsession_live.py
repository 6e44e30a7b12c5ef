"""The live part of tests/unit/host/test_sshsession.py: its tests that need a server.

The ssh transport: its failure messages on real ssh output, and a session against a private
sshd started here on 127.0.0.1.
"""
import re
import time
from pathlib import Path
import pytest
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.host.net.sshsession import TIMED_OUT, SshOptions, SshSession


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
    from virtbench.machinery.host.net.sshd import keygen
    keygen(tmp_path / "other")
    bad = SshOptions(opts.host, port=opts.port, key=str(tmp_path / "other"),
                     known_hosts=opts.known_hosts)
    with SshSession(bad) as s, pytest.raises(VirtbenchError, match="refused the key"):
        s.run(["true"], timeout=10)
