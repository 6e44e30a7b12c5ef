"""The live part of tests/unit/environments/test_capability_skips.py: its tests that need a server.

The runner skips, before anything runs, every (environment, benchmark) case the environment
says it cannot run: one line on the console, one stored warning, shown by --dry-run; and no
benchmark of the registry uses an environment hook it has not declared a need for.
"""
import json
import os
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store

TCP_WHY = ("ssh: network benchmarks need peer=ADDR, this host's address as the target "
           "reaches it")


@pytest.fixture
def target(loopback_sshd):
    server, known = loopback_sshd
    return (f"ssh:host=127.0.0.1,port={server.port},key={server.identity},"
            f"known_hosts={known},name=loop")


def test_ssh_without_peer_skips_tcp_with_one_line_and_runs_pi(target, capsys, store_url):
    code = cli.main(["run", "--env", target, "--bench", "pi", "--bench", "tcp", "--trials",
                     "2", "--quick", "--min-section", "0", "--no-progress", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 0, err
    lines = [line for line in err.splitlines() if "tcp" in line]
    assert lines == [f"skipping tcp on loop: {TCP_WHY}"]
    assert cli.main(["report", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["benchmark"] for r in data["results"]} == {"pi"}
    # both trials ran; one the host disturbed (steal, run queue) is kept but left out of n
    assert [r["n"] + len(r["disturbed"]) for r in data["results"]] == [2]
    skipped = [w for w in data["warnings"] if w["kind"] == "benchmark_skipped"]
    assert [(w["environment"], w["benchmark"]) for w in skipped] == [("loop", "tcp")]
    run_id = Store(store_url).get_run()["id"]
    trials = Store(store_url).trials(run_id, include_warmup=True)
    assert trials and {t["benchmark"] for t in trials} == {"pi"}


def test_a_study_whose_every_case_is_skipped_exits_cleanly_with_the_reason(
        target, capsys, store_url):
    code = cli.main(["run", "--env", target, "--bench", "tcp", "--bench", "ping-hops",
                     "--trials", "1", "--quick", "--min-section", "0", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"skipping tcp on loop: {TCP_WHY}" in err
    assert "skipping ping-hops on loop: ssh: ping-hops needs a remote machine" in err
    assert "nothing to run" in err
    assert not os.path.exists(store_url[len("sqlite:///"):])      # no empty run stored
    # the connection resolve() opened is closed: no control directory of ours is left
    from virtbench.machinery.host import workroot
    from virtbench.machinery.host.net.sshsession import CONTROL_PREFIX
    assert not [d for d in workroot.root().glob(f"{CONTROL_PREFIX}*") if json.loads(
        (d / "manifest.json").read_text())["owner"].split()[0] == str(os.getpid())]


def test_dry_run_shows_the_skipped_cases_and_counts_without_them(capsys):
    code = cli.main(["run", "--env", "native", "--env", "ssh:host=192.0.2.1,name=x",
                     "--bench", "pi", "--bench", "tcp", "--trials", "2", "--quick", "--min-section", "0",
                     "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"  skipped tcp on x: {TCP_WHY}" in out.splitlines()
    # (2 trials + 1 warm-up) x (2 x 2 - 1) cases
    assert "- 1 skipped case(s) = 9 trials" in out
