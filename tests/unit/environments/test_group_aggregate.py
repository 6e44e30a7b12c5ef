"""One definition of a group's aggregate: the work of all instances over one common interval
on the host's clock (as stream's processes=N), each instance's clock mapped onto the host's;
a sum of the instances' rates only where the tool stamps nothing, and said so; makespan for a
job's time. Failed group trials keep each instance's values as evidence."""
from __future__ import annotations

import json

import pytest

from runkit import Inert
from virtbench.measure import environments
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.base import Benchmark, Metric, Timing, span_of
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.group import InstanceGroup
from virtbench.measure.environments.instances import aggregates, group_metrics
from virtbench.core.errors import AgentError
from virtbench.core.outcome import TrialOutcome
from virtbench.foundations.stats.aggregate import (
    ClockOffset,
    Span,
    across,
    best_offset,
    common_rate,
    makespan,
    offset_from_ping,
    transpose,
)

RATE = Metric("mb_s", "MB/s", True, "a rate")
TIME = Metric("seconds", "s", False, "a job", aggregate="makespan")
LATENCY = Metric("rtt_us", "µs", False, "a latency")


# -- the pure parts ---------------------------------------------------------------------------
def test_the_aggregate_is_all_work_over_one_common_interval_not_a_sum_of_bests():
    # two instances, two blocks; each instance's best block is a different one
    a = [Span(0.0, 1.0, 10.0), Span(2.0, 2.5, 10.0)]      # own best: 20 MB/s (block 1)
    b = [Span(0.0, 0.5, 10.0), Span(2.2, 3.2, 10.0)]      # own best: 20 MB/s (block 0)
    values, methods = aggregates((RATE,), [{"mb_s": 20.0}, {"mb_s": 20.0}], {"mb_s": [a, b]})
    assert methods == {"mb_s": "common-interval"}
    # block 0: 20 MB over [0, 1] = 20; block 1: 20 MB over [2, 3.2] = 16.7 -> best 20, not 40
    assert values["mb_s"] == pytest.approx(20.0)
    assert values["mb_s_i0"] == 20.0 and values["mb_s_fairness"] == 1.0
    best = common_rate(transpose([a, b]))
    assert (best.block, best.interval_s, best.skew_s) == (0, 1.0, 0.0)


def test_without_stamps_a_rate_is_the_sum_and_a_jobs_time_the_slowest():
    values, methods = aggregates((RATE, TIME, LATENCY), [
        {"mb_s": 10.0, "seconds": 2.0, "rtt_us": 10.0},
        {"mb_s": 30.0, "seconds": 4.0, "rtt_us": 30.0}])
    assert values["mb_s"] == 40.0 and values["seconds"] == 4.0 and values["rtt_us"] == 20.0
    assert methods == {"mb_s": "sum", "seconds": "slowest", "rtt_us": "mean"}


def test_a_stamped_jobs_time_is_the_makespan():
    a, b = [Span(10.0, 12.0)], [Span(10.5, 13.0)]
    values, methods = aggregates((TIME,), [{"seconds": 2.0}, {"seconds": 2.5}],
                                 {"seconds": [a, b]})
    assert values["seconds"] == 3.0 and methods == {"seconds": "makespan"}
    assert makespan(transpose([a, b])).skew_s == 0.5


def test_instances_that_stamped_different_blocks_fall_back_and_say_so():
    values, methods = aggregates((RATE,), [{"mb_s": 1.0}, {"mb_s": 2.0}],
                                 {"mb_s": [[Span(0, 1, 1)], [Span(0, 1, 1), Span(1, 2, 1)]]})
    assert values["mb_s"] == 3.0 and methods == {"mb_s": "sum"}


def test_metric_descriptions_say_which_aggregate_and_never_call_a_sum_a_common_interval():
    stream = {m.name: m for m in group_metrics(REGISTRY["stream"].metrics, 3,
                                               REGISTRY["stream"].timed)}
    assert stream["triad_mb_s"].description.startswith(
        "work of all 3 instances over one common interval on the host's clock")
    dd = {m.name: m for m in group_metrics(REGISTRY["dd-write"].metrics, 3)}
    text = dd["write_mb_s"].description
    assert text.startswith("sum of the 3 instances' own rates") and \
        "released together by one barrier" in text and "not a common interval" in text
    pi = {m.name: m for m in group_metrics(REGISTRY["pi"].metrics, 2, REGISTRY["pi"].timed)}
    assert pi["seconds"].description.startswith("makespan of the 2 instances")
    cyc = {m.name: m for m in group_metrics(REGISTRY["cyclepi"].metrics, 2,
                                            REGISTRY["cyclepi"].timed)}
    assert cyc["cycles"].description.startswith("the slowest of the 2 instances")


