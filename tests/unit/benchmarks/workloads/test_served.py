"""The loopback script: a real server (a shell's `nc`-free stand-in: python's http.server
is not assumed; `sleep` and files suffice) started, waited for, driven and always stopped."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from virtbench.measure.benchmarks.workloads import served
from virtbench.measure.benchmarks.workloads.served import Served


def run(s: Served, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run(s.argv(), capture_output=True, text=True, timeout=timeout)


def test_work_words_are_quoted_and_the_work_directory_stands_in():
    assert served.cmd(["a b", "{work}/x y", "$HOME", "{work}"]) == \
        "'a b' \"$work\"'/x y' '$HOME' \"$work\""
    assert served.word("") == "''"


def test_server_ready_client_output_then_nothing_left(tmp_path):
    s = Served(server=["sh", "-c", "touch up; echo $$ > pid; exec sleep 30"],
               ready=["test", "-e", "up"], client=["sh", "-c", "echo client ran in $PWD"],
               setup=[["sh", "-c", "echo set > conf"]], scratch=str(tmp_path))
    r = run(s)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"client ran in {tmp_path}/virtbench-served.")
    assert list(tmp_path.iterdir()) == []                     # the work directory is gone
    work = r.stdout.split()[-1]
    out = subprocess.run(["pgrep", "-f", "exec sleep 30"], capture_output=True, text=True)
    assert work not in out.stdout


def test_a_server_that_never_answers_is_one_line_and_stopped(tmp_path):
    s = Served(server=["sleep", "30"], ready=["false"], client=["true"], ready_s=0.5,
               scratch=str(tmp_path))
    started = time.monotonic()
    r = run(s)
    assert r.returncode == served.NOT_READY_EXIT
    assert r.stderr.splitlines()[0] == "virtbench: server not ready after 0.5 s"
    assert time.monotonic() - started < 10 and list(tmp_path.iterdir()) == []


def test_a_server_that_exits_first_says_so_with_its_log(tmp_path):
    s = Served(server=["sh", "-c", "echo bad config >&2; exit 3"], ready=["false"],
               client=["true"], scratch=str(tmp_path))
    r = run(s)
    assert r.returncode == served.SERVER_GONE_EXIT
    assert r.stderr.splitlines() == ["virtbench: the server exited before it answered",
                                     "bad config"]


def test_a_failed_setup_step_names_itself(tmp_path):
    s = Served(server=["sleep", "30"], ready=["true"], client=["true"],
               setup=[["sh", "-c", "echo no space >&2; exit 4"]], scratch=str(tmp_path))
    r = run(s)
    assert r.returncode == 4
    assert r.stderr.splitlines() == ["virtbench: setup step sh failed (exit 4)", "no space"]
    assert list(tmp_path.iterdir()) == []


def test_the_clients_exit_is_the_trials_and_warmup_output_is_dropped(tmp_path):
    s = Served(server=["sleep", "30"], ready=["true"], warmup=[["echo", "warm"]],
               client=["sh", "-c", "echo measured; exit 5"], scratch=str(tmp_path))
    r = run(s)
    assert (r.returncode, r.stdout) == (5, "measured\n")


def test_term_mid_client_stops_the_server_and_cleans_up(tmp_path):
    marker = tmp_path / "server-pid"
    s = Served(server=["sh", "-c", f"echo $$ > {marker}; exec sleep 60"],
               ready=["test", "-s", str(marker)], client=["sleep", "60"],
               scratch=str(tmp_path))
    p = subprocess.Popen(s.argv(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(100):
        if marker.exists() and marker.read_text().strip():
            break
        time.sleep(0.05)
    time.sleep(0.3)
    pid = int(marker.read_text())
    p.terminate()
    assert p.wait(timeout=15) == 143
    assert not Path(f"/proc/{pid}").exists()
    assert [q.name for q in tmp_path.iterdir()] == ["server-pid"]


@pytest.mark.parametrize("user", ["nobody"])
def test_the_server_may_run_as_another_user(tmp_path, user):
    import os
    if os.geteuid() != 0:
        pytest.skip("needs root")
    tmp_path.chmod(0o755)
    s = Served(server=["sh", "-c", "id -un > whoami; exec sleep 30"],
               ready=["test", "-s", "{work}/whoami"], client=["cat", "{work}/whoami"],
               server_user=user, scratch=str(tmp_path))
    r = run(s)
    assert (r.returncode, r.stdout) == (0, f"{user}\n"), r.stderr


def test_the_setup_runs_as_the_servers_user_too(tmp_path):
    import os
    if os.geteuid() != 0:
        pytest.skip("needs root")
    tmp_path.chmod(0o755)
    s = Served(server=["sleep", "30"], ready=["true"], client=["cat", "{work}/setup-by"],
               setup=[["sh", "-c", "id -un > setup-by"]], server_user="nobody",
               scratch=str(tmp_path))
    r = run(s)
    assert (r.returncode, r.stdout) == (0, "nobody\n"), r.stderr


def test_a_failed_warmup_says_why_with_its_last_lines(tmp_path):
    s = Served(server=["sleep", "30"], ready=["true"], client=["true"],
               warmup=[["sh", "-c", "echo loading; echo relation missing >&2; exit 2"]],
               scratch=str(tmp_path))
    r = run(s)
    assert r.returncode == 2
    assert r.stderr.splitlines() == ["virtbench: warm-up sh failed (exit 2)", "loading",
                                     "relation missing"]
    assert list(tmp_path.iterdir()) == []


def test_a_server_that_exits_mid_run_ends_a_client_that_would_wait_for_ever(tmp_path):
    # the server answers, then exits after 0.5 s; the client would sleep a minute
    s = Served(server=["sh", "-c", "touch up; sleep 0.5; echo crashed >&2; exit 1"],
               ready=["test", "-e", "up"], client=["sleep", "61.25"], scratch=str(tmp_path))
    started = time.monotonic()
    r = run(s)
    assert r.returncode == served.SERVER_GONE_EXIT
    assert r.stderr.splitlines() == ["virtbench: the server exited during the run", "crashed"]
    assert time.monotonic() - started < 10 and list(tmp_path.iterdir()) == []
    out = subprocess.run(["pgrep", "-f", "^sleep 61.25$"], capture_output=True, text=True)
    assert out.stdout == ""
