"""Any reference, one run (issue 21): `report --baseline LABEL` re-analyses a stored run against
another of its environments, and a study's `versus` gives an environment its own reference,
so one run yields the verdicts against the baseline and the before/after ones."""
import csv
import io
import json

import numpy as np
import pytest
from storekit import block_run

from virtbench.interface.cli import commands as cli
from virtbench.results.report.view import View
from virtbench.results import report
from virtbench.results.analysis import analyze_run
from virtbench.results.report import matrix
from virtbench.foundations.store import Store

ENVS = [{"spec": "native"}, {"spec": "guest"}, {"spec": "guest-tuned", "versus": "guest"}]


def _vals(mean, seed, n=10, cv=0.01):
    return [float(x) for x in mean * np.exp(np.random.default_rng(seed).normal(0, cv, n))]


@pytest.fixture
def run(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run_id = block_run(store, {"native": {"t": _vals(100, 1)}, "guest": {"t": _vals(60, 2)},
                               "guest-tuned": {"t": _vals(63, 3)}},
                       study_extra={"environments": ENVS})
    return store, run_id


def _row(result, env):
    return next(r for r in result.results if r.environment == env)


def test_versus_gives_before_after_verdicts_beside_the_baseline_ones(run):
    store, run_id = run
    result = analyze_run(store, run_id)
    tuned = _row(result, "guest-tuned")
    assert tuned.vs_baseline.reference == "native" and tuned.vs_baseline.verdict == "fail"
    (other,) = tuned.vs_others
    assert other.reference == "guest" and other.basis == "versus"
    assert other.analysis == "paired" and other.blocks == 10
    assert other.ratio == pytest.approx(1.05, abs=0.015)
    assert other.verdict == "differs, within threshold" and other.direction == "better"
    assert _row(result, "guest").vs_others == []
    # one family: the before/after comparison is corrected with the others
    family = [r.vs_baseline for r in result.results if r.vs_baseline] + [other]
    assert other.p_holm >= other.p_value and len(family) == 3
    m = matrix.build(result)
    assert m.columns[-1] == "guest-tuned vs guest"
    assert m.rows[0][1][-1].text == f"{other.overhead_pct:+.1f} % ✓ differs"
    assert other.overhead_pct < 0                 # better: the overhead is negative


def test_every_format_shows_the_before_after_row(run):
    store, run_id = run
    result = analyze_run(store, run_id)
    md = report.render(result, "markdown")
    assert "| ↳ vs guest | t ↑ (MB/s) |" in md
    assert "✓ differs, within threshold (better) |" in md
    table = report.render(result, "table", View(wide=True))
    assert "↳ vs guest" in table
    compact = report.render(result, "table")
    assert "guest-tuned vs guest" in compact and "↳ vs guest" not in compact
    page = report.render(result, "html")
    assert "↳ vs guest" in page and "guest-tuned vs guest" in page
    rows = list(csv.DictReader(io.StringIO(report.render(result, "csv"))))
    (versus,) = [r for r in rows if r["record"] == "versus"]
    assert versus["environment"] == "guest-tuned" and versus["reference"] == "guest"
    assert versus["verdict"] == "differs, within threshold" and versus["value"] == ""
    doc = json.loads(report.render(result, "json"))
    tuned = next(r for r in doc["results"] if r["environment"] == "guest-tuned")
    assert tuned["vs_others"][0]["reference"] == "guest"


def test_report_baseline_reanalyses_the_stored_run_against_another_environment(run):
    store, run_id = run
    result = analyze_run(store, run_id, baseline="guest")
    assert result.run.baseline == "guest" and result.run.study_baseline == "native"
    assert _row(result, "guest").vs_baseline is None
    native = _row(result, "native").vs_baseline
    assert native.reference == "guest" and native.direction == "better"
    tuned = _row(result, "guest-tuned")
    # its own reference is now the baseline: one comparison, not two
    assert tuned.vs_baseline.reference == "guest" and tuned.vs_others == []
    assert "chosen for this report; the study's: native" in report.render(result, "markdown")


def test_cli_report_baseline_and_analysis(run, capsys):
    store, run_id = run
    code = cli.main(["report", run_id, "--baseline", "guest", "--analysis", "unpaired",
                     "--format", "json", "--store", store.url])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["baseline"] == "guest" and doc["run"]["analysis"] == "unpaired"
    native = next(r for r in doc["results"] if r["environment"] == "native")
    assert native["vs_baseline"]["analysis"] == "unpaired"
    code = cli.main(["report", run_id, "--baseline", "kvm", "--store", store.url])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0] == (f"virtbench: --baseline kvm: run {run_id} has no such environment; its "
                      "environments: native, guest, guest-tuned")


