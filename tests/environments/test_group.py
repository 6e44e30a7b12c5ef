"""Several instances at once: aggregate, spread, Jain's fairness, capacity bounds."""
import json

import pytest

from virtbench import cli, environments
from virtbench.benchmarks.base import Metric
from virtbench.environments.group import combine, group_metrics, jain_index, spread_pct
from virtbench.errors import VirtbenchError


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


def test_two_native_instances_end_to_end(capsys, store_url):
    code = cli.main(["run", "--env", "native:instances=2", "--bench", "cyclepi", "--trials", "2",
                     "--quick", "--no-progress"])
    assert code == 0
    capsys.readouterr()
    cli.main(["report", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["environments"][0]["label"] == "native/x2"
    assert data["environments"][0]["spec"] == "native:instances=2"
    by_metric = {r["metric"]: r for r in data["results"]}
    assert {"cycles", "cycles_i0", "cycles_i1", "cycles_spread_pct", "cycles_fairness"} <= set(by_metric)
    # each trial's aggregate and fairness come from that trial's two instances (Jain's index
    # of two is always within [0.5, 1]: a range check could not fail)
    per_trial = zip(by_metric["cycles_i0"]["samples"], by_metric["cycles_i1"]["samples"],
                    by_metric["cycles"]["samples"], by_metric["cycles_fairness"]["samples"])
    for a, b, aggregate, fairness in per_trial:
        assert fairness == pytest.approx(jain_index([a, b]))
        # cycles: a job's time without stamps (TSCs of two guests are not one clock): the
        # slowest instance
        assert aggregate == max(a, b)
    # seconds: stamped, so the makespan on the host's clock: from the first start to the last
    # end, at least as long as either instance's own time
    for a, b, span in zip(by_metric["seconds_i0"]["samples"], by_metric["seconds_i1"]["samples"],
                          by_metric["seconds"]["samples"]):
        assert span >= max(a, b) - 2e-6
    # every report says what each aggregate is
    assert (by_metric["cycles"]["aggregate"], by_metric["seconds"]["aggregate"]) == \
        ("slowest", "makespan")
    assert by_metric["cycles_i0"]["aggregate"] is None
    cli.main(["report", "--format", "table"])
    table = capsys.readouterr().out
    assert "native/x2 · cyclepi · cycles: the slowest of the 2 instances" in table
    assert "native/x2 · cyclepi · seconds: makespan of the 2 instances" in table
