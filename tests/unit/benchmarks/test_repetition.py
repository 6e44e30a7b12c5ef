"""A short measured section repeated inside a trial: its length from the kernel's stamps,
the loop count, and the repetitions as one outcome (pure)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from virtbench.measure.benchmarks import get
from virtbench.measure.benchmarks.base import Metric
from virtbench.measure.benchmarks.repetition import combine, mean_value, repetitions_for, section_s
from virtbench.core.outcome import TrialOutcome

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "sections"


@pytest.mark.parametrize("name, file", [("pi", "pi-k12.stdout"), ("himeno", "himeno-xs-n48.stdout"),
                                        ("cyclepi", "cyclepi-n2e6.stdout")])
def test_a_kernel_s_section_is_from_its_start_to_its_end(name, file):
    text = (FIX / file).read_text()
    result = json.loads(text.splitlines()[-1])
    assert section_s(get(name), text) == pytest.approx(result["end_s"] - result["start_s"])


def test_stream_s_section_spans_its_measured_passes_of_all_four_kernels():
    text = (FIX / "stream-n1e5-p3.stdout").read_text()
    result = json.loads(text.splitlines()[-1])
    warm = result["warmup_passes"]
    measured = [span for k in ("copy", "scale", "add", "triad") for span in result["spans"][k][warm:]]
    expected = max(b for _, b in measured) - min(a for a, _ in measured)
    assert section_s(get("stream"), text) == pytest.approx(expected)
    # the first (warm-up) pass is not part of it
    assert min(a for a, _ in measured) > result["spans"]["copy"][0][0]


def test_output_without_stamps_has_no_known_section():
    old = Path(__file__).resolve().parents[2] / "fixtures" / "kernels" / "pi-k16.stdout"
    assert section_s(get("pi"), old.read_text()) is None     # an older kernel's output
    assert section_s(get("pi"), "") is None
    assert section_s(get("dd-write"), "512+0 records in\n") is None


@pytest.mark.parametrize("section, minimum, most, k", [
    (0.034, 0.5, 200, 15), (0.5, 0.5, 200, 1), (2.0, 0.5, 200, 1), (None, 0.5, 200, 1),
    (0.034, 0, 200, 1), (1e-6, 0.5, 200, 200), (0.0, 0.5, 50, 50), (0.1, 0.5, 200, 5)])
def test_repetitions_reach_the_minimum_within_the_cap(section, minimum, most, k):
    assert repetitions_for(section, minimum, most) == k


def test_times_average_arithmetically_rates_harmonically():
    assert mean_value([1.0, 3.0], higher_is_better=False) == 2.0
    # two runs of one work at 100 and 300 MB/s: total work / total time = 150
    assert mean_value([100.0, 300.0], higher_is_better=True) == pytest.approx(150.0)


METRICS = (Metric("seconds", "s", False), Metric("mb_s", "MB/s", True))


def _ok(i):
    return TrialOutcome(values={"seconds": float(i), "mb_s": 100.0 * i}, stdout=f"out {i}\n",
                        stderr=f"err {i}\n", exit=0, wall_s=1.0 + i, cpu_s=0.5 * i,
                        warnings=[("w", "same")])


def test_repetitions_become_one_trial_with_each_value_kept():
    out = combine([_ok(1), _ok(2), _ok(4)], METRICS, [0.1, 0.2, None])
    assert out.ok
    assert out.values["seconds"] == pytest.approx(7 / 3)
    assert out.values["mb_s"] == pytest.approx(3 / (1 / 100 + 1 / 200 + 1 / 400))
    assert out.detail["repetitions"] == 3
    assert out.detail["per_repetition"] == {"seconds": [1.0, 2.0, 4.0], "mb_s": [100.0, 200.0, 400.0]}
    assert out.detail["repetition_section_s"] == [0.1, 0.2, None]
    assert out.detail["section_s"] == pytest.approx(0.3)
    assert out.wall_s == pytest.approx(10.0) and out.cpu_s == pytest.approx(3.5)
    assert out.warnings == [("w", "same")]                         # said once
    assert "== repetition 3\nout 4" in out.stdout and "err 1" in out.stderr


def test_one_repetition_is_the_trial_itself_with_its_section():
    out = combine([_ok(2)], METRICS, [0.6])
    assert out.values == {"seconds": 2.0, "mb_s": 200.0} and out.stdout == "out 2\n"
    assert out.detail == {"repetitions": 1, "section_s": 0.6}


def test_a_failed_repetition_fails_the_trial_and_keeps_what_the_others_measured():
    bad = TrialOutcome(error="exit status 3: verification failed", exit=3,
                       partial={"seconds": 9.0})
    out = combine([_ok(1), _ok(3), bad], METRICS, [0.1, 0.1, None])
    assert not out.ok
    assert out.error == "repetition 3 of 3: exit status 3: verification failed"
    assert out.partial["seconds"] == 2.0 and out.exit == 3
    assert out.detail["per_repetition"]["seconds"] == [1.0, 3.0]
    assert out.cpu_s is None                         # one repetition did not say


def test_an_agent_lost_in_a_repetition_still_reads_as_an_agent_lost():
    lost = TrialOutcome(error="agent lost: connection closed")
    out = combine([_ok(1), lost], METRICS, [0.1, None])
    assert out.error == "agent lost: connection closed"      # the runner's loss handling
