"""`virtbench compare`'s verdicts in words (report/words/compare.py), one case of the rule
(stats/change.py) each, from the figures the statistics give."""
import pytest

from virtbench.core.decisions import CompareVerdict
from virtbench.foundations.stats import change_verdict
from virtbench.foundations.stats.change import ChangeBasis
from virtbench.results.report.words.compare import change_message, need_text, zero_message


def _said(*args, **kw):
    v = change_verdict(*args, **kw)
    return v.basis, change_message(v)


def test_worse_or_better_says_the_change_and_its_p():
    assert _said(12.5, 0.001) == (ChangeBasis.BEYOND, "B 12.5 % worse than A (p 0.001)")
    assert _said(-7.0, 0.002)[1] == "B 7.0 % better than A (p 0.002)"


def test_the_same_says_why():
    assert _said(3.0, 0.001) == (ChangeBasis.WITHIN, "significant but within ±5 % (+3.0 %)")
    basis, said = _said(1.0, 0.5, 12, 12, 0.005)
    assert basis == ChangeBasis.POWERED
    assert said.startswith("no change beyond ±5 % (power ") and said.endswith(" %)")


def test_undecided_says_what_would_decide():
    assert _said(20.0, None) == (ChangeBasis.NO_TEST, "fewer than 2 samples a side: no test")
    assert _said(20.0, 0.05) == (ChangeBasis.NOT_SIGNIFICANT,
                                 "not significant (p 0.05 >= 0.01)")
    basis, said = _said(1.0, 0.5, 6, 6, 0.2)
    assert basis == ChangeBasis.NOT_SIGNIFICANT
    assert said.startswith("not significant (p 0.5 >= 0.01) and only ")
    assert "power to see a 5 % change; run at least" in said and "(has 6 vs 6)" in said
    basis, said = _said(100.0, 0.1, 3, 3, 0.02)
    assert basis == ChangeBasis.COUNTS_UNREACHABLE
    assert said == ("with 3 vs 3 trials the smallest p the test can give is 0.2, not below "
                    "alpha 0.01; run at least 6 trials per side (has 3 vs 3)")
    basis, said = _said(3.0, 0.2, 5, 5, 0.02, alpha=0.0)
    assert basis == ChangeBasis.ALPHA_UNREACHABLE
    assert said.startswith("no number of trials lets the test reach alpha 0 ")


def test_no_number_of_trials_is_said_as_such():
    assert need_text(None, 3, 3, cv_known=False).startswith("the noise cannot be estimated")
    assert need_text(None, 3, 3).startswith("the noise is too high")
    assert need_text(8, 3, 4) == "run at least 8 trials per side (has 3 vs 4)"


@pytest.mark.parametrize("verdict,p,said", [
    (CompareVerdict.WORSE, 0.001, "B is worse (p 0.001)"),
    (CompareVerdict.BETTER, 0.004, "B is better (p 0.004)"),
    (CompareVerdict.INCONCLUSIVE, 0.3, "no significant difference")])
def test_a_zero_in_a_has_no_percent(verdict, p, said):
    assert zero_message(verdict, p) == "A's trimmed mean is 0: no % change; " + said
