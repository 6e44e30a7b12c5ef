"""Stores of repeated runs for the history's tests: the same study several times with chosen
values and metadata (storekit.filled_run), with or without a step where a fact changed."""
from __future__ import annotations

import numpy as np
from storekit import filled_run

from virtbench.foundations.store import Store


def trials(level: float, seed: int, n: int = 5, sd: float = 0.01) -> list[float]:
    return list(level * np.exp(sd * np.random.default_rng(seed).standard_normal(n)))


def stepped_store(url: str, before: int = 6, after: int = 3, factor: float = 0.8,
                  series: str | None = None, host: str = "testhost") -> Store:
    """`before` runs of native and box, then `after` with box `factor` times as fast and
    its cpus option changed (the label kept by name=: `container:name=box`, then
    `container:cpus=0.5,name=box`)."""
    store = Store(url)
    for i in range(before + after):
        moved = i >= before
        filled_run(store, {"native": {"host_kernel": "6.1.0"},
                           "box": {"host_kernel": "6.1.0"}},
                   {"native": {"triad": trials(100, 2 * i)},
                    "box": {"triad": trials(90 * (factor if moved else 1.0), 2 * i + 1)}},
                   options={"box": {"cpus": "0.5" if moved else None, "name": "box"}},
                   specs={"box": "container:cpus=0.5,name=box" if moved else
                          "container:name=box"},
                   series=series, host=host)
    return store


def aa_store(url: str, runs: int = 8) -> Store:
    store = Store(url)
    for i in range(runs):
        filled_run(store, {"native": {}, "box": {}},
                   {"native": {"triad": trials(100, 100 + 2 * i)},
                    "box": {"triad": trials(90, 101 + 2 * i)}})
    return store
