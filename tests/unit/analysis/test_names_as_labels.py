"""name=LABEL is the label (issue 30): runs stored before, labelled `native/twin`, are still
reported under their stored labels and may be named by their name in `report --baseline`
and `compare --pair`; study files name environments by name= in `versus`."""
from __future__ import annotations

import pytest
from storekit import around, filled_run

from virtbench.results.analysis import analyze_run, names_of, resolve_pairs
from virtbench.results.analysis.references import label_named
from virtbench.core.errors import VirtbenchError
from virtbench.foundations.store import Store
from virtbench.study import design


def _old_twin_run(tmp_path) -> tuple[Store, str]:
    """An A/A run as stored before the change: the twin labelled `native/twin`, its name in
    its options and metadata."""
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run_id = filled_run(store, {"native": {}, "native/twin": {"name": "twin"}},
                        {"native": {"copy_mb_s": around(100.0)},
                         "native/twin": {"copy_mb_s": around(101.0)}})
    store.upsert_environment(run_id, "native/twin", options={"name": "twin"})
    return store, run_id


def test_an_old_run_keeps_its_stored_labels(tmp_path):
    store, run_id = _old_twin_run(tmp_path)
    report = analyze_run(store, run_id)
    assert [e.label for e in report.environments] == ["native", "native/twin"]
    assert {r.environment for r in report.results} == {"native", "native/twin"}


def test_report_baseline_takes_the_stored_name_of_an_old_run(tmp_path):
    store, run_id = _old_twin_run(tmp_path)
    by_name = analyze_run(store, run_id, baseline="twin")
    by_label = analyze_run(store, run_id, baseline="native/twin")
    assert by_name.run.baseline == by_label.run.baseline == "native/twin"
    row = next(r for r in by_name.results if r.environment == "native")
    assert row.vs_baseline.reference == "native/twin"
    with pytest.raises(VirtbenchError, match=r"--baseline full: run .* has no such "
                                             r"environment; its environments: native, "
                                             r"native/twin$"):
        analyze_run(store, run_id, baseline="full")


def test_a_name_two_environments_share_names_neither():
    envs = [{"label": "native/a", "options": {"name": "a"}},
            {"label": "qemu-tcg/a", "options": {"name": "a"}}]
    assert label_named("a", envs) is None
    assert label_named("qemu-tcg/a", envs) == "qemu-tcg/a"


def test_compare_pair_takes_names_and_labels(tmp_path):
    store, run_id = _old_twin_run(tmp_path)
    report = analyze_run(store, run_id)
    names = names_of(report)
    assert names == {"native": "native", "native/twin": "native/twin", "twin": "native/twin"}
    assert resolve_pairs(["twin=native"], None, names, names) == {"native/twin": "native"}
    assert resolve_pairs(["twin"], ["native"], names, names) == {"native/twin": "native"}
    with pytest.raises(VirtbenchError, match="no '=' in it splits it"):
        resolve_pairs(["full=native"], None, names, names)


STUDY = """
name = "names"
trials = 3
[[environment]]
spec = "native"
[[environment]]
spec = "native:name=twin"
[[environment]]
spec = "container:name=full"
versus = "{versus}"
[[benchmark]]
name = "pi"
"""


def test_versus_in_a_study_file_takes_a_name(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(STUDY.format(versus="twin"))
    study = design.load(path)
    assert study.environments[2].versus == "native:name=twin"
    path.write_text(STUDY.format(versus="native:name=twin"))
    assert design.load(path).environments[2].versus == "native:name=twin"
    path.write_text(STUDY.format(versus="nobody"))
    with pytest.raises(VirtbenchError, match=r"versus 'nobody' is not the name or spec"):
        design.load(path)
    path.write_text(STUDY.format(versus="full"))
    with pytest.raises(VirtbenchError, match="versus names the environment itself"):
        design.load(path)
