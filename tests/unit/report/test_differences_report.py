"""What differs, in every format (virtbench/results/report/fmt/differences.py and the exporters), and
the separating study (`report --separate`, virtbench/results/analysis/facts/separate.py) read back by
virtbench's own study loader. The environments are the stored run's of
tests/fixtures/differences/ with another QEMU and UEFI firmware (a two-change pair) and
another QEMU only (a one-change pair)."""
from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import pytest

from virtbench.results import report
from virtbench.results.analysis.facts.pairs import attach
from virtbench.results.analysis.facts.separate import separating_study
from virtbench.core.errors import VirtbenchError
from virtbench.foundations.model import (Case, EnvironmentRecord, Result, RunInfo, RunReport,
                                         VsReference)
from virtbench.results.report.view import View
from virtbench.study import design

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "differences" / \
    "quick-run-2026-11-28.json"
STORED = json.loads(FIXTURE.read_text())
NATIVE, QEMU = STORED["environments"]
BIN = "/root/.cache/virtbench/qemu/bookworm-backports/usr/bin/qemu-system-x86_64"


def _env(label: str, spec_extra: str, **md) -> EnvironmentRecord:
    env = copy.deepcopy(QEMU)
    extra = dict(item.split("=", 1) for item in spec_extra.split(","))
    env["options"].update(extra)
    env["metadata"].update(md)
    return EnvironmentRecord(label=label, kind="qemu", spec=env["spec"] + "," + spec_extra,
                       options=env["options"], metadata=env["metadata"])


def _report(*envs: EnvironmentRecord) -> RunReport:
    """A run whose guests are each compared with the stored guest (`qemu`)."""
    base = EnvironmentRecord(label="qemu", kind="qemu", spec=QEMU["spec"], options=QEMU["options"],
                       metadata={**QEMU["metadata"], "firmware": "seabios"})
    results = [Result(environment=e.label, benchmark="pi", metric="seconds",
                      vs_baseline=VsReference(reference="qemu")) for e in envs]
    return attach(RunReport(
        run=RunInfo(id="20261128-120000-abcd", baseline="qemu", threshold_pct=10.0, alpha=0.05,
                    host="vm"),
        benchmarks=[Case(label="pi", name="pi", params={}),
                    Case(label="primitives[only=syscall]", name="primitives",
                         params={"only": "syscall"})],
        environments=[base, *envs], results=results))


TWO = _env("q10uefi", f"binary={BIN},firmware=ovmf,name=q10uefi", qemu_version="10.0.2",
           qemu_binary=BIN,
           firmware="ovmf")
ONE = _env("q10", f"binary={BIN},name=q10", qemu_version="10.0.2", qemu_binary=BIN,
           firmware="seabios")
SEPARATE = "virtbench report 20261128-120000-abcd --separate > separate.toml"
ONE_LINE = "q10 vs qemu: QEMU 7.2.22 → 10.0.2; everything else equal"
TWO_LINE = (f"q10uefi vs qemu: QEMU 7.2.22 → 10.0.2; firmware seabios → ovmf; everything else "
            f"equal; 2 changes at once; to separate them: {SEPARATE}")


def test_each_comparison_names_its_facts_and_the_report_keeps_both_values():
    r = _report(ONE, TWO)
    assert [p.line for p in r.differences] == [ONE_LINE, TWO_LINE]
    assert r.results[0].vs_baseline.differs_in == ["QEMU", "QEMU binary"]
    data = json.loads(report.render(r, "json"))
    two = data["differences"][1]
    assert two["separable"] == ["binary", "firmware"] and two["changes"] == 2
    assert {"key": "firmware", "name": "firmware", "layer": "environment", "a": "seabios",
            "b": "ovmf", "option": "firmware", "words": "firmware seabios → ovmf"} in two["facts"]


def test_the_compact_text_has_one_line_per_pair_and_wide_the_facts():
    r = _report(ONE, TWO)
    compact = report.render(r, "table")
    assert "what differs from the reference" in compact
    assert ONE_LINE in compact and "QEMU binary" not in compact
    wide = report.render(r, "table", View(wide=True, width=400))
    assert f"    QEMU binary /usr/bin/qemu-system-x86_64 → {BIN}" in wide
    assert "    firmware seabios → ovmf" in wide


def test_markdown_html_and_csv_say_it_too():
    r = _report(ONE, TWO)
    md = report.render(r, "markdown")
    assert "## What differs from the reference" in md and f"- {ONE_LINE}" in md
    assert "  - firmware seabios → ovmf" in md
    html = report.render(r, "html")
    assert "What differs from the reference" in html and "firmware seabios → ovmf" in html
    rows = [x for x in csv.DictReader(io.StringIO(report.render(r, "csv")))
            if x["record"] == "difference"]
    assert {(x["environment"], x["metric"], x["claim"], x["reference"]) for x in rows} >= {
        ("q10", "QEMU", "QEMU 7.2.22 → 10.0.2", "qemu"),
        ("q10uefi", "firmware", "firmware seabios → ovmf", "qemu")}


def test_the_separating_study_loads_with_one_environment_per_option(tmp_path):
    text = separating_study(_report(ONE, TWO))
    path = tmp_path / "separate.toml"
    path.write_text(text)
    study = design.load(path)
    specs = [e.spec for e in study.environments]
    assert specs == [QEMU["spec"], TWO.spec,
                     f"{QEMU['spec']},binary={BIN},name=q10uefi-binary-only",
                     f"{QEMU['spec']},firmware=ovmf,name=q10uefi-firmware-only"]
    assert study.baseline == QEMU["spec"] and study.adaptive
    assert [(c.name, c.params) for c in study.benchmarks] == [
        ("pi", {}), ("primitives", {"only": "syscall"})]
    assert all(e.versus is None for e in study.environments)


def test_no_pair_to_separate_is_one_line():
    with pytest.raises(VirtbenchError, match="nothing to separate"):
        separating_study(_report(ONE))
