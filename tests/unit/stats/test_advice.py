"""The one rule of trial-count advice (stats/advice.py), and that the places giving advice
say the same count."""
from virtbench.foundations.stats import noise_warnings, paired
from virtbench.foundations.stats.advice import PUBLISHED_TRIALS, advice_text, trials_to_advise
from virtbench.foundations.stats.multiplicity import blocks_for_a_difference


def test_few_rows_get_the_published_studies_twelve():
    for rows in (0, 1, 5, 12):
        assert trials_to_advise(rows, 0.05) == PUBLISHED_TRIALS
    assert advice_text(12) == "run 12 trials (--trials 12) as the published studies did"


def test_many_rows_get_the_blocks_a_lone_difference_needs():
    # 24 rows at 0.01: 2 / 2^n < 0.01 / 24 first at n = 13 (2 / 2^12 = 4.9e-4 > 4.2e-4)
    assert blocks_for_a_difference(24, 0.01) == 13
    assert trials_to_advise(24, 0.01) == 13
    assert paired.min_sign_flip_p(13) < 0.01 / 24 <= paired.min_sign_flip_p(12)
    assert advice_text(13).startswith("run 13 trials (--trials 13) so that a lone difference")


def test_past_the_exact_test_twelve_stands():
    assert blocks_for_a_difference(10 ** 6, 0.05) is None
    assert trials_to_advise(10 ** 6, 0.05) == PUBLISHED_TRIALS


def test_the_few_samples_warning_says_the_advice_it_is_given():
    [(kind, message)] = [w for w in noise_warnings([1.0, 1.01, 0.99]) if w[0] == "few_samples"]
    assert message == "only 3 samples: the CI and p-value are rough"
    [(_, message)] = [w for w in noise_warnings([1.0, 1.01, 0.99], advice=advice_text(13))
                      if w[0] == "few_samples"]
    assert message.endswith("; run 13 trials (--trials 13) so that a lone difference among "
                            "this run's rows can survive the correction")
