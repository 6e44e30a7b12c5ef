"""A store filled by hand: environments with given samples per metric (no guest needed)."""
from __future__ import annotations

from virtbench.store import Sample, Store


def filled_run(store: Store, envs: dict[str, dict], samples: dict[str, dict[str, list[float]]],
               hib: bool = True, bench: str = "stream", baseline: str | None = "native",
               study_extra: dict | None = None, quick: bool = True, host: str = "testhost") -> str:
    """envs: label -> metadata; samples: label -> {metric: [values per trial]}."""
    study = {"name": "t", "environments": [{"spec": label} for label in envs],
             "benchmarks": [{"name": bench, "params": {}, "label": bench}],
             "trials": max(len(v) for m in samples.values() for v in m.values()),
             "baseline": baseline, "threshold_pct": 10.0, "seed": 1, "quick": quick,
             "source": None, **(study_extra or {})}
    run_id = store.create_run(study, seed=1, quick=quick, version="test", host=host)
    for label, md in envs.items():
        kind = "native" if label.startswith("native") else "qemu"
        store.upsert_environment(run_id, label, kind=kind, spec=label, options={}, metadata=md,
                                 status="up")
    seq = 0
    for label, metrics in samples.items():
        n = len(next(iter(metrics.values())))
        for t in range(n):
            store.record_trial(run_id, environment=label, benchmark=bench, benchmark_name=bench,
                               params={}, trial=t, seq=seq, status="ok",
                               samples_=[Sample(m, v[t], "MB/s", hib) for m, v in metrics.items()])
            seq += 1
    store.set_run_status(run_id, "complete")
    return run_id


def around(mean: float, n: int = 12, spread: float = 0.01) -> list[float]:
    """n deterministic values within ±spread of mean."""
    return [mean * (1 + spread * ((i * 7) % n - n / 2) / n) for i in range(n)]
