"""The ssh transport: its failure messages on real ssh output, and a session against a private
sshd started here on 127.0.0.1."""
import re
import pytest
from virtbench.machinery.host.net.sshsession import SshOptions, describe_failure, remote_command, ssh_argv

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


def test_a_target_found_unreachable_is_not_tried_again_on_the_way_out(fixture_text,
                                                                       monkeypatch):
    """close() after a command found nothing listening: the master is told to exit, the
    staged directory's removal is not tried (another ConnectTimeout each on a gone host)."""
    import subprocess
    from virtbench.core.errors import VirtbenchError
    from virtbench.machinery.host.net import sshsession
    code, stderr = captured(fixture_text, "refused")
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        ok = "-O" in argv
        return subprocess.CompletedProcess(argv, 0 if ok else code, b"",
                                           b"" if ok else stderr.encode())

    monkeypatch.setattr(sshsession.shutil, "which", lambda name: "/usr/bin/ssh")
    monkeypatch.setattr(sshsession.subprocess, "run", fake_run)
    session = sshsession.SshSession(OPTS)
    session.staging = "/tmp/virtbench-staged"
    with pytest.raises(VirtbenchError, match="nothing listens"):
        session.run(["true"], timeout=5)
    assert session.unreachable and "nothing listens" in session.unreachable
    session.close()
    assert [a for a in calls if any("rm -rf" in w for w in a)] == []
    assert any("-O" in a for a in calls)          # the master connection is still ended


def test_a_target_that_answers_again_is_cleaned_up_on_the_way_out(fixture_text, monkeypatch):
    import subprocess
    from virtbench.core.errors import VirtbenchError
    from virtbench.machinery.host.net import sshsession
    code, stderr = captured(fixture_text, "refused")
    answers = [(code, stderr.encode()), (0, b"")]
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        rc, err = answers.pop(0) if answers else (0, b"")
        return subprocess.CompletedProcess(argv, rc, b"", err)

    monkeypatch.setattr(sshsession.shutil, "which", lambda name: "/usr/bin/ssh")
    monkeypatch.setattr(sshsession.subprocess, "run", fake_run)
    session = sshsession.SshSession(OPTS)
    session.staging = "/tmp/virtbench-staged"
    with pytest.raises(VirtbenchError):
        session.run(["true"], timeout=5)
    session.run(["true"], timeout=5)
    assert session.unreachable is None
    session.close()
    assert any("rm -rf -- /tmp/virtbench-staged" in a[-1] for a in calls)
