"""The test hook bench/precision.py injects a known slowdown with:
VIRTBENCH_INJECT_SLOWDOWN=F makes every measured section about 1 + F times as long."""
import json
import os
import subprocess

import pytest

import statistics

PAIRS = 7


def _run(kernel_bin_dir, name, args, fraction):
    env = dict(os.environ)
    env.pop("VIRTBENCH_INJECT_SLOWDOWN", None)
    if fraction is not None:
        env["VIRTBENCH_INJECT_SLOWDOWN"] = fraction
    proc = subprocess.run([str(kernel_bin_dir / name), *args], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1]), proc.stderr


def _runs(kernel_bin_dir, name, args, fraction, n=1):
    return [_run(kernel_bin_dir, name, args, fraction) for _ in range(n)]


@pytest.mark.parametrize("name, args, value", [
    ("pi", ["-k", "18"], lambda r: r["seconds"]),
    ("himeno", ["-s", "S", "-n", "64"], lambda r: 1 / r["mflops"]),
    ("stream", ["-n", "2000000", "-p", "4"], lambda r: 1 / r["aggregate"]["triad_mb_s"])])
def test_half_again_as_long_when_asked(kernel_bin_dir, name, args, value):
    ratios, notes = [], []
    for _ in range(PAIRS):         # back to back, so a busy moment of a shared host hits both
        (plain, plain_err), = _runs(kernel_bin_dir, name, args, None)
        (slowed, slowed_err), = _runs(kernel_bin_dir, name, args, "0.5")
        ratios.append(value(slowed) / value(plain))
        notes.append(("test hook" in plain_err, "made 50 % longer (a test hook)" in slowed_err))
    assert 1.3 <= statistics.median(ratios) <= 1.75, ratios
    assert set(notes) == {(False, True)}
    if name != "stream":           # the stamps bound the lengthened section
        assert slowed["end_s"] - slowed["start_s"] == pytest.approx(slowed["seconds"], abs=1e-5)


@pytest.mark.parametrize("bad", ["abc", "0", "-0.1", "2"])
def test_a_value_out_of_range_does_nothing(kernel_bin_dir, bad):
    (result, err), *_ = _runs(kernel_bin_dir, "pi", ["-k", "10"], bad)
    assert result["verified"] is True and "test hook" not in err
