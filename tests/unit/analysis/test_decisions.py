"""analyze_run decides from the design (issue 21): the blocks' log ratios, Holm over the run,
the run's noise floor, the published rule beside it, values of 0 or below, disturbed trials,
the order inside blocks, and the unpaired analysis on request."""
from math import exp, log

import numpy as np
import pytest
from storekit import block_run

from virtbench.results.analysis import analyze_run
from virtbench.foundations.stats import decision as dc
from virtbench.foundations.stats import multiplicity, paired
from virtbench.foundations.store import Store


def _store(tmp_path) -> Store:
    return Store(f"sqlite:///{tmp_path / 's.db'}")


def _noisy(mean: float, n: int, cv: float, seed: int, shared=None) -> list[float]:
    """n values around mean; `shared` (one factor per block) is noise both sides share."""
    rng = np.random.default_rng(seed)
    f = np.ones(n) if shared is None else np.asarray(shared)
    return [float(x) for x in mean * f * np.exp(rng.normal(0, cv, n))]


def _row(result, env, metric="t"):
    return next(r for r in result.results if r.environment == env and r.metric == metric)


def test_the_verdict_is_the_paired_decision_of_the_blocks(tmp_path):
    store = _store(tmp_path)
    native, qemu = _noisy(100, 12, 0.03, 1), _noisy(104, 12, 0.03, 2)
    run = block_run(store, {"native": {"t": native}, "qemu": {"t": qemu}})
    result = analyze_run(store, run)
    vs = _row(result, "qemu").vs_baseline
    d = paired.log_ratios(dict(enumerate(qemu)), dict(enumerate(native))).d
    assert result.run.analysis == "paired" and result.run.correction == "holm"
    assert vs.analysis == "paired" and vs.blocks == 12
    assert vs.ratio == pytest.approx(exp(d.mean()))
    assert (vs.ratio_ci_low, vs.ratio_ci_high) == pytest.approx(paired.paired_ratio_ci(d, 0.95))
    assert vs.sd_log == pytest.approx(d.std(ddof=1))
    expect = dc.decide_paired(dict(enumerate(qemu)), dict(enumerate(native)), True)
    assert vs.p_value == pytest.approx(expect.p_value) and vs.p_band == pytest.approx(expect.p_band)
    assert vs.mdc_pct == pytest.approx(expect.mdc_pct)
    # a family of one: adjusted = raw
    assert vs.p_holm == pytest.approx(vs.p_value) and vs.estimator == dc.ESTIMATOR_PAIRED
    # the published rule on trimmed means, beside it
    tm = sorted(qemu)[1:-1]
    tn = sorted(native)[1:-1]
    assert vs.published_rule.ratio == pytest.approx(np.mean(tm) / np.mean(tn))
    assert vs.published_rule.verdict == "pass"


def test_pairing_sees_through_noise_the_blocks_share_and_unpaired_does_not(tmp_path):
    store = _store(tmp_path)
    shared = np.exp(np.random.default_rng(9).normal(0, 0.10, 12))   # a slow or fast block
    run = block_run(store, {"native": {"t": _noisy(100, 12, 0.005, 3, shared)},
                            "qemu": {"t": _noisy(104, 12, 0.005, 4, shared)}})
    paired_vs = _row(analyze_run(store, run), "qemu").vs_baseline
    unpaired_vs = _row(analyze_run(store, run, analysis="unpaired"), "qemu").vs_baseline
    assert paired_vs.verdict == "differs, within threshold" and paired_vs.direction == "better"
    assert unpaired_vs.analysis == "unpaired" and unpaired_vs.verdict == "inconclusive"
    assert paired_vs.mdc_pct < 2 < unpaired_vs.mdc_pct


def test_the_run_is_one_family_holm_over_every_comparison(tmp_path):
    store = _store(tmp_path)
    samples = {"native": {"a": _noisy(100, 8, 0.02, 1), "b": _noisy(50, 8, 0.02, 2)}}
    for i, label in enumerate(("q1", "q2", "q3")):
        samples[label] = {"a": _noisy(100 + 3 * i, 8, 0.02, 10 + i),
                          "b": _noisy(50, 8, 0.02, 20 + i)}
    result = analyze_run(store, block_run(store, samples))
    rows = [r.vs_baseline for r in result.results if r.vs_baseline]
    assert len(rows) == 6
    assert [v.p_holm for v in rows] == pytest.approx(
        list(multiplicity.holm([v.p_value for v in rows])))
    assert [v.p_band_holm for v in rows] == pytest.approx(
        list(multiplicity.holm([v.p_band for v in rows])))


