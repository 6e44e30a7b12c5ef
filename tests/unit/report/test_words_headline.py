"""The headline in words (report/words/headline.py): a row, a summary, the range of a
benchmark's rows; the change in each said by words/change.py's rule."""
from virtbench.core.decisions import Decided
from virtbench.results.report.words import change
from virtbench.results.report.words.headline import item_words, span_words, summary_words


def test_a_row_says_its_decision_after_its_change():
    near = change.said(1.07, False, "s")
    assert item_words(Decided.PASS, near, 10) == "within ±10 %: equivalent"
    assert item_words(Decided.DIFFERS, near, 10, span="[+5.0 %, +9.0 %]") == (
        "7.0 % slower (a real difference, within ±10 %) [+5.0 %, +9.0 %]")
    assert item_words(Decided.INCONCLUSIVE, near, 10, 12) == (
        "7.0 % slower? undecided (≥ 12 blocks would decide)")
    far = change.said(1 / 41.7, True, "MB/s")
    assert item_words(Decided.FAIL, far, 10, span="[38.5, 45.5]") == "41.7× slower [38.5, 45.5]"


def test_a_summary_says_equivalent_first_when_every_row_passes():
    s = change.said_slowdown(1.03, "s")
    assert summary_words(s, 2, 5, 0, all_pass_within=10) == (
        "equivalent within ±10 % on every metric of 2 benchmarks (geometric mean 3.0 % slower)")
    assert summary_words(s, 1, 5, 2) == (
        "3.0 % slower (geometric mean over 1 benchmark); 2 of 5 metrics undecided")


def test_a_range_is_said_once_when_its_ends_share_a_form_and_a_side():
    def t(r):
        return change.said(r, False, "s")
    assert span_words(t(1.53), t(1.9)) == "1.53× to 1.90× slower"
    assert span_words(t(1.012), t(1.092)) == "1.2 % to 9.2 % slower"
    assert span_words(t(1 / 1.9), t(1 / 1.53)) == "1.53× to 1.90× faster"
    assert span_words(t(0.988), t(1.092)) == "1.2 % faster to 9.2 % slower"
    assert span_words(t(1.1), t(2.0)) == "10.0 % slower to 2.00× slower"
    assert span_words(t(1.0002), t(1.05)) == "0.0 % to 5.0 % slower"
