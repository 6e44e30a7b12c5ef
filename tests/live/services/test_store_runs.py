"""Real `virtbench run`s against a real PostgreSQL (and SQLite): the report family reads them,
two runs writing one store at once lose nothing, and a store that goes away mid-run ends the run
in one line with every committed trial kept, resumable once the store is back."""
import csv
import io
import json
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa
from pgserver import store_url_on_both  # noqa: F401  (store_url: SQLite and PostgreSQL)

from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store


def _virtbench(*args):
    return [sys.executable, "-m", "virtbench.interface.cli.commands", *args]


def _run(url, *args, timeout=120):
    out = subprocess.run(_virtbench("run", "--env", "native", "--no-progress", "--seed", "5",
                                    "--store", url, *args),
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out


def _count(url, sql):
    engine = sa.create_engine(url)
    try:
        with engine.connect() as c:
            return c.execute(sa.text(sql)).scalar()
    finally:
        engine.dispose()


def test_run_then_the_whole_report_family_on_postgresql(pg_server, capsys, tmp_path):
    # postgresql:// (no driver named) as a user would write it, with a password (the test
    # server trusts its socket, so it is accepted and must never be printed)
    url = pg_server.url_for().replace("postgresql+psycopg://postgres@",
                                      "postgresql://postgres:s3cret@")
    _run(url, "--bench", "pi:k=14", "--trials", "3")
    _run(url, "--bench", "pi:k=14", "--trials", "3")
    store = Store(url)
    runs = store.list_runs()
    assert len(runs) == 2 and all(r["status"] == "complete" for r in runs)
    new, old = runs[0]["id"], runs[1]["id"]
    capsys.readouterr()

    assert cli.main(["runs", "--store", url]) == 0
    listed = capsys.readouterr().out
    assert new in listed and old in listed and "s3cret" not in listed
    for fmt in ("table", "markdown", "html", "json", "csv"):
        assert cli.main(["report", new, "--format", fmt, "--store", url]) == 0, fmt
        text = capsys.readouterr().out
        assert "s3cret" not in text, fmt
        if fmt == "json":
            doc = json.loads(text)
            assert doc["run"]["id"] == new
            result = doc["results"][0]
            # three trials ran; one the host disturbed is kept in the store but left out of n
            assert result["environment"] == "native"
            assert result["n"] + len(result["disturbed"]) == 3 and result["n"] >= 1
            assert result["benchmark"].startswith("pi")
        elif fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(text)))
            assert rows and all(r["environment"] == "native" for r in rows)
        elif fmt == "html":
            assert "<html" in text.lower() and "native" in text
        else:
            assert "native" in text and "pi" in text
    assert cli.main(["report", "--format", "json", "--store", url]) == 0   # the latest
    assert json.loads(capsys.readouterr().out)["run"]["id"] == new
    assert cli.main(["compare", old, new, "--format", "json", "--store", url]) == 0
    comparison = json.loads(capsys.readouterr().out)
    assert "native" in json.dumps(comparison)
    assert cli.main(["compare", old, new, "--store", url]) == 0
    assert "native" in capsys.readouterr().out


