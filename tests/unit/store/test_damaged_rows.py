"""Stored data is input (issue 37): a row a person or another tool edited is one line naming
the run and what is wrong, exit 2, never a traceback; the other runs stay readable (`runs`
lists the damaged one as damaged, `history` leaves it out and names it); nothing is written
(the store's sha256 is the same after every command)."""
from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from storekit import around, filled_run

from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store

# (what the test edits, the SQL that edits it (? = the damaged run's id), what the line says)
DAMAGE = [
    ("study not JSON", "UPDATE runs SET study = 'name: t, trials: 12' WHERE id = ?",
     "its row of runs is damaged: study is not JSON: 'name: t, trials: 12'"),
    ("study a list", "UPDATE runs SET study = '[1, 2]' WHERE id = ?",
     "its row of runs is damaged: study must be a JSON object, not [1, 2]"),
    ("started not a date", "UPDATE runs SET started = 'last tuesday' WHERE id = ?",
     "its row of runs is damaged: started is not a date: 'last tuesday'"),
    ("trial detail a list", "UPDATE trials SET detail = '[\"disturbed\"]' WHERE id = "
     "(SELECT min(id) FROM trials WHERE run_id = ?)",
     "of trials is damaged: detail must be a JSON object, not ['disturbed']"),
    ("sample 'abc'", "UPDATE samples SET value = 'abc' WHERE id = (SELECT min(samples.id) "
     "FROM samples JOIN trials ON trials.id = trial_id WHERE run_id = ?)",
     "of samples is damaged: value must be a number, not 'abc'"),
    ("sample 1e999", "UPDATE samples SET value = 1e999 WHERE id = (SELECT min(samples.id) "
     "FROM samples JOIN trials ON trials.id = trial_id WHERE run_id = ?)",
     "of samples is damaged: value must be a finite number, not inf"),
    ("environment options text", "UPDATE environments SET options = '\"none\"' WHERE "
     "run_id = ? AND label = 'qemu'",
     "of environments is damaged: options must be a JSON object, not 'none'"),
]
# the stored study's values edited: the row reads, the study is checked like a study file's
STUDY_DAMAGE = [
    ("alpha 0", "UPDATE runs SET study = json_set(study, '$.alpha', 0) WHERE id = ?",
     "its stored study is damaged: alpha 0 is out of range: give a significance level in "
     "(0, 0.5], e.g. alpha = 0.05"),
    ("threshold -5", "UPDATE runs SET study = json_set(study, '$.threshold_pct', -5) "
     "WHERE id = ?",
     "its stored study is damaged: threshold_pct -5 is out of range: give a verdict "
     "threshold in % in (0, 100), e.g. threshold_pct = 10"),
    ("analysis unknown", "UPDATE runs SET study = json_set(study, '$.analysis', 'magic') "
     "WHERE id = ?",
     "its stored study is damaged: analysis must be 'paired' or 'unpaired', not 'magic'"),
    ("a benchmark without a name", "UPDATE runs SET study = json_remove(study, "
     "'$.benchmarks[0].name') WHERE id = ?",
     "its stored study is damaged: benchmarks[1].name is missing"),
]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def two_runs(tmp_path) -> tuple[str, Path, str, str]:
    """A store of two complete runs (the first the one a test damages), closed: its URL,
    file and the runs' ids."""
    path = tmp_path / "s.db"
    store = Store(f"sqlite:///{path}")
    ids = [filled_run(store, {"native": {}, "qemu": {}},
                      {"native": {"rate": around(100, 6)}, "qemu": {"rate": around(90, 6)}},
                      series="nightly") for _ in range(2)]
    store.engine.dispose()          # nothing of the store's left in a pool or a WAL file
    return f"sqlite:///{path}", path, ids[0], ids[1]


def damage(path: Path, sql: str, run_id: str) -> None:
    con = sqlite3.connect(path)
    with con:
        assert con.execute(sql, (run_id,)).rowcount == 1
    con.close()


def run_cli(capsys, *argv) -> tuple[int, str, list[str]]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


@pytest.mark.parametrize("what, sql, words", DAMAGE + STUDY_DAMAGE,
                         ids=[d[0] for d in DAMAGE + STUDY_DAMAGE])
def test_report_of_a_damaged_run_is_one_line_exit_2_and_writes_nothing(
        capsys, tmp_path, what, sql, words):
    url, path, bad, good = two_runs(tmp_path)
    damage(path, sql, bad)
    before = sha256(path)
    code, out, err = run_cli(capsys, "report", bad, "--store", url)
    assert code == 2 and out == ""
    assert len(err) == 1 and err[0].startswith(f"virtbench: run {bad}: ")
    assert words in err[0] and "restore the store from a backup" in err[0]
    assert run_cli(capsys, "report", good, "--store", url, "--format", "json")[0] == 0
    assert sha256(path) == before


