"""A trial as the store is handed it (store/record.py TrialRecord): Store.record_trial writes
every field into its row of `trials` and one row of `samples` per value, as it did when it
took them as keywords; a failed trial's output is cut to its tail; a status other than ok or
failed is refused where the record is made."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from virtbench.foundations.store import OUTPUT_TAIL_BYTES, Sample, Store, TrialRecord
from virtbench.foundations.store.schema import samples, trials

STARTED = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def a_record(**changes) -> TrialRecord:
    fields = dict(environment="qemu-kvm", benchmark="pi[k=17]", benchmark_name="pi",
                  params={"k": 17}, trial=3, seq=11, status="ok",
                  samples=[Sample("seconds", 2.5, "s", False)], error=None, exit=0,
                  stdout="pi 3.14\n", stderr="note\n", wall_s=2.75, started=STARTED,
                  warmup=False, boot=2, detail={"load": {"cpu_share": 0.97}})
    return TrialRecord(**{**fields, **changes})


def test_the_row_holds_every_column_of_trials_but_its_id():
    row = a_record().row("r1")
    assert set(row) == {c.name for c in trials.columns} - {"id"}
    assert set(a_record().sample_rows(7)[0]) == {c.name for c in samples.columns} - {"id"}


def test_every_field_of_the_record_is_stored(store_url):
    store = Store(store_url)
    run_id = store.create_run({"name": "t"}, seed=1, quick=False, version="0", host="h")
    store.record_trial(run_id, a_record())
    store.record_trial(run_id, a_record(trial=-1, seq=0, warmup=True, boot=None, detail=None,
                                        samples=[]))
    got = store.trials(run_id, include_warmup=True)
    assert [t["trial"] for t in got] == [-1, 3]
    t = got[1]
    assert {k: t[k] for k in ("environment", "benchmark", "benchmark_name", "params", "trial",
                              "seq", "status", "error", "exit", "stdout", "stderr", "wall_s",
                              "warmup", "boot", "detail")} == {
        "environment": "qemu-kvm", "benchmark": "pi[k=17]", "benchmark_name": "pi",
        "params": {"k": 17}, "trial": 3, "seq": 11, "status": "ok", "error": None, "exit": 0,
        "stdout": "pi 3.14\n", "stderr": "note\n", "wall_s": 2.75, "warmup": False, "boot": 2,
        "detail": {"load": {"cpu_share": 0.97}}}
    assert t["started"].replace(tzinfo=timezone.utc) == STARTED and t["finished"] is not None
    assert got[0]["warmup"] is True and got[0]["detail"] is None and got[0]["boot"] is None
    [s] = store.samples(run_id)
    assert (s["metric"], s["value"], s["unit"], s["base_metric"], s["scope"]) == \
        ("seconds", 2.5, "s", "seconds", "single")


def test_a_failed_trial_keeps_the_tail_of_its_output_and_says_how_long_it_was():
    long = "x" * (OUTPUT_TAIL_BYTES + 10)
    row = a_record(status="failed", error="boom", stdout=long, stderr="short").row("r1")
    assert len(row["stdout"]) == OUTPUT_TAIL_BYTES and row["stderr"] == "short"
    assert row["detail"] == {"load": {"cpu_share": 0.97}, "stdout_bytes": OUTPUT_TAIL_BYTES + 10}
    assert a_record(stdout=long).row("r1")["stdout"] == long      # an ok trial's is whole


def test_a_status_other_than_ok_or_failed_is_refused_where_the_record_is_made():
    with pytest.raises(ValueError, match="trial status 'done': ok or failed"):
        a_record(status="done")
