"""Stores for the tests: one filled by hand (environments with given samples per metric, no
guest needed), and the saved stores of real runs under tests/fixtures/reports."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from virtbench.foundations.store import Sample, Store, TrialRecord

SAVED = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def open_saved(file: str, tmp_path: Path) -> Store:
    """The saved store SAVED/`file` (an SQL dump) as a new SQLite file, opened (migrated)."""
    path = tmp_path / f"{Path(file).stem}.db"
    con = sqlite3.connect(path)
    con.executescript((SAVED / file).read_text())
    con.close()
    return Store(f"sqlite:///{path}")


def open_fixture(name: str, tmp_path: Path) -> tuple[Store, list[str]]:
    """The saved store `name` (SAVED/<name>-0003.sql) as a new SQLite file, opened (migrated);
    its run ids, oldest first."""
    store = open_saved(f"{name}-0003.sql", tmp_path)
    return store, [r["id"] for r in reversed(store.list_runs())]


def filled_run(store: Store, envs: dict[str, dict], samples: dict[str, dict[str, list[float]]],
               hib: bool = True, bench: str = "stream", baseline: str | None = "native",
               study_extra: dict | None = None, quick: bool = True, host: str = "testhost",
               series: str | None = None, options: dict[str, dict] | None = None,
               specs: dict[str, str] | None = None) -> str:
    """envs: label -> metadata; samples: label -> {metric: [values per trial]}; `series`:
    the named series the run is tagged into; `options`: label -> the environment's options;
    `specs`: label -> its spec as written (default: the label)."""
    study = {"name": "t", "environments": [{"spec": label} for label in envs],
             "benchmarks": [{"name": bench, "params": {}, "label": bench}],
             "trials": max(len(v) for m in samples.values() for v in m.values()),
             "baseline": baseline, "threshold_pct": 10.0, "seed": 1, "quick": quick,
             "source": None, **(study_extra or {})}
    run_id = store.create_run(study, seed=1, quick=quick, version="test", host=host,
                              series=series)
    for label, md in envs.items():
        kind = "native" if label.startswith("native") else "qemu"
        store.upsert_environment(run_id, label, kind=kind, spec=(specs or {}).get(label, label),
                                 options=(options or {}).get(label, {}), metadata=md,
                                 status="up")
    seq = 0
    for label, metrics in samples.items():
        n = len(next(iter(metrics.values())))
        for t in range(n):
            store.record_trial(run_id, TrialRecord(
                environment=label, benchmark=bench, benchmark_name=bench,
                params={}, trial=t, seq=seq, status="ok",
                samples=[Sample(m, v[t], "MB/s", hib) for m, v in metrics.items()]))
            seq += 1
    store.set_run_status(run_id, "complete")
    return run_id


def around(mean: float, n: int = 12, spread: float = 0.01) -> list[float]:
    """n deterministic values within ±spread of mean."""
    return [mean * (1 + spread * ((i * 7) % n - n / 2) / n) for i in range(n)]


def block_run(store: Store, samples: dict[str, dict[str, list[float]]], hib: bool = True,
              bench: str = "stream", baseline: str | None = "native",
              study_extra: dict | None = None, order=None, unit: str = "MB/s",
              detail: dict[tuple[str, int], dict] | None = None) -> str:
    """A run recorded as the plan runs it: randomised blocks, block t holding trial t of
    every environment, in the order `order(t)` gives (default: the labels as given), seq
    counting on across blocks. samples: label -> {metric: [value per block]}; `detail`:
    (label, block) -> the trial's detail (e.g. {"disturbed": "why"})."""
    labels = list(samples)
    study = {"name": "t", "environments": [{"spec": label} for label in labels],
             "benchmarks": [{"name": bench, "params": {}, "label": bench}],
             "trials": max(len(v) for m in samples.values() for v in m.values()),
             "baseline": baseline, "threshold_pct": 10.0, "seed": 1, "quick": True,
             "source": None, **(study_extra or {})}
    run_id = store.create_run(study, seed=1, quick=True, version="test", host="testhost")
    for label in labels:
        kind = "native" if label.startswith("native") else "qemu"
        store.upsert_environment(run_id, label, kind=kind, spec=label, options={}, metadata={},
                                 status="up")
    seq = 0
    for t in range(max(len(v) for m in samples.values() for v in m.values())):
        for label in (order(t) if order else labels):
            metrics = samples[label]
            if t >= len(next(iter(metrics.values()))):
                continue
            store.record_trial(run_id, TrialRecord(
                environment=label, benchmark=bench, benchmark_name=bench,
                params={}, trial=t, seq=seq, status="ok",
                samples=[Sample(m, v[t], unit, hib) for m, v in metrics.items()],
                detail=(detail or {}).get((label, t))))
            seq += 1
    store.set_run_status(run_id, "complete")
    return run_id


def guest_and_native(tmp_path: Path) -> tuple[str, str]:
    """(URL, run) of a store at tmp_path/S.db with one run: native, and a guest against it
    on stream's triad."""
    url = f"sqlite:///{tmp_path / 'S.db'}"
    store = Store(url)
    run = filled_run(store, {"native": {"cpu": "x86"}, "qemu-tcg/ide/e1000": {}},
                     {"native": {"triad": [100, 101, 99, 100]},
                      "qemu-tcg/ide/e1000": {"triad": [80, 82, 79, 81]}})
    store.engine.dispose()
    return url, run
