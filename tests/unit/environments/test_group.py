"""Several instances at once: aggregate, spread, Jain's fairness, capacity bounds."""
import pytest
from virtbench.measure import environments
from virtbench.measure.benchmarks.base import Metric
from virtbench.measure.environments.group import combine, group_metrics, jain_index, spread_pct
from virtbench.core.errors import VirtbenchError


def test_jain_index_hand_computed():
    assert jain_index([5.0, 5.0, 5.0, 5.0]) == 1.0
    assert jain_index([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)      # one got everything
    assert jain_index([1.0, 3.0]) == pytest.approx(16 / (2 * 10))        # (1+3)^2 / (2*(1+9))


def test_spread_is_max_over_min():
    assert spread_pct([100.0, 114.0, 105.0]) == pytest.approx(14.0)   # CNAF's "max difference 14 %"
    assert spread_pct([0.0, 0.0]) == 0.0
    assert spread_pct([0.0, 3.0]) is None          # no finite percentage: left out, not inf


def test_combine_leaves_out_a_spread_it_cannot_express():
    metrics = (Metric("retransmits", "segments", False),)
    v = combine(metrics, [{"retransmits": 0.0}, {"retransmits": 4.0}])
    assert v["retransmits"] == 2.0 and "retransmits_spread_pct" not in v


def test_combine_sums_throughput_and_averages_times():
    metrics = (Metric("mb_s", "MB/s", True), Metric("seconds", "s", False))
    v = combine(metrics, [{"mb_s": 10.0, "seconds": 2.0}, {"mb_s": 30.0, "seconds": 4.0}])
    assert v["mb_s"] == 40.0 and v["seconds"] == 3.0
    assert v["mb_s_i0"] == 10.0 and v["mb_s_i1"] == 30.0
    assert v["mb_s_spread_pct"] == pytest.approx(200.0)
    assert v["seconds_fairness"] == pytest.approx(36 / (2 * 20))
    names = [m.name for m in group_metrics(metrics, 2)]
    assert set(v) == set(names)


def test_too_many_instances_for_the_host_is_bad_input():
    with pytest.raises(VirtbenchError, match="instances need .* CPUs, more than"):
        environments.create("native:instances=64")
    with pytest.raises(VirtbenchError, match="instances=0 is not valid"):
        environments.create("native:instances=0")
