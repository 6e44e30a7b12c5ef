"""host/runproc.py: a `running` run whose process is gone from this host is shown
`interrupted`, decided on a fake /proc (pid absent, pid reused by a later process, a reboot)
and on this process's own /proc; a run of another host, or of an older virtbench that
recorded nothing, stays `running`; a run records its process when it starts and resumes."""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from storekit import filled_run
from virtbench.measure import benchmarks
from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.interface.cli import commands as cli
from virtbench.machinery.host import runproc
from virtbench.foundations.store import Store

BOOT = "5d2c7a8e-0000-4000-8000-000000000001"
# a real /proc/PID/stat line (a command name with a space and a ')' in it): field 22 is 7012345
STAT = ("4242 (python3 x) y) S 1 4242 4242 0 -1 4194560 2280 0 0 0 7 2 0 0 20 0 1 0 7012345 "
        "26054656 2790 18446744073709551615 1 1 0 0 0 0 0 16781312 2 0 0 0 17 1 0 0 0 0 0")


def fake_proc(root: Path, pids: dict[int, str], boot: str = BOOT) -> Path:
    """A /proc with `pids` (pid -> start time) and the boot id."""
    for pid, start in pids.items():
        (root / str(pid)).mkdir(parents=True)
        (root / str(pid) / "stat").write_text(STAT.replace("7012345", start))
    (root / runproc.BOOT_ID).parent.mkdir(parents=True)
    (root / runproc.BOOT_ID).write_text(boot + "\n")
    return root


def test_field_22_after_a_command_name_with_spaces_and_parentheses():
    assert runproc.stat_start_time(STAT) == "7012345"
    assert runproc.stat_start_time("4242 (x) S 1") is None
    assert runproc.stat_start_time("") is None


def test_read_from_a_fake_proc(tmp_path):
    proc = fake_proc(tmp_path, {4242: "7012345"})
    assert runproc.start_time(4242, proc) == "7012345"
    assert runproc.start_time(4243, proc) is None
    assert runproc.boot_id(proc) == BOOT
    assert runproc.boot_id(tmp_path / "none") is None


def run_of(recorded: dict | None, status: str = "running") -> dict:
    return {"id": "r1", "status": status,
            "detail": {"kernels_build": "x", **({"process": recorded} if recorded else {})}}


RECORDED = {"host": "box", "boot": BOOT, "pid": 4242, "start": "7012345"}


@pytest.mark.parametrize("pids, boot, recorded, shown", [
    ({4242: "7012345"}, BOOT, RECORDED, "running"),                  # alive: the same process
    ({}, BOOT, RECORDED, "interrupted"),                             # killed: pid absent
    ({4242: "9999999"}, BOOT, RECORDED, "interrupted"),              # the pid reused since
    ({4242: "7012345"}, "another-boot", RECORDED, "interrupted"),    # rebooted since
    ({}, BOOT, {**RECORDED, "host": "other"}, "running"),            # another host's: unknown
    ({}, BOOT, None, "running"),                                     # nothing recorded
    ({}, BOOT, {**RECORDED, "start": None}, "running"),              # no start time: unknown
    ({}, BOOT, {**RECORDED, "pid": "4242"}, "running"),              # not a pid
    ({4242: "7012345"}, BOOT, {**RECORDED, "boot": None}, "running"),
])
def test_the_decision_on_a_fake_proc(tmp_path, pids, boot, recorded, shown):
    proc = fake_proc(tmp_path, pids, boot)
    now = runproc.HostNow("box", runproc.boot_id(proc), lambda pid: runproc.start_time(pid, proc))
    assert runproc.shown_status(run_of(recorded), now) == shown
    assert runproc.resume_hint("r1", shown) == (
        "virtbench run --resume r1" if shown == "interrupted" else "")


@pytest.mark.parametrize("status", ["complete", "interrupted", "failed"])
def test_only_a_running_run_is_decided(tmp_path, status):
    now = runproc.HostNow("box", BOOT, lambda pid: None)
    assert runproc.shown_status(run_of(RECORDED, status), now) == status


def test_this_process_is_alive_and_a_dead_child_is_gone():
    me = runproc.this_process()
    assert me["host"] == socket.gethostname() and me["pid"] == os.getpid()
    assert me["start"] and me["start"].isdigit() and me["boot"]
    assert not runproc.process_gone(me, runproc.here())
    pid = os.fork()
    if pid == 0:                                     # the child records itself and exits
        os._exit(0)
    child = {**me, "pid": pid, "start": runproc.start_time(pid)}
    os.waitpid(pid, 0)
    assert runproc.process_gone(child, runproc.here())


def test_runs_shows_a_killed_run_interrupted_with_its_resume_command(capsys, store_url):
    store = Store(store_url)
    alive = filled_run(store, {"native": {}}, {"native": {"triad": [1.0, 2.0, 3.0]}})
    gone = filled_run(store, {"native": {}}, {"native": {"triad": [1.0, 2.0, 3.0]}})
    elsewhere = filled_run(store, {"native": {}}, {"native": {"triad": [1.0, 2.0, 3.0]}})
    me = runproc.this_process()
    dead = {**me, "pid": 2**22 + 1}                  # above pid_max's default: never a process
    for run_id, recorded in ((alive, me), (gone, dead), (elsewhere, {**dead, "host": "other"})):
        store.set_run_status(run_id, "running", finished=False)
        store.update_run_detail(run_id, process=recorded)
    store.engine.dispose()
    assert cli.main(["runs"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines()
            if line.count("│") > 3 and "study" not in line}
    assert "running" in rows[alive] and "--resume" not in rows[alive]
    assert "interrupted" in rows[gone] and f"virtbench run --resume {gone}" in rows[gone]
    assert "running" in rows[elsewhere] and "--resume" not in rows[elsewhere]


def test_the_web_views_runs_list_says_so_too(store_url):
    from starlette.testclient import TestClient

    from virtbench.interface.web.app import make_app
    store = Store(store_url)
    gone = filled_run(store, {"native": {}}, {"native": {"triad": [1.0, 2.0, 3.0]}})
    store.set_run_status(gone, "running", finished=False)
    store.update_run_detail(gone, process={**runproc.this_process(), "pid": 2**22 + 1})
    store.engine.dispose()
    page = TestClient(make_app(Store(store_url, read_only=True))).get("/runs").text
    assert '<span class="fail">interrupted</span>' in page
    assert f"virtbench run --resume {gone}" in page


class _Echo(Benchmark):
    name = "echo-one"
    family = "test"
    metrics = (Metric("value", "x", True),)

    def argv(self, params, env):
        return ["sh", "-c", 'echo \'{"value": 1}\'']

    def parse(self, stdout):
        from virtbench.measure.benchmarks.base import last_json_line, number
        return {"value": number(last_json_line(stdout), "value")}


def test_a_run_records_its_process_when_it_starts_and_when_it_resumes(capsys, store_url,
                                                                      monkeypatch):
    monkeypatch.setitem(benchmarks.REGISTRY, "echo-one", _Echo())
    assert cli.main(["run", "--bench", "echo-one", "--trials", "2", "--no-progress"]) == 0
    store = Store(store_url)
    run = store.get_run()
    assert run["detail"]["process"] == runproc.this_process()
    store.update_run_detail(run["id"], process={"host": "elsewhere"})
    assert cli.main(["run", "--resume", run["id"], "--no-progress"]) == 0
    assert store.get_run(run["id"])["detail"]["process"] == runproc.this_process()
    assert store.get_run(run["id"])["detail"]["kernels_build"]      # the rest merged, kept
