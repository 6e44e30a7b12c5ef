"""bench/harness_pairs.py, the workload harness benches' summary of interleaved pairs (pure):
the medians, the pairs' geometric mean ratio and its 95 % interval, whether it lies within
3 %, and the pairs that would decide."""
import importlib.util
import math
import sys
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "harness_pairs", Path(__file__).resolve().parents[3] / "bench" / "harness_pairs.py")
harness = importlib.util.module_from_spec(SPEC)
sys.modules["harness_pairs"] = harness
SPEC.loader.exec_module(harness)


def test_close_pairs_are_within_3_pct():
    out = harness.summarize([(10000, 10050), (11000, 10990), (9000, 9030), (10500, 10490)])
    assert out["pairs"] == 4 and out["verdict"] == "within 3 %"
    assert out["ratio_of_medians"] == round(10270 / 10250, 4)
    ratios = [10050 / 10000, 10990 / 11000, 9030 / 9000, 10490 / 10500]
    gm = math.exp(sum(map(math.log, ratios)) / 4)
    assert out["geometric_mean_ratio"] == round(gm, 4)
    assert out["ci95_low"] < gm < out["ci95_high"]


def test_scattered_pairs_are_undecided_and_one_pair_decides_nothing():
    out = harness.summarize([(10000, 8000), (10000, 12500), (10000, 9000)])
    assert out["verdict"] == "undecided" and out["ci95_low"] < 0.97 < 1.03 < out["ci95_high"]
    one = harness.summarize([(10000, 10100)])
    assert (one["ci95_low"], one["verdict"]) == (None, "undecided")


def test_a_clear_loss_is_outside_3_pct():
    out = harness.summarize([(10000, 9000), (10000, 9100), (10000, 8950), (10000, 9050)])
    assert out["verdict"] == "outside 3 %" and out["ci95_high"] < 0.97


def test_the_pairs_that_would_decide_grow_with_the_spread():
    tight = harness.summarize([(100, 101), (100, 99), (100, 100.5)])
    loose = harness.summarize([(100, 110), (100, 90), (100, 105)])
    assert tight["pairs_to_decide"] < loose["pairs_to_decide"]
    assert harness.summarize([(100, 101)])["pairs_to_decide"] is None