def test_two_runs_writing_one_store_at_once_lose_nothing(store_url):
    # both start on an empty store: they create it (once, under a lock) and write it at once;
    # the kernels are built first (two first builds at once would race in virtbench.machinery.kernels.build)
    from virtbench.machinery.kernels import build as kernels
    kernels.build()
    trials = 15
    argv = _virtbench("run", "--env", "native", "--bench", "pi:k=14", "--trials", str(trials),
                      "--min-section", "0", "--no-progress", "--store", store_url)
    procs = [subprocess.Popen(argv + ["--seed", str(seed)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    store = Store(store_url)
    runs = store.list_runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"complete"}
    for run in runs:
        slots = [(t["environment"], t["benchmark"], t["trial"]) for t in store.trials(run["id"])]
        assert sorted(t for _, _, t in slots) == list(range(trials))
        assert len(store.samples(run["id"])) == trials           # one metric per pi trial
    # and nothing beside them: every sample belongs to one trial of one of the two runs
    assert _count(store_url, "select count(*) from samples s join trials t on t.id = s.trial_id"
                  " where t.trial >= 0") == 2 * trials
    assert _count(store_url, "select count(*) from (select distinct run_id, environment, "
                  "benchmark, trial from trials) d") == \
        _count(store_url, "select count(*) from trials")


def test_postgresql_going_away_mid_run_ends_in_one_line_and_the_run_resumes(pg_server):
    url = pg_server.url_for()
    trials = 20
    proc = subprocess.Popen(_virtbench("run", "--env", "native", "--bench", "pi", "--quick", "--min-section", "0",
                                       "--trials", str(trials), "--seed", "9", "--no-progress",
                                       "--store", url),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while _trials_stored(url) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no trials stored in time"
            time.sleep(0.05)
        pg_server.stop()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        pg_server.start()
    assert proc.returncode == 3, err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"virtbench: store {url} went away during trial native · pi"), line
    run_id = Store(url).list_runs()[0]["id"]
    kept = int(line.split("; the ")[1].split(" trial(s)")[0])
    assert f"once it is back, resume with `virtbench run --resume {run_id}`" in line
    assert [x for x in err.strip().splitlines() if x.startswith("virtbench:")] == [line]

    store = Store(url)
    before = store.trials(run_id, include_warmup=True)
    # a commit whose answer was lost in the shutdown may be one more than the run counted
    assert kept <= len(before) <= kept + 1 and len(store.trials(run_id)) < trials
    assert store.get_run(run_id)["status"] == "running"      # left by a process that stopped
    resumed = subprocess.run(_virtbench("run", "--resume", run_id, "--no-progress",
                                        "--store", url),
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    after = store.trials(run_id)
    assert sorted(t["trial"] for t in after) == list(range(trials))
    assert len(store.samples(run_id)) == trials
    kept_rows = {t["id"]: (t["trial"], t["finished"]) for t in before}
    now_rows = {t["id"]: (t["trial"], t["finished"])
                for t in store.trials(run_id, include_warmup=True)}
    assert all(now_rows[i] == kept_rows[i] for i in kept_rows)
    assert store.get_run(run_id)["status"] == "complete"


def _trials_stored(url):
    try:
        return _count(url, "select count(*) from trials where trial >= 0")
    except sa.exc.ProgrammingError:      # the run has not made the tables yet
        return 0


def test_a_store_that_is_down_is_one_line_and_exit_2(pg_server):
    url = pg_server.url_for()
    Store(url)
    pg_server.stop()
    try:
        out = subprocess.run(_virtbench("runs", "--store", url), capture_output=True,
                             text=True, timeout=60)
    finally:
        pg_server.start()
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"virtbench: store {url}: cannot open ("), \
        lines


def test_a_store_object_says_store_unavailable_then_works_again_after_a_restart(pg_server):
    from virtbench.foundations.store import Sample, StoreUnavailable, TrialRecord
    store = Store(pg_server.url_for())
    run_id = store.create_run({"name": "t"}, seed=1, quick=True, version="0", host="h")
    pg_server.stop()
    try:
        with pytest.raises(StoreUnavailable) as exc:
            store.record_trial(run_id, TrialRecord(
                environment="native", benchmark="pi", benchmark_name="pi",
                params={}, trial=0, seq=0, status="ok",
                samples=[Sample("seconds", 1.0, "s", False)]))
    finally:
        pg_server.start()
    assert exc.value.exit_code == 3
    assert str(exc.value).startswith(f"store {store.url} went away during "
                                     "Store.record_trial() (")
    assert "\n" not in str(exc.value)
    # a long-lived process (a fleet worker) goes on with the same Store once it is back
    store.record_trial(run_id, TrialRecord(
        environment="native", benchmark="pi", benchmark_name="pi",
        params={}, trial=0, seq=0, status="ok", samples=[Sample("seconds", 1.0, "s", False)]))
    assert len(store.samples(run_id)) == 1
