"""Outliers by MAD, including when the MAD is 0; messages name the trial numbers."""
from virtbench.foundations import stats


def test_mad_zero_still_finds_the_odd_one_out():
    data = [10.0, 10.0, 10.0, 10.0, 10.0, 30.0]       # MAD = 0
    assert stats.mad_outliers(data) == [5]
    assert stats.mad_outliers([10.0] * 6) == []


def test_outlier_message_names_trial_numbers():
    data = [10.0, 10.0, 10.0, 10.0, 10.0, 30.0]
    msgs = [m for k, m in stats.noise_warnings(data, trials=[3, 4, 5, 6, 7, 9]) if k == "outlier"]
    assert len(msgs) == 1 and msgs[0].startswith("trial 9 (30)")
    two = [10.0, 10.1, 9.9, 10.05, 9.95, 30.0, 31.0, 10.0, 10.02]
    (msg,) = [m for k, m in stats.noise_warnings(two) if k == "outlier"]
    assert msg.startswith("trials 6, 7 ")


def test_a_ratio_interval_of_samples_with_zeros_warns_nothing():
    """A run's counts with zeros (the RIKEN quick run's hdparm: 0 on a trial, and on its
    reference's) make resamples with a 0 reference and NaN ratios: no interval is said by
    the report, not by scipy's DegenerateDataWarning or numpy's RuntimeWarning."""
    import warnings
    from virtbench.foundations.stats.ratio import bootstrap_ratio_ci
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(4):
            low, high = bootstrap_ratio_ci([5.0, 0.0, 7.0, 2.0, 0.0],
                                           [271.0, 0.0, 1855.0, 11918.0, 2697.0], seed=seed)
            assert (low is None) == (high is None)       # no interval, or a real one
            assert low is None or 0 <= low <= high
