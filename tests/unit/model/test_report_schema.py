"""The JSON report's schema: generated from the model (virtbench/foundations/model), checked in under docs/
with its version, and real reports validate against it: a run of the real runner with fake
environments (a group of instances, failed trials, an exit profile), a fleet's report, a
comparison, and a real native run of a quick kernel."""
from __future__ import annotations
import json
from pathlib import Path
import pytest
from runkit import Flaky, Quiet, run_study
from virtbench.results import analysis, report
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.group import InstanceGroup
from virtbench.foundations.model import SCHEMA_VERSION
from virtbench.foundations.model.schema import doc_text, report_schema
from virtbench.foundations.store import Store
from schemakit import errors, validator  # noqa: F401
jsonschema = pytest.importorskip("jsonschema")   # the test extras install it

DOCS = Path(__file__).resolve().parents[3] / "docs"

REGENERATE = ("the result model and docs/{name} disagree; if the model's change is meant, "
              "regenerate it: python -m virtbench.foundations.model {flag} > docs/{name} (and raise "
              "SCHEMA_VERSION in virtbench/foundations/model/base.py when fields change or go)")


def test_the_checked_in_schema_is_the_models():
    checked_in = json.loads((DOCS / "report.schema.json").read_text())
    assert checked_in == report_schema(), REGENERATE.format(name="report.schema.json",
                                                            flag="--schema")
    assert checked_in["version"] == SCHEMA_VERSION
    jsonschema.Draft202012Validator.check_schema(checked_in)


def test_the_field_page_is_the_models_and_every_field_says_what_it_means():
    assert (DOCS / "report-schema.md").read_text() == doc_text(), REGENERATE.format(
        name="report-schema.md", flag="--doc")
    for name, definition in report_schema()["$defs"].items():
        assert definition.get("description"), name
        for field, prop in definition.get("properties", {}).items():
            assert prop.get("description"), f"{name}.{field} has no description in the model"


@pytest.fixture
def fake_runs(tmp_path):
    """(store, run A, run B): the real runner with fakes: a group of two instances and a
    single environment, failed trials with evidence, an exit profile recorded by hand."""
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    runs = []
    for fail in ({2}, set()):
        group = InstanceGroup([Quiet("q"), Quiet("q")], EnvSpec("quiet"))
        out = run_study(store, [Quiet("one"), group], {"flaky": Flaky(fail_on=fail)}, trials=4)
        runs.append(out.run_id)
    store.record_profile(runs[0], "one", "flaky", wall_s=1.0, profile={
        "source": "tcg", "duration_s": 1.0,
        "by_reason": [{"reason": "pio", "count": 3, "share_pct": 100.0, "time_share_pct": None}],
        "by_function": [{"address": "0x1", "function": None, "caller": None, "count": 3,
                         "share_pct": 100.0, "device": "port 0x1f7"}], "notes": []})
    return store, runs[0], runs[1]


def test_reports_of_the_real_runner_with_fakes_validate(fake_runs):
    store, a, b = fake_runs
    result = analysis.analyze_run(store, a)
    doc = json.loads(report.render(result, "json"))
    assert doc["run"]["schema_version"] == SCHEMA_VERSION
    scopes = {r["metric_id"]["scope"] for r in doc["results"]}
    assert scopes == {"single", "aggregate", "instance", "spread", "fairness"}
    assert doc["failed_trial_evidence"] and doc["profiles"]
    assert errors(doc) == []
    profiles = json.loads(report.render_profiles(result, "json"))
    assert errors(profiles, "ProfilesReport") == []
    comparison = json.loads(report.render_compare(
        analysis.compare_runs(result, analysis.analyze_run(store, b)), "json"))
    assert comparison["rows"] and errors(comparison, "Comparison") == []


def test_the_schema_refuses_what_the_model_does_not_make(fake_runs):
    store, a, _ = fake_runs
    doc = json.loads(report.render(analysis.analyze_run(store, a), "json"))
    doc["results"][1]["metric_id"]["scope"] = "maybe"
    doc["results"][0]["n"] = "three"
    del doc["warnings"]
    doc["run"]["schema_version"] = "0.9"
    found = " ; ".join(errors(doc))
    assert "'maybe' is not one of" in found and "'three' is not of type 'integer'" in found
    assert "'warnings' is a required property" in found and f"'{SCHEMA_VERSION}' was expected" in found


def test_a_fleets_report_validates(tmp_path):
    from fleetkit import host_run

    from virtbench.execution.fleet.side_by_side import analyze_fleet
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    fleet = store.create_fleet({"name": "s"}, ["a", "b", "c"])
    host_run(store, fleet, "a", [1.0, 1.01, 0.99, 1.0])
    host_run(store, fleet, "b", [2.0, 2.02, 1.98, 2.0])
    doc = json.loads(report.render(analyze_fleet(store, fleet), "json"))
    assert doc["run"]["hosts"] == ["a", "b"] and errors(doc) == []


@pytest.mark.parametrize("name", ["real", "failures", "published", "profiles"])
def test_reports_of_saved_runs_validate(tmp_path, name):
    """Stores saved before the model (tests/fixtures/reports): verdicts against a baseline,
    groups of instances, published figures, profiles."""
    from storekit import open_fixture
    store, ids = open_fixture(name, tmp_path)
    for run_id in ids:
        doc = json.loads(report.render(analysis.analyze_run(store, run_id), "json"))
        assert errors(doc) == []
    if name == "real":
        assert any(r["vs_baseline"] for r in doc["results"])
