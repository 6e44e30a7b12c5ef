"""The published studies' own rule (analysis/decide.py published_rule): the ratio of trimmed
means within ±threshold or not, no statistics; exactly the threshold is not within."""
import pytest

from virtbench.core.decisions import Decided
from virtbench.results.analysis.decide import published_rule

FIVE = [100.0, 100.1, 99.9, 100.05, 99.95]


def scaled(k):
    return [x * k for x in FIVE]


def test_the_rule_at_the_threshold():
    assert published_rule(scaled(0.95), FIVE, True, 10).verdict is Decided.PASS
    at = published_rule(scaled(0.90), FIVE, True, 10)            # exactly 10 %: not within
    assert at.verdict is Decided.FAIL and at.overhead_pct == pytest.approx(10.0)
    assert published_rule(scaled(1.09), FIVE, False, 10).verdict is Decided.PASS
    assert published_rule(scaled(0.90), FIVE, True, 15).verdict is Decided.PASS


def test_no_ratio_from_a_reference_of_zero():
    empty = published_rule(FIVE, [0.0, 0.0, 0.0], True, 10)
    assert empty.ratio is None and empty.verdict is None