def test_values_of_zero_or_below_are_compared_unpaired_or_not_at_all(tmp_path):
    store = _store(tmp_path)
    run = block_run(store, {"native": {"retransmits": [3, 0, 2, 4, 1, 2, 3, 2],
                                       "errors": [0.0] * 8, "delta": [-1.0] * 8},
                            "qemu": {"retransmits": [9, 7, 0, 8, 9, 6, 10, 8],
                                     "errors": [1.0, 0, 2, 0, 1, 1, 0, 1],
                                     "delta": [2.0, -3, 1, 2, 3, -1, 2, 2]}}, hib=False)
    result = analyze_run(store, run)
    vs = _row(result, "qemu", "retransmits").vs_baseline
    assert vs.analysis == "unpaired" and "no logarithm" in vs.message
    assert vs.verdict == "fail" and vs.direction == "worse"
    errors = _row(result, "qemu", "errors")          # the reference is 0: no ratio
    assert errors.vs_baseline is None and errors.no_verdict == "no ratio (reference is 0)"
    delta = _row(result, "qemu", "delta")           # negative trimmed mean: no ratio
    assert delta.vs_baseline is None and "0 or below" in delta.reference_note
    kinds = {(w.kind, w.metric) for w in result.warnings}
    assert ("zero_reference", "errors") in kinds and ("no_ratio", "delta") in kinds


def test_a_disturbed_trial_is_kept_in_the_store_and_left_out_with_its_reason(tmp_path):
    store = _store(tmp_path)
    native, qemu = _noisy(100, 8, 0.02, 1), _noisy(100, 8, 0.02, 2)
    qemu[3] = 400.0                                   # what the disturbance did
    run = block_run(store, {"native": {"t": native}, "qemu": {"t": qemu}},
                    detail={("qemu", 3): {"disturbed": "steal 31 % of the trial (limit 5 %)"}})
    result = analyze_run(store, run)
    row = _row(result, "qemu")
    assert 400.0 not in row.samples and row.n == 7 and 4 not in row.trials
    assert [(d.trial, d.value, d.reason) for d in row.disturbed] == [
        (4, 400.0, "steal 31 % of the trial (limit 5 %)")]
    assert row.vs_baseline.blocks == 7 and row.vs_baseline.disturbed_excluded == 1
    assert row.vs_baseline.verdict == "pass"
    (w,) = [w for w in result.warnings if w.kind == "disturbed_trials"]
    assert w.message == ("1 trial(s) left out of the statistics as disturbed: trial 4: steal "
                         "31 % of the trial (limit 5 %)")
    assert len(store.samples(run)) == 16             # the store keeps it


def test_a_row_whose_every_trial_was_disturbed_is_left_out_in_one_warning(tmp_path):
    """A one-trial run whose guest's trial the host disturbed (steal over the limit, as
    seen live): no sample is left to make figures of. The report leaves the rows out, says
    so once per environment x benchmark, and the other rows stand (it was a traceback)."""
    store = _store(tmp_path)
    run = block_run(store, {"native": {"t": [100.0]}, "qemu": {"t": [140.0]}},
                    detail={("qemu", 0): {"disturbed": "steal 15.9 % of the host's CPU time"}})
    result = analyze_run(store, run)
    assert [(r.environment, r.metric) for r in result.results if r.benchmark == "stream"] == [
        ("native", "t")]
    (w,) = [w for w in result.warnings if w.kind == "no_usable_trials"]
    assert (w.environment, w.benchmark) == ("qemu", "stream")
    assert "every trial was left out of the statistics as disturbed" in w.message
    assert any(w.kind == "disturbed_trials" for w in result.warnings)


def test_a_disturbed_trial_as_the_runner_records_it_shows_its_reason(tmp_path):
    """The runner stores {"reason": ..., the figures judged} (disturbance.judge), not a string."""
    store = _store(tmp_path)
    native, qemu = _noisy(100, 8, 0.02, 1), _noisy(100, 8, 0.02, 2)
    why = {"reason": "steal 12.5 % of the trial (limit 10 %)", "steal_pct": 12.5,
           "runqueue": 3.0}
    run = block_run(store, {"native": {"t": native}, "qemu": {"t": qemu}},
                    detail={("qemu", 3): {"disturbed": why}})
    row = _row(analyze_run(store, run), "qemu")
    assert [(d.trial, d.reason) for d in row.disturbed] == [
        (4, "steal 12.5 % of the trial (limit 10 %)")]


