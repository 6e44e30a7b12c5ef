"""The live part of tests/unit/environments/test_group.py: its tests that need root and this host.

Several instances at once: aggregate, spread, Jain's fairness, capacity bounds.
"""
import json
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.measure.environments.group import jain_index


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
