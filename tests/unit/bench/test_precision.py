"""bench/precision.py's pure parts: independent stretches of blocks, the stopping rule applied
from each stretch's start, what counts as a hit, the noise read from an A/A row."""
import importlib.util
import sys
from math import log
from pathlib import Path

import numpy as np
import pytest

SPEC = importlib.util.spec_from_file_location(
    "precision", Path(__file__).resolve().parents[3] / "bench" / "precision.py")
precision = importlib.util.module_from_spec(SPEC)
sys.modules["precision"] = precision          # its dataclasses look their module up
SPEC.loader.exec_module(precision)


def _pair(n, ratio, cv, seed=0):
    g = np.random.default_rng(seed)
    ref = {b: float(np.exp(cv * g.standard_normal())) for b in range(n)}
    env = {b: ref[b] * ratio * float(np.exp(cv * g.standard_normal())) for b in range(n)}
    return env, ref


def test_slower_reads_the_metric_s_direction():
    assert precision.slower(log(0.9), hib=True) and not precision.slower(log(1.1), hib=True)
    assert precision.slower(log(1.1), hib=False) and not precision.slower(log(0.9), hib=False)


def test_fixed_runs_are_disjoint_stretches_of_twelve():
    env, ref = _pair(40, 1.10, 0.01)                  # 3 stretches, 4 blocks left over
    unpaired, paired = precision.fixed_runs(env, ref, False, aa=False, alpha=0.05)
    assert (unpaired.runs, unpaired.blocks) == (3, 36) and (paired.runs, paired.blocks) == (3, 36)
    assert paired.hits == 3                           # 10 % slower in time: seen every time
    # the same data read as throughput: "slower" is the other side, so no hit
    assert precision.fixed_runs(env, ref, True, aa=False, alpha=0.05)[1].hits == 0
    # as an A/A row any significant difference is a (false) alarm
    assert precision.fixed_runs(env, ref, True, aa=True, alpha=0.05)[1].hits == 3


def test_adaptive_runs_stop_by_the_rule_and_start_where_the_last_stopped():
    env, ref = _pair(60, 1.25, 0.005)                 # decided at the minimum, every time
    t = precision.adaptive_runs(env, ref, False, aa=False, alpha=0.05, within=30)
    assert t.runs == 10 and t.blocks == 60 and t.hits == 10
    same, _ = _pair(60, 1.0, 0.0)
    noisy = {b: v * (1.3 if b % 2 else 0.77) for b, v in same.items()}    # never decides
    t = precision.adaptive_runs(noisy, same, False, aa=True, alpha=0.05, within=30)
    assert (t.runs, t.blocks, t.hits) == (2, 60, 0)  # each run spends its 30 blocks
    t = precision.adaptive_runs(noisy, same, False, aa=True, alpha=0.05, within=40)
    assert t.runs == 1 and t.blocks == 40             # the rest is too short to finish a run


def test_noise_of_an_a_a_row():
    env, ref = _pair(400, 1.0, 0.05, seed=3)
    cv, rho, n = precision.noise(env, ref)
    assert n == 400 and rho == pytest.approx(0.707, abs=0.05)   # corr(r, r + e), var e = var r
    assert cv == pytest.approx(0.061, abs=0.01)
