from __future__ import annotations

import pytest

from virtbench.measure.benchmarks.workloads import percentiles as pc


@pytest.mark.parametrize("q, n, name", [(0.5, 200, "p50_ms"), (0.99, 10_000, "p99_ms"),
                                        (0.999, 100_000, "p99.9_ms"), (0.95, 2_000, "p95_ms")])
def test_a_percentile_needs_100_beyond_it(q, n, name):
    assert pc.requests_needed(q) == n and pc.metric_name(q) == name
    assert pc.quantile_of(name) == pytest.approx(q)


def test_what_a_trial_supports_and_the_line_for_the_rest():
    both = pc.supported((0.5, 0.99), 10_000, "redis get")
    assert both == pc.Supported({"p50_ms": 0.5, "p99_ms": 0.99}, None)
    some = pc.supported((0.5, 0.99, 0.999), 2_000, "redis get")
    assert some.kept == {"p50_ms": 0.5}
    assert some.left_out == (
        "redis get: p99_ms, p99.9_ms left out: 2,000 requests in a trial, and a percentile q "
        "needs 100/(1-q) (100,000 for p99.9_ms); give the trial more requests (a longer or "
        "faster run)")
    assert some.warnings() == [("percentile_left_out", some.left_out)] and both.warnings() == []
    assert pc.supported((0.5,), 199, "x").kept == {}
    with pytest.raises(ValueError):
        pc.requests_needed(1.0)


def test_a_closed_loop_hides_the_requests_its_stalled_clients_never_sent():
    # 1,000 answers at 1 ms and 2 at 50 ms: each slow one held its client 49 requests' time
    assert pc.omitted_estimate([(1.0, 1000), (50.0, 2)]) == 98
    assert pc.omitted_estimate([(1.0, 500), (1.5, 500)]) == 0     # nothing beyond 2x median
    assert pc.omitted_estimate([]) == 0
