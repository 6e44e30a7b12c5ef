"""What a planned run can decide, said before it starts (virtbench/reach.py)."""
from dataclasses import dataclass, field
from types import SimpleNamespace

from virtbench import benchmarks
from virtbench.reach import planned_rows, reach_note


@dataclass
class Plan:
    trials: int = 5
    adaptive: bool = False
    analysis: str = "paired"
    correction: str = "holm"
    alpha: float = 0.05
    threshold_pct: float = 10.0
    skip: set = field(default_factory=set)


def prepared(plan: Plan, envs=("native", "qemu-tcg", "ctr"), cases=("pi", "stream"),
             baseline="native"):
    return SimpleNamespace(study=plan, envs={e: None for e in envs}, baseline=baseline,
                           skip=plan.skip,
                           cases={c: (benchmarks.get(c), {}) for c in cases})


def test_rows_are_each_case_metric_of_each_environment_but_the_baseline():
    pi, stream = (len(benchmarks.get(c).metrics) for c in ("pi", "stream"))
    assert planned_rows(prepared(Plan())) == 2 * (pi + stream)
    skipped = Plan(skip={("ctr", "stream")})
    assert planned_rows(prepared(skipped)) == 2 * pi + stream
    no_ref = Plan(skip={("native", "pi")})                 # nothing to compare pi with
    assert planned_rows(prepared(no_ref)) == 2 * stream
    assert planned_rows(prepared(Plan(), baseline=None)) == 0


def test_too_few_blocks_for_a_difference_are_said_with_the_blocks_that_would_do():
    p = prepared(Plan(trials=5))
    rows = planned_rows(p)
    note = reach_note(p)
    assert note.startswith(f"5 block(s), {rows} row(s): a lone difference inside the ±10 % band "
                           "needs ")
    need = int(note.split("needs ")[1].split()[0])
    assert 2 / 2 ** need < 0.05 / rows <= 2 / 2 ** (need - 1)
    assert f"survive Holm at alpha 0.05 (--trials {need}); pass and fail still decide" in note
    assert reach_note(prepared(Plan(trials=need))) is None
    assert "Benjamini-Hochberg" in reach_note(prepared(Plan(trials=5, correction="bh")))


def test_no_note_where_the_test_is_another_or_blocks_are_added_until_decided():
    assert reach_note(prepared(Plan(trials=3, adaptive=True))) is None
    assert reach_note(prepared(Plan(trials=3, analysis="unpaired"))) is None
    assert reach_note(prepared(Plan(trials=3), envs=("native",))) is None


def test_a_family_too_large_for_any_number_of_blocks():
    note = reach_note(prepared(Plan(trials=12, alpha=0.0001)))
    assert "cannot survive Holm at alpha 0.0001 with any number of blocks" in note
