"""What a planned run can decide, said before it starts (virtbench/study/reach.py)."""
from types import SimpleNamespace

from virtbench.measure import benchmarks
from virtbench.study.design import Study
from virtbench.study.reach import planned_rows, reach_note


def study(trials: int = 5, **overrides) -> Study:
    """A study of `trials` blocks, its method the defaults but for `overrides`."""
    return Study(name="reach", environments=[], benchmarks=[], trials=trials, **overrides)


def prepared(plan: Study, envs=("native", "qemu-tcg", "ctr"), cases=("pi", "stream"),
             baseline="native", skip=frozenset()):
    return SimpleNamespace(study=plan, envs={e: None for e in envs}, baseline=baseline,
                           skip=set(skip),
                           cases={c: (benchmarks.get(c), {}) for c in cases})


def test_rows_are_each_case_metric_of_each_environment_but_the_baseline():
    pi, stream = (len(benchmarks.get(c).metrics) for c in ("pi", "stream"))
    assert planned_rows(prepared(study())) == 2 * (pi + stream)
    assert planned_rows(prepared(study(), skip={("ctr", "stream")})) == 2 * pi + stream
    no_ref = {("native", "pi")}                             # nothing to compare pi with
    assert planned_rows(prepared(study(), skip=no_ref)) == 2 * stream
    assert planned_rows(prepared(study(), baseline=None)) == 0


def test_too_few_blocks_for_a_difference_are_said_with_the_blocks_that_would_do():
    p = prepared(study(trials=5))
    rows = planned_rows(p)
    note = reach_note(p)
    assert note.startswith(f"5 block(s), {rows} row(s): a lone difference inside the ±10 % band "
                           "needs ")
    need = int(note.split("needs ")[1].split()[0])
    assert 2 / 2 ** need < 0.05 / rows <= 2 / 2 ** (need - 1)
    assert ("survive Holm at alpha 0.05: run 12 trials (--trials 12) as the published studies "
            "did; pass and fail still decide") in note
    assert reach_note(prepared(study(trials=need))) is None
    assert "Benjamini-Hochberg" in reach_note(prepared(study(trials=5, correction="bh")))


def test_no_note_where_the_test_is_another_or_blocks_are_added_until_decided():
    assert reach_note(prepared(study(trials=3, adaptive=True))) is None
    assert reach_note(prepared(study(trials=3, analysis="unpaired"))) is None
    assert reach_note(prepared(study(trials=3), envs=("native",))) is None


def test_a_family_too_large_for_any_number_of_blocks():
    note = reach_note(prepared(study(trials=12, alpha=0.0001)))
    assert "cannot survive Holm at alpha 0.0001 with any number of blocks" in note


def test_a_new_run_without_native_is_compared_with_its_first_environment():
    from virtbench.study.baseline import Candidate, resolve_baseline
    from virtbench.study.design import default_baseline

    def planned(asked, labels):
        return resolve_baseline(asked, [Candidate(label) for label in labels],
                                first_if_none=True)
    assert planned(None, ["qemu", "q10"]) == "qemu"
    assert planned(None, ["qemu", "native"]) == "native"
    assert planned("q10", ["qemu", "q10"]) == "q10"
    assert planned(None, ["qemu"]) is None
    # a stored run that stored no baseline reads as it always did
    assert default_baseline(None, ["qemu", "q10"]) is None
