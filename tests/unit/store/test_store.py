"""The store: old stores open and upgrade; warm-ups stay out of the statistics; boots and
superseded trials are kept."""
import shutil

import pytest

import sqlalchemy as sa

from virtbench.foundations.store import Sample, Store, TrialRecord, upgrade

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

OLD = FIXTURES / "store" / "main-cf1ed1d.db"   # made by virtbench at main cf1ed1d (2 pi trials)


def _columns(path, table):
    engine = sa.create_engine(f"sqlite:///{path}")
    try:
        return {c["name"] for c in sa.inspect(engine).get_columns(table)}
    finally:
        engine.dispose()


def test_a_store_made_by_the_previous_schema_opens_and_upgrades(tmp_path):
    db = tmp_path / "old.db"
    shutil.copy(OLD, db)
    assert "warmup" not in _columns(db, "trials")           # really the old schema
    store = Store(f"sqlite:///{db}")
    assert {"warmup", "boot"} <= _columns(db, "trials")
    run = store.get_run()
    old_trials = store.trials(run["id"])
    assert [t["trial"] for t in old_trials] == [0, 1]
    assert all(t["warmup"] is False and t["boot"] is None for t in old_trials)
    assert len(store.samples(run["id"])) == 2
    assert store.boots(run["id"]) == [] and store.superseded_trials(run["id"]) == []
    assert upgrade(store.engine) == []                       # idempotent
    # and the upgraded store takes new rows
    store.record_trial(run["id"], TrialRecord(
        environment="native", benchmark="pi", benchmark_name="pi",
        params={}, trial=-1, seq=-1, status="ok", warmup=True,
        samples=[Sample("seconds", 1.0, "s", False)]))
    assert len(store.trials(run["id"])) == 2 and len(store.trials(run["id"], include_warmup=True)) == 3


def _trial(store, run_id, trial, status="ok", warmup=False, boot=None, value=1.0):
    return store.record_trial(run_id, TrialRecord(
        environment="native", benchmark="pi", benchmark_name="pi",
        params={}, trial=trial, seq=trial, status=status, warmup=warmup,
        boot=boot, error=None if status == "ok" else "boom",
        samples=[Sample("seconds", value, "s", False)] if status == "ok" else []))


def test_warmups_are_stored_but_not_statistics(store_url):
    store = Store(store_url)
    run_id = store.create_run({"name": "t"}, seed=1, quick=True, version="0", host="h")
    _trial(store, run_id, -1, warmup=True, value=99.0)
    _trial(store, run_id, 0, value=1.0)
    assert [s["value"] for s in store.samples(run_id)] == [1.0]
    assert [t["trial"] for t in store.trials(run_id)] == [0]
    assert {t["trial"] for t in store.trials(run_id, include_warmup=True)} == {-1, 0}
    assert len(store.samples(run_id, include_warmup=True)) == 2
    assert (("native", "pi", -1)) in store.done_slots(run_id)


def test_supersede_failed_keeps_the_old_rows_and_frees_the_slots(store_url):
    store = Store(store_url)
    run_id = store.create_run({"name": "t"}, seed=1, quick=True, version="0", host="h")
    _trial(store, run_id, 0)
    failed_id = _trial(store, run_id, 1, status="failed")
    assert store.supersede_failed(run_id) == 1
    assert store.done_slots(run_id) == {("native", "pi", 0)}
    old = store.superseded_trials(run_id)
    assert [(o["trial_id"], o["trial"], o["status"], o["error"]) for o in old] == \
        [(failed_id, 1, "failed", "boom")]
    _trial(store, run_id, 1)                          # the slot can be run again
    assert store.supersede_failed(run_id) == 0


def test_boots_are_numbered_and_list_the_trials_they_served(store_url):
    store = Store(store_url)
    run_id = store.create_run({"name": "t"}, seed=1, quick=True, version="0", host="h")
    assert store.record_boot(run_id, "native", "first start", boot_s=1.0) == 1
    _trial(store, run_id, 0, boot=1)
    store.end_boot(run_id, "native", 1, lost="QEMU exited")
    assert store.record_boot(run_id, "native", "restart after: QEMU exited") == 2
    _trial(store, run_id, 1, boot=2)
    rows = store.boots(run_id)
    assert [(b["boot"], b["lost"], b["trials"]) for b in rows] == \
        [(1, "QEMU exited", [("pi", 0)]), (2, None, [("pi", 1)])]


def test_a_fleet_and_its_runs(store_url):
    from virtbench.core.errors import VirtbenchError
    store = Store(store_url)
    fid = store.create_fleet({"name": "quick"}, ["a", "b"])
    assert store.get_fleet(fid)["hosts"] == ["a", "b"]
    ra = store.create_run({"name": "quick"}, seed=1, quick=True, version="x", host="a", fleet=fid)
    store.create_run({"name": "quick"}, seed=1, quick=True, version="x", host="c")
    assert [(r["id"], r["host"]) for r in store.fleet_runs(fid)] == [(ra, "a")]
    assert [f["id"] for f in store.list_fleets()] == [fid]
    with pytest.raises(VirtbenchError, match="no fleet run"):
        store.get_fleet("fleet-nope")


def test_a_run_s_detail_is_merged_key_by_key(store_url):
    store = Store(store_url)
    run_id = store.create_run({"name": "s"}, seed=1, quick=False, version="x", host="h")
    assert store.get_run(run_id)["detail"] is None
    store.update_run_detail(run_id, calibration={"pi": {"repetitions": 9}})
    store.update_run_detail(run_id, adaptive={"stopped": "budget"})
    store.update_run_detail(run_id, calibration={"pi": {"repetitions": 9}, "stream": {}})
    assert store.get_run(run_id)["detail"] == {
        "calibration": {"pi": {"repetitions": 9}, "stream": {}},
        "adaptive": {"stopped": "budget"}}


def test_a_made_up_run_id_already_taken_is_made_again(tmp_path, monkeypatch):
    # ids are the second plus 4 hex digits: runs made in one second can draw the same one
    from virtbench.foundations.store import core
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    ids = iter(["20261128-120000-abcd", "20261128-120000-abcd", "20261128-120000-beef"])
    monkeypatch.setattr(core, "new_run_id", lambda: next(ids))
    study = {"name": "t"}
    first = store.create_run(study, seed=1, quick=True, version="t", host="h")
    second = store.create_run(study, seed=1, quick=True, version="t", host="h")
    assert (first, second) == ("20261128-120000-abcd", "20261128-120000-beef")