def test_an_order_effect_inside_blocks_is_measured_and_warned_when_significant(tmp_path):
    store = _store(tmp_path)
    n = 16
    first = [t % 2 == 0 for t in range(n)]             # qemu first in even blocks
    rng = np.random.default_rng(5)
    native, qemu = [], []
    for t in range(n):
        # whichever runs first is 6 % slower (a time): a cold cache
        q, r = 100 * exp(rng.normal(0, 0.005)), 100 * exp(rng.normal(0, 0.005))
        qemu.append(q * (1.06 if first[t] else 1.0))
        native.append(r * (1.0 if first[t] else 1.06))
    run = block_run(store, {"native": {"t": native}, "qemu": {"t": qemu}}, hib=False,
                    order=lambda t: ["qemu", "native"] if first[t] else ["native", "qemu"])
    result = analyze_run(store, run)
    order = _row(result, "qemu").vs_baseline.order
    assert (order.env_first, order.ref_first) == (8, 8)
    assert order.first_pct == pytest.approx(6, abs=1) and order.significant
    assert order.balanced_ratio == pytest.approx(1.0, abs=0.01)
    (w,) = [w for w in result.warnings if w.kind == "order_effect"]
    assert "when it runs first in its block" in w.message and w.environment == "qemu"


def test_no_order_effect_no_warning(tmp_path):
    store = _store(tmp_path)
    run = block_run(store, {"native": {"t": _noisy(100, 12, 0.02, 1)},
                            "qemu": {"t": _noisy(100, 12, 0.02, 2)}},
                    order=lambda t: ["qemu", "native"] if t % 2 else ["native", "qemu"])
    result = analyze_run(store, run)
    order = _row(result, "qemu").vs_baseline.order
    assert order.p_value is not None and not order.significant
    assert not [w for w in result.warnings if w.kind == "order_effect"]


def test_a_large_change_at_five_blocks_fails_after_holm(tmp_path):
    # a quick run has 5 blocks, where the sign-flip test cannot go below 1/16: the fail is
    # judged by its own claim (beyond the band), so a 17x slowdown is a fail, not "?"
    store = _store(tmp_path)
    samples = {"native": {m: _noisy(10, 5, 0.03, i) for i, m in enumerate("abcdefgh")},
               "tcg": {m: _noisy(170, 5, 0.03, 20 + i) for i, m in enumerate("abcdefgh")}}
    result = analyze_run(store, block_run(store, samples, hib=False))
    verdicts = {r.vs_baseline.verdict for r in result.results if r.vs_baseline}
    assert verdicts == {"fail"}
    assert all(r.vs_baseline.p_value >= 1 / 16 for r in result.results if r.vs_baseline)


def test_an_unknown_analysis_or_baseline_is_one_line(tmp_path):
    from virtbench.core.errors import VirtbenchError
    store = _store(tmp_path)
    run = block_run(store, {"native": {"t": [1.0, 2.0]}, "qemu": {"t": [1.0, 2.0]}})
    with pytest.raises(VirtbenchError, match="run .* has no such environment; its "
                                             "environments: native, qemu"):
        analyze_run(store, run, baseline="kvm")
    with pytest.raises(VirtbenchError, match="use paired or unpaired"):
        analyze_run(store, run, analysis="bayes")


def test_a_stored_study_can_ask_for_the_unpaired_analysis_and_auto_trials_read_sequentially(
        tmp_path):
    store = _store(tmp_path)
    vals = {"native": {"t": _noisy(100, 10, 0.02, 1)}, "qemu": {"t": _noisy(100, 10, 0.02, 2)}}
    run = block_run(store, vals, study_extra={"analysis": "unpaired"})
    assert analyze_run(store, run).run.analysis == "unpaired"
    assert analyze_run(store, run, analysis="paired").run.analysis == "paired"
    run = block_run(store, vals, study_extra={"adaptive": True, "trials": 6})
    result = analyze_run(store, run)
    vs = _row(result, "qemu").vs_baseline
    assert result.run.analysis == "sequential" and vs.analysis == "sequential"
    assert result.run.trials_planned is None and log(vs.ratio) == pytest.approx(
        np.mean(np.log(vals["qemu"]["t"]) - np.log(vals["native"]["t"])))
    from virtbench.results import report
    assert "trials planned" not in report.render(result, "table")