def test_cli_report_correction_bh_decides_what_holm_takes_back(tmp_path, capsys):
    """Twenty guests at 60 % of native, 7 adaptive blocks: each row's sequence lies far
    beyond -10 %, but 7 blocks cap its anytime p near 0.01, so Holm over 20 rows takes every
    fail back (0.2 > 0.05) while Benjamini-Hochberg (all p equal: p <= 20 x 0.05 / 20) keeps
    them; the report says which correction it used."""
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    vals = {"native": {"t": _vals(100, 1, n=7)}}
    vals.update({f"g{i}": {"t": _vals(60, 10 + i, n=7)} for i in range(20)})
    run_id = block_run(store, vals, study_extra={"adaptive": True, "trials": 6})
    verdicts = {}
    for corr in ("holm", "bh"):
        assert cli.main(["report", run_id, "--correction", corr, "--format", "json",
                         "--store", store.url]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["run"]["correction"] == corr and doc["run"]["analysis"] == "sequential"
        verdicts[corr] = {r["vs_baseline"]["verdict"] for r in doc["results"]
                          if r["vs_baseline"]}
    assert verdicts == {"holm": {"inconclusive"}, "bh": {"fail"}}
    assert cli.main(["report", run_id, "--correction", "bh", "--store", store.url]) == 0
    assert "Benjamini-Hochberg over 20 comparisons" in " ".join(capsys.readouterr().out.split())


def test_the_studys_correction_is_the_default_of_the_report_and_of_the_adaptive_stop(tmp_path,
                                                                                     capsys):
    """The same twenty rows as above in a run whose study says correction = "bh": the report
    uses BH without being asked, `--correction holm` reads it with Holm, and the adaptive
    loop's question (undecided_cases) stops by the study's correction: nothing left to run
    under BH, every guest still undecided under Holm."""
    from virtbench.results.analysis import undecided_cases
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    vals = {"native": {"t": _vals(100, 1, n=7)}}
    vals.update({f"g{i}": {"t": _vals(60, 10 + i, n=7)} for i in range(20)})
    run_id = block_run(store, vals, study_extra={"adaptive": True, "trials": 6,
                                                 "correction": "bh"})
    result = analyze_run(store, run_id)
    assert result.run.correction == "bh"
    assert {_row(result, f"g{i}").vs_baseline.verdict for i in range(20)} == {"fail"}
    assert cli.main(["report", run_id, "--correction", "holm", "--format", "json",
                     "--store", store.url]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["correction"] == "holm"
    assert {r["vs_baseline"]["verdict"] for r in doc["results"] if r["vs_baseline"]} \
        == {"inconclusive"}
    assert undecided_cases(store, run_id, min_blocks=6, max_blocks=60) == {}
    holm = undecided_cases(store, run_id, min_blocks=6, max_blocks=60, correction="holm")
    assert {env for env, _ in holm} == {"native", *(f"g{i}" for i in range(20))}


def test_a_fleet_report_refuses_a_correction_of_its_own(tmp_path, capsys):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    assert cli.main(["report", "--fleet", "f1", "--correction", "bh",
                     "--store", store.url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["virtbench: report --fleet: each host is against the first host's same "
                   "environment with the study's correction; --baseline and --correction "
                   "apply to one run (give RUN_ID)"]
