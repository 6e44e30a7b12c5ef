"""A tune run's section from its rows (results/analysis/tune.py, issue 40): the design as the
study's tune gives it, each knob per metric decided, interactions where the design resolves
them, the recommendation per metric and the trade-off when metrics disagree, the headline."""
from __future__ import annotations

import math
import random

from virtbench.foundations.model import MetricIdentity, Result, RunReport
from virtbench.foundations.model.tune import TuneDesign
from virtbench.results.analysis.tune import tune_section
from virtbench.study.design import BenchmarkCase, Study, tuned
from virtbench.study.tune import TuneEntry, parse_knob


def _study(*knobs: str, metrics=(), benches=("pi",)) -> Study:
    entry = TuneEntry(base="container", knobs=[parse_knob(k) for k in knobs],
                      metrics=list(metrics))
    return tuned(Study(name="t", benchmarks=[BenchmarkCase(b) for b in benches]), entry)


def _rows(study: Study, bench: str, metric: str, level, blocks=4, cv=0.01, seed=1,
          higher_is_better=False, unit="s") -> list[Result]:
    """One row per configuration: `level(levels)` per block with `cv` noise."""
    g = random.Random(seed)
    out = []
    for name, levels in study.tune.configurations():
        samples = [level(levels) * math.exp(cv * g.gauss(0, 1)) for _ in range(blocks)]
        out.append(Result(environment=name, benchmark=bench, metric=metric, unit=unit,
                          higher_is_better=higher_is_better, n=blocks, samples=samples,
                          trials=list(range(1, blocks + 1)),
                          metric_id=MetricIdentity(base=metric, scope="single")))
    return out


def test_a_run_that_is_not_a_tune_has_no_section():
    assert tune_section(RunReport(), Study(name="plain")) is None


def test_the_design_is_the_studys_and_a_metric_without_rows_is_said():
    study = _study("cpus=0.5,2", "mem=512M,4G", "storage=overlay,bind", "network=ns,bridge")
    section = tune_section(RunReport(), study)
    assert isinstance(section.design, TuneDesign)
    assert (section.design.kind, section.design.resolution) == ("fractional factorial", 4)
    assert len(section.design.configurations) == 8 and section.design.full_factorial == 16
    assert section.design.configurations[0].spec == \
        "container:cpus=0.5,mem=512M,storage=overlay,network=ns,name=c1"
    assert section.knobs == [] and section.headline == "nothing measured yet"


def test_the_quota_matters_and_the_others_have_no_effect():
    study = _study("cpus=0.5,2", "mem=512M,4G", "storage=overlay,bind")
    rows = _rows(study, "pi", "seconds", lambda lv: 2.0 if lv["cpus"] == "0.5" else 1.0)
    section = tune_section(RunReport(results=rows), study)
    decisions = {k.knob: k.decision for k in section.knobs}
    assert decisions == {"cpus": "matters", "mem": "no effect", "storage": "no effect"}
    cpus = section.knobs[0]
    assert cpus.better_level == "2" and -51 < cpus.effect_pct < -49
    assert cpus.low_pct < cpus.effect_pct < cpus.high_pct and cpus.blocks == 4
    assert section.recommended == {"cpus": "2"}
    # three knobs: the full factorial resolves the interactions, none of them here
    assert [i.knob for i in section.interactions] == ["cpus×mem", "cpus×storage",
                                                      "mem×storage"]
    assert all(i.decision == "no effect" for i in section.interactions)
    assert section.confirmed is None and section.note.startswith("the recommended "
                                                                  "configuration has not run")
    assert section.headline.startswith("recommended: cpus=2: not confirmed yet (the A/B has "
                                       "not run); mem: no effect (within ±5 %); storage: "
                                       "no effect (within ±5 %)")


def test_an_interaction_that_matters_sets_its_knobs_together():
    study = _study("cpus=0.5,2", "mem=512M,4G")

    def level(lv):                    # fast only with both knobs at their second level
        return 1.0 if (lv["cpus"], lv["mem"]) == ("2", "4G") else 2.0
    section = tune_section(RunReport(results=_rows(study, "pi", "seconds", level)), study)
    (inter,) = section.interactions
    assert inter.knob == "cpus×mem" and inter.decision == "matters"
    assert section.recommended == {"cpus": "2", "mem": "4G"}


def test_metrics_that_disagree_are_a_trade_off():
    study = _study("cpus=0.5,2", "mem=512M,4G", metrics=["seconds", "copy_mb_s"],
                   benches=("pi", "stream"))
    rows = _rows(study, "pi", "seconds", lambda lv: 2.0 if lv["cpus"] == "0.5" else 1.0)
    rows += _rows(study, "stream", "copy_mb_s",
                  lambda lv: 900.0 if lv["cpus"] == "0.5" else 600.0, higher_is_better=True,
                  unit="MB/s")
    section = tune_section(RunReport(results=rows), study)
    assert [(r.benchmark, r.metric, r.levels) for r in section.recommendations] == [
        ("pi", "seconds", {"cpus": "2"}), ("stream", "copy_mb_s", {"cpus": "0.5"})]
    assert section.recommended == {"cpus": "2"}
    assert section.trade_off == ("cpus: 2 for seconds of pi, 0.5 for copy_mb_s of stream "
                                 "(the first is taken)")


def test_noise_with_few_blocks_leaves_a_knob_undecided_with_the_blocks_that_would_decide():
    study = _study("cpus=0.5,2", "mem=512M,4G")
    rows = _rows(study, "pi", "seconds", lambda lv: 1.04 if lv["mem"] == "512M" else 1.0,
                 blocks=3, cv=0.06, seed=3)
    section = tune_section(RunReport(results=rows), study)
    undecided = [k for k in section.knobs if k.decision == "undecided"]
    assert undecided and all(k.blocks_needed is None or k.blocks_needed > 3
                             for k in undecided)
    assert "undecided (" in section.headline


def test_a_metric_no_knob_moves_is_no_trade_off():
    study = _study("cpus=0.5,2", "mem=512M,4G", metrics=["seconds", "copy_mb_s"],
                   benches=("pi", "stream"))
    rows = _rows(study, "pi", "seconds", lambda lv: 2.0 if lv["cpus"] == "0.5" else 1.0)
    rows += _rows(study, "stream", "copy_mb_s", lambda lv: 900.0, higher_is_better=True,
                  unit="MB/s")
    section = tune_section(RunReport(results=rows), study)
    assert section.recommendations[1].levels == {}
    assert section.recommended == {"cpus": "2"} and section.trade_off is None


def test_a_knob_that_matters_on_a_later_metric_only_is_recommended_and_said_on_it():
    study = _study("cpus=0.5,2", "mem=512M,4G", metrics=["seconds", "copy_mb_s"],
                   benches=("pi", "stream"))
    rows = _rows(study, "pi", "seconds", lambda lv: 1.0)
    rows += _rows(study, "stream", "copy_mb_s",
                  lambda lv: 900.0 if lv["mem"] == "4G" else 600.0, higher_is_better=True,
                  unit="MB/s")
    section = tune_section(RunReport(results=rows), study)
    assert [r.levels for r in section.recommendations] == [{}, {"mem": "4G"}]
    assert section.recommended == {"mem": "4G"} and section.trade_off is None
    assert section.headline.startswith("recommended: mem=4G: not confirmed yet (the A/B has "
                                       "not run); cpus: no effect (within ±5 %)")
