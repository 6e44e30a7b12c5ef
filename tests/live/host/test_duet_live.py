"""The live part of tests/unit/run/test_duet.py: its tests that need root and this host.

Duet mode: each block's pair run at once on disjoint CPUs, paired by time (a real native
run), and the pure parts (which slots pair, how much two intervals overlap).
"""
from __future__ import annotations
import os
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="duet needs two CPUs")
def test_a_native_duet_runs_both_at_once_on_their_own_cpus(store_url, capsys):
    code = cli.main(["run", "--env", "native", "--env", "native:name=twin", "--bench",
                     "pi:k=14", "--trials", "3", "--duet", "--no-progress", "--seed", "7"])
    _, err = capsys.readouterr()
    assert code == 0, err
    store = Store(store_url)
    run = store.get_run()
    assert "in duet" in err
    trials = store.trials(run["id"], include_warmup=True)
    assert len(trials) == 8                      # (3 trials + 1 warm-up) x 2, all in pairs
    by = {(t["environment"], t["trial"]): t["detail"]["duet"] for t in trials}
    for n in (-1, 0, 1, 2):
        a, b = by[("native", n)], by[("twin", n)]
        assert a["partner"] == "twin" and b["partner"] == "native"
        assert a["overlap"] == b["overlap"] > 0.5        # they ran at the same time
        assert abs(a["start_skew_s"]) < 0.5 and a["start_skew_s"] == -b["start_skew_s"]
        assert len(a["cpus"]) == len(b["cpus"]) == 1 and a["cpus"] != b["cpus"]
    # which side has which CPU is drawn per block with the seed (7: both ways), not fixed
    assert len({tuple(by[("native", n)]["cpus"]) for n in (-1, 0, 1, 2)}) == 2
    env = {e["label"]: e for e in store.environments(run["id"])}
    assert "duet" in env["native"]["metadata"]["pinning"]["benchmarks"]["pi"]
