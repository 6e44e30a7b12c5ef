"""The real runner (fake environments, tests/support/runkit.py) stores what the paired analysis reads:
trial = block, seq = the order inside it; a study's `versus` and `report --baseline` work on
what it stored, without running anything again."""
import io
import sys
from pathlib import Path

from rich.console import Console

from runkit import Quiet, one_study

from virtbench.results.analysis import analyze_run  # noqa: E402
from virtbench.measure.benchmarks.base import Benchmark, Metric, TrialOutcome  # noqa: E402
from virtbench.measure.environments.base import EnvSpec  # noqa: E402
from virtbench.execution.run.runner import Prepared, Runner  # noqa: E402
from virtbench.foundations.store import Store  # noqa: E402
from virtbench.study.design import EnvironmentEntry  # noqa: E402

SPEED = {"base": 100.0, "slow": 60.0, "tuned": 63.0}


class Scaled(Benchmark):
    """A time per environment (SPEED), times a slow drift of the host over the run and a
    little noise of its own: the drift is what the blocks share."""

    name = "scaled"
    family = "test"
    metrics = (Metric("rate", "MB/s", True),)

    def __init__(self):
        self.calls = 0

    def run_trial(self, env, params):
        self.calls += 1
        drift = 1 + 0.3 * (self.calls % 7) / 7            # the host's mood, 0-30 %
        own = 1 + 0.003 * ((self.calls * 5) % 3 - 1)
        return TrialOutcome(values={"rate": SPEED[env.label] * drift * own}, exit=0, stdout="")


def blocks_study():
    """Nine blocks of the three environments, tuned also against slow."""
    return one_study(name="blocks", trials=9, seed=3, baseline="base",
                     cases=[("scaled", "scaled")],
                     environments=[EnvironmentEntry("base"), EnvironmentEntry("slow"),
                                   EnvironmentEntry("tuned", versus="slow")])


def test_the_runner_stores_blocks_the_analysis_pairs(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    envs = {label: Quiet(label) for label in SPEED}
    for label, env in envs.items():
        env.spec = EnvSpec(label)         # stored as the environment's spec, as a study's
    prepared = Prepared(blocks_study(), envs, {"scaled": (Scaled(), {})}, "base")
    out = Runner(store, console=Console(file=io.StringIO()), show_progress=False).start(prepared)
    trials = store.trials(out.run_id)
    # each block holds every environment once, its seq range after the previous block's
    for t in range(9):
        seqs = sorted(x["seq"] for x in trials if x["trial"] == t)
        assert len(seqs) == 3 and seqs == list(range(3 * t, 3 * t + 3))
    result = analyze_run(store, out.run_id)
    slow = next(r for r in result.results if r.environment == "slow").vs_baseline
    # the drift (0-30 %) is shared inside a block: the paired ratio sees 0.6 through it
    assert slow.analysis == "paired" and abs(slow.ratio - 0.6) < 0.01
    assert slow.verdict == "fail" and slow.blocks == 9 and slow.order is not None
    assert slow.order.env_first + slow.order.ref_first == 9
    # the runner stored the study with versus: tuned against slow, besides the baseline
    tuned = next(r for r in result.results if r.environment == "tuned")
    assert [v.reference for v in tuned.vs_others] == ["slow"]
    assert abs(tuned.vs_others[0].ratio - 1.05) < 0.03
    # re-analysed against slow: no run again
    again = analyze_run(store, out.run_id, baseline="slow")
    tuned = next(r for r in again.results if r.environment == "tuned")
    assert tuned.vs_baseline.reference == "slow" and tuned.vs_others == []
    assert len(store.trials(out.run_id)) == 27