@pytest.mark.parametrize("what, sql, words", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_runs_lists_the_others_and_the_damaged_one_as_damaged(
        capsys, tmp_path, what, sql, words):
    url, path, bad, good = two_runs(tmp_path)
    damage(path, sql, bad)
    before = sha256(path)
    code, out, err = run_cli(capsys, "runs", "--store", url)
    assert code == 0 and err == []
    listed = {line.split("│")[1].strip(): line for line in out.splitlines()
              if line.count("│") > 3 and "20" in line.split("│")[1]}
    assert "complete" in listed[good]
    if words.startswith("its row of runs"):        # the runs row itself: listed as damaged
        assert "damaged" in listed[bad]
        (line,) = [line for line in out.splitlines() if line.startswith(f"run {bad}: ")]
        assert words in line
    else:                                          # its other rows: `report` finds them
        assert "complete" in listed[bad]
    assert sha256(path) == before


@pytest.mark.parametrize("what, sql, words", DAMAGE + STUDY_DAMAGE,
                         ids=[d[0] for d in DAMAGE + STUDY_DAMAGE])
def test_history_leaves_a_damaged_run_out_and_names_it(capsys, tmp_path, what, sql, words):
    url, path, bad, good = two_runs(tmp_path)
    damage(path, sql, bad)
    before = sha256(path)
    code, out, err = run_cli(capsys, "history", "--store", url, "--format", "json")
    assert code == 0
    assert len(err) == 1 and err[0].startswith(f"history: left out run {bad}: ")
    assert words in err[0]
    assert '"runs": 1' in out and good in out and bad not in out
    assert sha256(path) == before


def test_history_of_damaged_runs_only_is_one_line_exit_2(capsys, tmp_path):
    url, path, bad, good = two_runs(tmp_path)
    damage(path, DAMAGE[0][1], bad)
    damage(path, DAMAGE[2][1], good)
    before = sha256(path)
    code, out, err = run_cli(capsys, "history", "--store", url)
    assert code == 2 and out == "" and len(err) == 1
    assert err[0].startswith(f"virtbench: no complete run in {url} can be read: run ")
    assert "(and 1 more damaged)" in err[0]
    assert sha256(path) == before


@pytest.mark.parametrize("what, sql, words", STUDY_DAMAGE[:2] + DAMAGE[:1],
                         ids=[d[0] for d in STUDY_DAMAGE[:2] + DAMAGE[:1]])
def test_resume_checks_the_stored_study_like_a_study_file(capsys, tmp_path, what, sql, words):
    url, path, bad, _ = two_runs(tmp_path)
    damage(path, "UPDATE runs SET status = 'interrupted' WHERE id = ?", bad)
    damage(path, sql, bad)
    before = sha256(path)
    code, out, err = run_cli(capsys, "run", "--resume", bad, "--store", url, "--no-progress")
    assert code == 2 and out == ""
    assert len(err) == 1 and err[0].startswith(f"virtbench: run {bad}: ") and words in err[0]
    assert sha256(path) == before


def test_resume_refuses_a_stored_setting_it_does_not_know(capsys, tmp_path):
    """A key another virtbench stored: reading leaves it out, resuming would lose it."""
    url, path, bad, _ = two_runs(tmp_path)
    damage(path, "UPDATE runs SET study = json_set(study, '$.warp', 9) WHERE id = ?", bad)
    before = sha256(path)
    code, _, err = run_cli(capsys, "run", "--resume", bad, "--store", url, "--no-progress")
    assert code == 2 and len(err) == 1
    assert f"run {bad}: its stored study has key 'warp', which virtbench" in err[0]
    assert "resume it with that version" in err[0]
    assert run_cli(capsys, "report", bad, "--store", url)[0] == 0     # it still reads
    assert sha256(path) == before


def test_the_web_view_lists_a_damaged_run_and_answers_its_page_with_the_line(tmp_path):
    from starlette.testclient import TestClient

    from virtbench.interface.web.app import make_app
    url, path, bad, good = two_runs(tmp_path)
    damage(path, DAMAGE[2][1], bad)                     # runs.started not a date
    before = sha256(path)
    store = Store(url, read_only=True)
    client = TestClient(make_app(store))
    listed = client.get("/runs")
    assert listed.status_code == 200 and bad in listed.text and good in listed.text
    assert "damaged" in listed.text
    page = client.get(f"/runs/{bad}")
    assert page.status_code == 404 and "started is not a date" in page.text
    assert client.get(f"/runs/{good}").status_code == 200
    assert client.get("/series").status_code == 200      # the history leaves it out
    store.engine.dispose()
    assert sha256(path) == before
