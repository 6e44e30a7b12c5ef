"""undecided_cases: what the runner of an adaptive run asks after each block."""
import numpy as np
from storekit import block_run

from virtbench.results.analysis import analyze_run, undecided_cases
from virtbench.foundations.store import Store


def _vals(mean, n, cv, seed):
    return [float(x) for x in mean * np.exp(np.random.default_rng(seed).normal(0, cv, n))]


def test_a_clear_row_stops_a_noisy_one_runs_on_with_its_reference(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = block_run(store, {"native": {"a": _vals(100, 8, 0.005, 1), "b": _vals(100, 8, 0.2, 2)},
                            "slow": {"a": _vals(200, 8, 0.005, 3), "b": _vals(100, 8, 0.2, 4)}},
                    study_extra={"adaptive": True, "trials": 6})
    out = undecided_cases(store, run)
    # "a": twice as slow at 0.5 % noise, decided (fail); "b": 20 % noise, undecided
    assert set(out) == {("slow", "stream"), ("native", "stream")}
    (line,) = out[("slow", "stream")]
    assert line.startswith("b vs native: ")
    assert out[("native", "stream")] == ["the reference of slow's b"]
    # what the report says of the same run agrees
    rows = {r.metric: r.vs_baseline for r in analyze_run(store, run).results
            if r.environment == "slow"}
    assert rows["a"].verdict == "fail" and rows["b"].verdict == "inconclusive"
    assert rows["a"].analysis == "sequential"


def test_before_the_minimum_every_case_runs_and_at_the_maximum_none(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = block_run(store, {"native": {"a": _vals(100, 4, 0.005, 1)},
                            "slow": {"a": _vals(200, 4, 0.005, 3)},
                            "x": {"a": _vals(100, 4, 0.3, 5)}},
                    study_extra={"environments": [{"spec": "native"}, {"spec": "slow"},
                                                  {"spec": "x", "versus": "slow"}]})
    out = undecided_cases(store, run)
    assert out[("slow", "stream")] == ["a vs native: 4 of at least 6 blocks",
                                       "the reference of x's a"]
    assert "a vs slow: 4 of at least 6 blocks" in out[("x", "stream")]
    assert undecided_cases(store, run, max_blocks=4) == {}


def test_rows_without_a_logarithm_do_not_keep_a_case_running(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = block_run(store, {"native": {"retransmits": [0.0, 3, 1, 0, 2, 1, 0, 4]},
                            "qemu": {"retransmits": [5.0, 0, 7, 1, 9, 0, 3, 8]}})
    assert undecided_cases(store, run) == {}
