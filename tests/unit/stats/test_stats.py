import pytest

from virtbench.foundations import stats


def test_trimmed_mean_is_the_seed_method_on_twelve_samples():
    # RIKEN 2012: 12 trials, drop the highest and the lowest, mean of the other 10
    samples = [52.0, 50.0, 51.0, 49.0, 100.0, 50.5, 49.5, 51.5, 48.5, 50.0, 1.0, 50.0]
    assert sorted(samples)[1:-1] == [48.5, 49.0, 49.5, 50.0, 50.0, 50.0, 50.5, 51.0, 51.5, 52.0]
    assert stats.trimmed_mean(samples) == pytest.approx(50.2)


def test_trimmed_mean_below_three_samples_is_the_plain_mean():
    assert stats.trimmed_mean([4.0]) == 4.0
    assert stats.trimmed_mean([4.0, 6.0]) == 5.0
    assert stats.trimmed_mean([1.0, 5.0, 100.0]) == 5.0


def test_trimmed_mean_drops_one_sample_of_tied_extremes():
    # sorted [1, 1, 1, 9]: drop one 1 and the 9, keep [1, 1]
    assert stats.trimmed_mean([1, 9, 1, 1]) == 1.0


def test_trimmed_mean_works_along_an_axis_for_the_bootstrap():
    batch = [[1, 2, 3, 100], [5, 5, 6, 6]]
    assert list(stats.trimmed_mean(batch, axis=-1)) == [2.5, 5.5]


def test_summarize_hand_computed():
    s = stats.summarize([2, 4, 4, 4, 5, 5, 7, 9])
    assert s.n == 8
    assert s.median == 4.5
    assert s.trimmed_mean == pytest.approx(29 / 6)          # drop 2 and 9
    assert s.stdev == pytest.approx((32 / 7) ** 0.5)          # sum of squares 32, n-1 = 7
    assert s.cv == pytest.approx((32 / 7) ** 0.5 / 5)
    assert s.ci_low <= s.trimmed_mean <= s.ci_high
    assert 2 <= s.ci_low and s.ci_high <= 9


def test_bootstrap_ci_is_reproducible_with_a_seed_and_degenerate_for_constant_samples():
    data = [10.0, 11.0, 9.5, 10.2, 10.8, 9.9]
    assert stats.bootstrap_ci(data, seed=7) == stats.bootstrap_ci(data, seed=7)
    assert stats.bootstrap_ci(data, seed=7) != stats.bootstrap_ci(data, seed=8)   # the seed is used
    assert stats.bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
    assert stats.bootstrap_ci([3.0]) == (None, None)


def test_overhead_is_positive_when_worse_whatever_the_direction():
    assert stats.overhead_pct(0.8, higher_is_better=True) == pytest.approx(20.0)
    assert stats.overhead_pct(1.25, higher_is_better=False) == pytest.approx(25.0)
    assert stats.overhead_pct(1.1, higher_is_better=True) == pytest.approx(-10.0)
    assert stats.overhead_pct(0.9, higher_is_better=False) == pytest.approx(-10.0)


def test_permutation_p_value_small_for_separated_samples():
    a = [100, 101, 99, 100.5, 99.5, 100.2, 100.1, 99.8]
    b = [110, 111, 109, 110.5, 109.5, 110.2, 110.1, 109.8]
    assert stats.permutation_p_value(a, b) < 0.001
    assert stats.permutation_p_value([1.0], [2.0, 3.0]) is None


def test_mad_outlier_and_noise_warnings():
    data = [10, 10.1, 9.9, 10.05, 9.95, 30]
    assert stats.mad_outliers(data) == [5]
    kinds = [k for k, _ in stats.noise_warnings(data)]
    assert "outlier" in kinds and "high_cv" in kinds
    quiet = [100, 100.5, 99.5, 100.2, 99.8, 100.1, 99.9]
    assert stats.noise_warnings(quiet) == []
    few = [k for k, _ in stats.noise_warnings([1.0, 1.0, 1.0])]
    assert few == ["few_samples"]
