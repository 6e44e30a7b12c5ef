"""Runs lined up into series (virtbench/results/history): stores made with storekit (fake runs with
chosen values and metadata), read back as the command reads them."""
import numpy as np
import pytest
from historykit import aa_store, stepped_store, trials
from storekit import filled_run

from virtbench.core.errors import VirtbenchError
from virtbench.results.history import HistoryRequest, failing, history
from virtbench.results.history.facts import changed_facts
from virtbench.foundations.store import Store


def find(report, kind: str, env: str):
    [s] = [s for s in report.series if s.kind == kind and s.environment == env]
    return s


def test_runs_line_up_into_value_and_ratio_series_one_point_per_run(store_url):
    store = stepped_store(store_url)
    report = history(store)
    assert report.runs == 9
    assert {(s.kind, s.environment, s.reference) for s in report.series} == {
        ("value", "native", None), ("value", "box", None), ("ratio", "box", "native")}
    box = find(report, "value", "box")
    assert (box.host, box.benchmark, box.metric, box.params, box.quick) == \
        ("testhost", "stream", "triad", {}, True)
    runs = [r["id"] for r in store.complete_runs()]
    assert [p.run for p in box.points] == runs
    assert len(box.points[0].samples) == 5 and box.points[0].n == 5
    ratio = find(report, "ratio", "box")
    assert ratio.points[0].value == pytest.approx(box.points[0].value / 100, rel=0.05)
    assert ratio.points[0].ci_low < ratio.points[0].value < ratio.points[0].ci_high


def test_a_step_where_an_option_changed_is_confirmed_and_explained(store_url):
    report = history(stepped_store(store_url))
    runs = [p.run for p in find(report, "value", "native").points]
    for kind in ("value", "ratio"):
        [c] = find(report, kind, "box").changes
        assert (c.status, c.kind, c.run, c.direction, c.regression) == \
            ("confirmed", "fact", runs[6], "worse", True)
        assert [(f.key, f.before, f.after, f.option) for f in c.facts] == [
            ("option:cpus", "default", "0.5", "cpus")]
        assert c.separate == [] and c.study is None             # one change: nothing to part
        assert c.ratio == pytest.approx(0.8, abs=0.03) and c.p_adjusted < 0.05
    assert find(report, "value", "native").changes == []      # no fact of native changed
    assert report.fact_points_tested == 2


def test_several_facts_at_once_name_the_facts_to_separate(store_url):
    store = Store(store_url)
    for i in range(8):
        new = i >= 5
        filled_run(store, {"native": {}, "vm": {"qemu_version": "10.0.2" if new else "7.2.22",
                                                "guest_kernel": "6.12" if new else "6.1"}},
                   {"native": {"triad": trials(100, i)}, "vm": {"triad": trials(50, 50 + i)}})
    report = history(store, HistoryRequest(environments=["vm"]))
    [c] = find(report, "value", "vm").changes
    assert [(f.key, f.before, f.after) for f in c.facts] == [
        ("qemu_version", "7.2.22", "10.0.2"), ("guest_linux", "6.1", "6.12")]
    assert c.separate == [] and c.study is None     # no option made them: no study parts them
    assert c.status == "no change"          # the level did not move at that point


def test_several_options_at_once_come_with_the_study_that_separates_them(store_url, tmp_path):
    from virtbench.study.design import load
    store = Store(store_url)
    for i in range(8):
        new = i >= 5
        spec = ("qemu:binary=/opt/q10/qemu-system-x86_64,linux=bookworm-backports,name=vm"
                if new else "qemu:name=vm")
        filled_run(store, {"native": {}, "vm": {"qemu_version": "10.0.2" if new else "7.2.22"}},
                   {"native": {"triad": trials(100, i)}, "vm": {"triad": trials(50, 50 + i)}},
                   specs={"vm": spec})
    report = history(store, HistoryRequest(environments=["vm"]))
    [c] = find(report, "value", "vm").changes
    assert c.separate == ["binary", "linux"]
    path = tmp_path / "separate.toml"
    path.write_text(c.study)
    study = load(path)
    assert [e.spec for e in study.environments] == [
        "qemu:name=vm-before",
        "qemu:binary=/opt/q10/qemu-system-x86_64,linux=bookworm-backports,name=vm-after",
        "qemu:binary=/opt/q10/qemu-system-x86_64,name=vm-binary-only",
        "qemu:linux=bookworm-backports,name=vm-linux-only"]
    assert study.baseline == "qemu:name=vm-before"
    assert [b.name for b in study.benchmarks] == ["stream"]


def test_an_aa_store_has_no_confirmed_change(store_url):
    report = history(aa_store(store_url))
    assert [c for s in report.series for c in s.changes if c.status == "confirmed"] == []
    assert all(s.noise_floor_pct is not None and s.mde_pct is not None for s in report.series)
    assert failing(report, "change") == []


def test_fail_on_regression_and_change_and_last(store_url):
    report = history(stepped_store(store_url, factor=0.8))
    assert len(failing(report, "regression")) == 2
    assert len(failing(report, "regression", last=3)) == 2     # the step's run is 3rd last
    assert failing(report, "regression", last=2) == []


def test_an_improvement_is_a_change_not_a_regression(store_url):
    report = history(stepped_store(store_url, factor=1.25))
    assert len(failing(report, "change")) == 2
    assert failing(report, "regression") == []


def test_series_and_host_filters(store_url):
    store = stepped_store(store_url, before=3, after=0, series="nightly")
    filled_run(store, {"native": {}}, {"native": {"triad": trials(100, 9)}}, host="other")
    assert history(store, HistoryRequest(series="nightly")).runs == 3
    assert history(store, HistoryRequest(host="other")).runs == 1
    assert history(store).runs == 4
    with pytest.raises(VirtbenchError, match=r"--series weekly: no run in .* is tagged so; "
                                             r"its series: nightly"):
        history(store, HistoryRequest(series="weekly"))
    with pytest.raises(VirtbenchError, match=r"--host nosuch: .* its hosts: other, testhost"):
        history(store, HistoryRequest(host="nosuch"))
    with pytest.raises(VirtbenchError, match="matches --env/--bench/--metric"):
        history(store, HistoryRequest(metrics=["nosuch"]))


def test_changed_facts_are_the_fact_finders():
    before = {"kind": "qemu", "spec": "qemu:name=vm",
              "metadata": {"qemu_version": "7.2.22", "guest_kernel": "6.1.0"},
              "options": {"cpus": "1", "name": "vm"}, "host": {"host_kernel": "6.1.0"}}
    after = {"kind": "qemu", "spec": "qemu:name=vm",
             "metadata": {"qemu_version": "10.0.2"},
             "options": {"cpus": "0.5", "name": "vm"}, "host": {"host_kernel": "6.12.0"}}
    found = changed_facts(before, after)
    assert [(f.key, f.before, f.after) for f in found] == [
        ("qemu_version", "7.2.22", "10.0.2"), ("host_kernel", "6.1.0", "6.12.0"),
        ("option:cpus", "1", "0.5")]
    assert found[0].words == "QEMU 7.2.22 → 10.0.2"
    # recorded in one run only (guest_kernel): no change, as the fact finder's rule says
    assert changed_facts(before, before) == []
