"""Killing `virtbench run` mid-way and resuming completes the run: no sample lost or twice."""
import os
import signal
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa

from virtbench.foundations.store import Store

TRIALS = 6
CASES = {"stream": 4, "pi": 1}   # benchmark -> metrics per trial


def _count_trials(url: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as c:
            return c.execute(sa.text("select count(*) from trials where trial >= 0")).scalar()
    except sa.exc.OperationalError:
        return 0
    finally:
        engine.dispose()


def _virtbench(*args):
    return [sys.executable, "-m", "virtbench.interface.cli.commands", *args]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_kill_then_resume_completes_without_loss_or_duplicates(store_url, tmp_path, sig):
    argv = _virtbench("run", "--env", "native", "--bench", "stream", "--bench", "pi",
                      "--trials", str(TRIALS), "--quick", "--min-section", "0", "--seed", "3",
                      "--no-progress")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while _count_trials(store_url) < 3:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no trials stored in time"
        time.sleep(0.05)
    os.killpg(proc.pid, sig) if sig == signal.SIGKILL else proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    store = Store(store_url)
    run = store.get_run()
    done_before = store.trials(run["id"])
    assert 3 <= len(done_before) < TRIALS * len(CASES), "the kill came too late to test anything"
    if sig == signal.SIGINT:
        assert proc.returncode == 130
        assert run["status"] == "interrupted"
        assert f"virtbench run --resume {run['id']}" in err.decode()

    resumed = subprocess.run(_virtbench("run", "--resume", run["id"], "--no-progress"),
                             capture_output=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr.decode()
    trials = store.trials(run["id"])
    slots = [(t["environment"], t["benchmark"], t["trial"]) for t in trials]
    assert len(slots) == len(set(slots)) == TRIALS * len(CASES)
    assert {(b, i) for _, b, i in slots} == {(b, i) for b in CASES for i in range(TRIALS)}
    # the trials stored before the kill are untouched
    before = {t["id"]: t["finished"] for t in done_before}
    assert all(t["finished"] == before[t["id"]] for t in trials if t["id"] in before)
    samples = store.samples(run["id"])
    assert len(samples) == TRIALS * sum(CASES.values())
    assert store.get_run(run["id"])["status"] == "complete"
    # the resumed part follows the same seeded plan: seq numbers are a permutation
    assert sorted(t["seq"] for t in trials) == list(range(TRIALS * len(CASES)))


def _runs_row(run_id: str) -> str:
    """`virtbench runs`'s row of `run_id` (another process, as a user would type it; wide
    enough for the row to be one line)."""
    out = subprocess.run(_virtbench("runs"), capture_output=True, text=True, timeout=60,
                         env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    return next((line for line in out.stdout.splitlines() if run_id in line), out.stdout)


def test_a_killed_run_is_shown_interrupted_with_its_resume_command(store_url):
    """SIGKILL leaves the run `running` in the store (nothing could say otherwise); `runs`
    sees its recorded process gone from this host and shows it `interrupted`, with the
    command that resumes it. While it still ran, it was `running`."""
    proc = subprocess.Popen(_virtbench("run", "--env", "native", "--bench", "pi", "--trials",
                                       "40", "--quick", "--min-section", "0", "--no-progress"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _count_trials(store_url) < 1:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no trials stored in time"
            time.sleep(0.05)
        run_id = Store(store_url).get_run()["id"]
        alive = _runs_row(run_id)
        assert proc.poll() is None, "the run ended before it could be seen running"
        assert " running " in alive and "--resume" not in alive
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert Store(store_url).get_run(run_id)["status"] == "running"     # as the kill left it
    row = _runs_row(run_id)
    assert " interrupted " in row and f"virtbench run --resume {run_id}" in row