def test_clock_offsets_from_pings():
    o = offset_from_ping(sent=100.0, answered_at=5100.002, received=100.004)
    assert o.offset_s == pytest.approx(5000.0) and o.uncertainty_s == pytest.approx(0.002)
    assert best_offset([ClockOffset(1.0, 0.01), ClockOffset(1.2, 0.001)]).offset_s == 1.2
    both = across(ClockOffset(10.0, 0.001), ClockOffset(10.004, 0.002))
    assert both.offset_s == pytest.approx(10.002) and both.uncertainty_s == pytest.approx(0.004)


# -- a group of fakes whose clocks are far from the host's -------------------------------------
class Clocked(Inert):
    """An instance whose CLOCK_MONOTONIC is the host's + `offset` (a guest's since its boot)."""

    kind = "clocked"

    def __init__(self, offset: float, uncertainty: float = 1e-4):
        super().__init__(EnvSpec("clocked"))
        self.offset, self.uncertainty = offset, uncertainty
        self.lost = False

    def clock_offset(self, rounds=3):
        return ClockOffset(self.offset, self.uncertainty)


class Stamped(Benchmark):
    """Reports, on the instance's own clock, a measured section that starts `late` after the
    moment it is given and lasts `seconds` (per instance), with `work` MB."""

    name = "stamped"
    family = "test"
    metrics = (Metric("mb_s", "MB/s", True, "a rate"),)
    timed = ("mb_s",)

    def __init__(self, seconds=(1.0, 1.0), late=(0.0, 0.0), work=100.0, fail=None):
        self.seconds, self.late, self.work, self.fail = seconds, late, work, fail
        self.given: dict[int, float] = {}

    def run_trial(self, env, params, start_at=None):
        i = env.net_index
        self.given[i] = start_at
        if self.fail == ("agent", i):
            err = AgentError(f"instance agent gone")
            err.stdout = json.dumps({"mb_s": 42.0}) + "\n"
            raise err
        begin = start_at + self.late[i]
        out = {"start_s": begin, "end_s": begin + self.seconds[i], "work": self.work,
               "late_s": self.late[i], "mb_s": self.work / self.seconds[i]}
        if self.fail == ("exit", i):
            return TrialOutcome(error="exit status 3: check failed", exit=3,
                                stdout=json.dumps(out) + "\n", partial={"mb_s": 7.0})
        return TrialOutcome(values={"mb_s": out["mb_s"]}, stdout=json.dumps(out) + "\n", exit=0)

    def parse(self, stdout):
        return {"mb_s": json.loads(stdout)["mb_s"]}

    def timing(self, stdout):
        out = json.loads(stdout.strip().splitlines()[-1])
        return Timing({"mb_s": [span_of(out, work=out["work"])]}, out["late_s"])


def group_of(*members):
    return InstanceGroup(list(members), EnvSpec("clocked", {"instances": str(len(members))}))


def test_instances_start_at_one_moment_on_their_own_clocks_and_are_mapped_back():
    g = group_of(Clocked(1000.0), Clocked(-30.0))
    bench = Stamped(seconds=(1.0, 0.5))
    out = g.run_trial(bench, {})
    assert out.ok, out.error
    # each was told the same host moment, on its own clock
    assert bench.given[0] - 1000.0 == pytest.approx(bench.given[1] + 30.0, abs=1e-9)
    # on the host's clock both started together: 200 MB over the longer one's 1 s
    assert out.values["mb_s"] == pytest.approx(200.0, rel=1e-6)
    assert out.values["mb_s_i0"] == 100.0 and out.values["mb_s_i1"] == 200.0
    assert out.detail["aggregate"] == {"mb_s": "common-interval"}
    assert [c["offset_s"] for c in out.detail["clocks"]] == [1000.0, -30.0]
    assert out.detail["shortest_interval_s"] == pytest.approx(1.0)
    assert not out.warnings


