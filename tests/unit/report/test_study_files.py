"""Every study file in studies/ loads; what the battery already has, validates."""
from __future__ import annotations

from pathlib import Path

import pytest
from fetchedkit import fake_fetched

from virtbench.core.metric_id import identify
from virtbench.measure import benchmarks, environments
from virtbench.study import design as study

STUDIES = sorted((Path(__file__).resolve().parents[3] / "studies").glob("*.toml"))
SEEDS = ["riken-2012", "virtualbox-ahci-2010", "zhang-kvm-io", "cnaf-xen-kvm-2009",
         "xen-domu-io-2006"]


def test_the_five_seed_studies_are_there():
    names = {p.stem for p in STUDIES}
    assert set(SEEDS) <= names


@pytest.fixture(autouse=True)
def _fetched_qemu(tmp_path, monkeypatch):
    """A study may name a fetched QEMU (binary=fetched:SUITE, studies/upgrade.toml): a fake
    one in a private cache, so its environments are created as on a host that fetched it."""
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    fake_fetched(tmp_path / "cache", "bookworm-backports", "10.0.2")


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_study_loads(path):
    s = study.load(path)
    assert s.name == path.stem
    assert s.environments and s.benchmarks
    # the baseline every ratio is against is one of the study's own environments
    specs = {study.normalize_spec(e.spec) for e in s.environments}
    names = {e.parsed().options.get("name") for e in s.environments} - {None}
    baseline = study.default_baseline(s.baseline, specs)
    # named by its spec, or by its name= (which is its label)
    assert baseline is not None and (baseline in names or study.normalize_spec(baseline)
                                     in specs), (baseline, specs, names)
    labels = [c.label for c in s.benchmarks]
    assert len(labels) == len(set(labels))
    skipped = {spec for spec, _ in study.skipped_environments(s)}
    for e in s.environments:
        if e.spec in skipped:
            continue
        spec = e.parsed()
        if spec.kind in environments.KINDS:
            environments.create(spec)      # its options are valid for its kind
    if path.stem in SEEDS:
        assert s.trials == 12 and s.threshold_pct == 10.0      # the published method
        assert s.published, "a published study carries its source's figures"


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_registered_benchmarks_validate(path):
    """Parameters and published metric names of every benchmark that exists already."""
    s = study.load(path)
    for case in s.benchmarks:
        bench = benchmarks.get(case.name)           # every one exists (test below)
        bench.params(case.params, quick=False)
        bench.params(case.params, quick=True)
    by_label = {c.label: c.name for c in s.benchmarks}
    for p in s.published:
        if p["unmeasured"]:                         # a figure the study cannot measure
            assert p["benchmark"] not in by_label, p
            continue
        bench = benchmarks.get(by_label[p["benchmark"]])
        own = {m.name for m in bench.metrics}
        # or a group's spread or fairness of one of them (an instances=N environment's)
        base = identify([*own, p["metric"]])[p["metric"]].base
        assert base in own, (p["benchmark"], p["metric"])


def test_every_benchmark_named_by_a_study_exists():
    """The battery is complete: every benchmark a study file names is registered."""
    missing = sorted({c.name for p in STUDIES for c in study.load(p).benchmarks}
                     - set(benchmarks.REGISTRY))
    assert missing == [], f"study files name unregistered benchmarks: {missing}"