def test_a_row_compared_unpaired_says_so_in_every_text_format(tmp_path):
    from virtbench.results import report
    store = _store(tmp_path)
    run = block_run(store, {"native": {"retransmits": [3, 0, 2, 4, 1, 2, 3, 2]},
                            "qemu": {"retransmits": [9, 7, 0, 8, 9, 6, 10, 8]}}, hib=False)
    result = analyze_run(store, run)
    assert "✗ fail (worse) (unpaired)" in report.render(result, "markdown")
    assert "1 compared unpaired (marked)" in report.render(result, "table")


def test_adaptive_trials_are_read_sequentially_in_the_stored_form_and_as_written():
    from virtbench.results.analysis.stored import analysis_mode
    from virtbench.study.design import Study

    def mode(study: dict, asked=None) -> str:
        return analysis_mode(Study.from_dict({"name": "s", **study}), asked)
    assert mode({"adaptive": True, "trials": 6}) == "sequential"
    assert mode({"trials": "auto"}) == "sequential"
    assert mode({"adaptive": False, "trials": 6}) == "paired"
    assert mode({"adaptive": True, "trials": 6}, "unpaired") == "unpaired"


def test_the_report_says_how_adaptive_trials_ended_and_which_sections_were_repeated(tmp_path):
    """The run detail's records as adaptive.py and sections.py store them (the quiet A/A
    run's, 2026-11-25) reach the model and every text format."""
    from virtbench.results import report
    store = _store(tmp_path)
    # noisy enough that the twin's verdict is inconclusive: the record's "undecided" stands
    vals = {"native": {"t": _noisy(100, 8, 0.3, 1)}, "twin": {"t": _noisy(100, 8, 0.3, 2)}}
    run = block_run(store, vals, study_extra={"adaptive": True, "trials": 6})
    store.update_run_detail(run, calibration={
        "stream": {"repetitions": 24, "section_s": 0.020935, "environment": "native",
                   "min_section_s": 0.5, "capped": False},
        "himeno": {"repetitions": 1, "section_s": 0.840141, "environment": "native",
                   "min_section_s": 0.5, "capped": False}},
        adaptive={"pending": None, "spent_s": 147.576, "min_trials": 6, "max_trials": 60,
                  "budget_s": 900.0, "stopped": "budget",
                  "blocks": {"native": {"stream": 19}, "twin": {"stream": 8}},
                  "undecided": {"twin · stream": ["t vs native: why"]}})
    result = analyze_run(store, run)
    assert result.run.adaptive.stopped == "budget" and result.run.adaptive.blocks["twin"] == {
        "stream": 8}
    assert [(s.benchmark, s.repetitions) for s in result.run.sections] == [
        ("himeno", 1), ("stream", 24)]
    for fmt in ("table", "markdown", "html"):
        text = " ".join(report.render(result, fmt).split())     # the terminal's wraps at 100
        assert "budget after 148 s of a 900 s budget; 8-19 blocks per case; still undecided: " \
               "twin · stream" in text, fmt
        assert "(values per repetition): stream 0.0209 s x 24" in text, fmt
        assert "himeno 0.84" not in text, fmt          # long enough: not repeated, not said


def test_many_undecided_cases_are_counted_in_the_header_and_named_in_the_warning():
    from virtbench.foundations.model import AdaptiveSummary, RunInfo
    from virtbench.results.report.fmt import header
    many = {f"g{i} · tcp-rr": ["rtt vs native: wide"] for i in range(36)}
    line = header.adaptive_line(RunInfo(adaptive=AdaptiveSummary(
        stopped="budget", spent_s=2153.4, budget_s=2400, min_trials=6, max_trials=60,
        blocks={"native": {"tcp-rr": 7}}, undecided=many)))
    assert line == ("adaptive trials (6..60 blocks): budget after 2153 s of a 2400 s budget; "
                    "7 blocks per case; 36 case(s) still undecided (the `undecided` warning "
                    "names them)")
    assert header.adaptive_line(RunInfo()) is None