def test_an_instance_ready_late_widens_the_interval_warns_once_and_the_next_lead_grows():
    # a 2 s late start in a 1 s block: the common interval holds the gap
    g = group_of(Clocked(5.0), Clocked(7.0))
    bench = Stamped(late=(0.0, 2.0))
    out = g.run_trial(bench, {})
    # 200 MB over [0, 3] on the host's clock: the gap is in the interval, honestly
    assert out.values["mb_s"] == pytest.approx(200.0 / 3.0, rel=1e-6)
    [(kind, message)] = out.warnings
    assert kind == "instances_apart" and "instance 1 was ready 2.000 s after" in message
    assert "started 2000.00 ms apart, 67% of its common interval" in message
    assert g.together.lead["stamped"] == pytest.approx((1.0 + 2.0) * 1.5)
    again = g.run_trial(bench, {})
    assert not again.warnings                               # said once
    assert again.detail["start_lead_s"] == pytest.approx(4.5)


def test_a_clock_bound_large_against_the_interval_is_warned():
    g = group_of(Clocked(0.0, uncertainty=0.01), Clocked(3.0))
    out = g.run_trial(Stamped(seconds=(0.5, 0.5)), {})
    [(kind, message)] = out.warnings
    assert kind == "clock_uncertainty" and "±10.000 ms, 4.0% of the shortest" in message


def test_a_failed_group_trial_keeps_each_instances_values_as_evidence():
    g = group_of(Clocked(0.0), Clocked(0.0))
    out = g.run_trial(Stamped(fail=("exit", 1)), {})
    assert out.error == "instance 1: exit status 3: check failed" and out.exit == 3
    assert out.values == {} and out.partial == {"mb_s_i0": 100.0, "mb_s_i1": 7.0}


def test_an_instance_whose_agent_is_lost_loses_the_groups_agent_and_keeps_what_it_sent():
    g = group_of(Clocked(0.0), Clocked(0.0))
    out = g.run_trial(Stamped(fail=("agent", 1)), {})
    assert out.error == "agent lost: instance 1: instance agent gone"
    assert out.partial == {"mb_s_i0": 100.0, "mb_s_i1": 42.0}
    assert '{"mb_s": 42.0}' in out.stdout


# -- real kernels in native instances ---------------------------------------------------------
def test_native_instances_of_stream_aggregate_over_one_common_interval(tmp_path):
    g = environments.create(f"native:scratch={tmp_path},instances=2")
    stream = REGISTRY["stream"]
    params = stream.params({"elements": 300000, "passes": 6})
    with g:
        out = g.run_trial(stream, params)
    assert out.ok, out.error
    assert set(out.detail["aggregate"].values()) == {"common-interval"}
    texts = out.stdout.split("== instance ")[1:]
    timings = [stream.timing(t.split("\n", 1)[1]) for t in texts]
    for k in ("copy", "scale", "add", "triad"):
        name = f"{k}_mb_s"
        spans = [t.spans[name] for t in timings]            # native: the host's own clock
        assert out.values[name] == pytest.approx(common_rate(transpose(spans)).value, rel=1e-12)
        # never more than the sum of each instance's own best
        own = out.values[f"{name}_i0"] + out.values[f"{name}_i1"]
        assert out.values[name] <= own * (1 + 1e-5)
    # told one moment, the two began their first pass together (both were ready in time)
    assert all(x < 0.1 for x in out.detail["late_s"])
    firsts = [json.loads(t.strip().splitlines()[-1])["spans"]["copy"][0][0] for t in texts]
    assert abs(firsts[0] - firsts[1]) < 0.05
    # this first trial measured the slots; the next gives every kernel of every pass one,
    # 1.5 x the longest block seen (plus margins), counted from the common start
    assert out.detail["slot_s"] is None
    slot = g.together.slot["stream"]
    # (the measured passes: the warm-up pass, often the longest, is not in a block)
    longest = max(s.end - s.start for t in timings for blocks in t.spans.values()
                  for s in blocks)
    assert slot == pytest.approx(1.5 * longest + 0.002, rel=1e-6)
    with g:
        again = g.run_trial(stream, params)
    assert again.ok and again.detail["slot_s"] == slot
    for t in again.stdout.split("== instance ")[1:]:
        result = json.loads(t.strip().splitlines()[-1])
        start = result["start_at"]
        for k, kernel in enumerate(("copy", "scale", "add", "triad")):
            for p, (a, _) in enumerate(result["spans"][kernel]):
                assert a >= start + (4 * p + k) * result["slot_s"] - 1e-6
