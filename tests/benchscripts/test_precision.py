"""bench/precision.py's pure parts: injected slowdowns and alarm counting."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

SPEC = importlib.util.spec_from_file_location(
    "precision", Path(__file__).resolve().parents[2] / "bench" / "precision.py")
precision = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(precision)


def test_slowdown_is_worse_whatever_the_direction():
    x = np.array([100.0, 200.0])
    assert list(precision.slowed(x, 0.1, hib=True)) == pytest.approx([90.0, 180.0])
    assert list(precision.slowed(x, 0.1, hib=False)) == pytest.approx([110.0, 220.0])


def test_quiet_samples_detect_ten_percent_and_raise_no_a_a_alarm():
    quiet = [100 * (1 + 0.002 * ((i * 7) % 24 - 12) / 12) for i in range(24)]   # ±0.2 %
    c = precision.alarms(quiet, hib=True, repeats=10, alpha=0.05)
    assert c["aa"] <= 2 and c["slow10"] == 10 and c["slow5"] == 10


def test_noisy_samples_miss_a_five_percent_slowdown():
    noisy = list(np.random.default_rng(0).normal(100, 20, 12))               # CV 20 %
    c = precision.alarms(noisy, hib=False, repeats=10, alpha=0.05)
    assert c["slow5"] < 10


def test_table_warns_when_the_split_cannot_reach_alpha():
    found = {"pi.seconds": {"hib": False, "samples": [1.0, 1.1, 0.9, 1.05, 0.95, 1.0]}}
    lines = precision.table(found, repeats=2, alpha=0.05)
    assert "can never reach" in lines[-1] and "--trials 10" in lines[-1]
