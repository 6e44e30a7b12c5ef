"""Tests of the C benchmark kernels (kernels/himeno.c, stream.c, pi.c).

Each kernel must print exactly one JSON line on stdout and human text on
stderr; exit 0 on success, 3 on a verification failure (JSON still printed),
2 on bad arguments.
"""
import json
import re
import pytest
from kernelfix import assert_contract, assert_usage_error, himeno_reference_gosa  # noqa: F401

PI_FIRST50 = "3.14159265358979323846264338327950288419716939937510"


@pytest.mark.parametrize("size,iterations", [("XS", 1), ("XS", 96), ("S", 3), ("M", 1), ("L", 1)])
def test_himeno_residual_checked_against_the_reference_table(run_kernel, size, iterations):
    program = "himeno-l" if size == "L" else "himeno"     # L's static arrays: their own program
    out = assert_contract(run_kernel(program, "-s", size, "-n", iterations, timeout=300))
    assert out["verified"] is True
    assert out["gosa"] == out["gosa_expected"]


@pytest.mark.parametrize("size,iterations", [("XS", 7), ("S", 3), ("M", 1)])
def test_himeno_layouts_give_the_same_residual_bit_for_bit(run_kernel, size, iterations):
    """padded (RIKEN's static arrays, the default) and packed (our faster variant) do the same
    arithmetic in the same order: the same gosa to the last bit, the reference's."""
    default = assert_contract(run_kernel("himeno", "-s", size, "-n", iterations))
    padded = assert_contract(run_kernel("himeno", "-s", size, "-n", iterations, "-l", "padded"))
    packed = assert_contract(run_kernel("himeno", "-s", size, "-n", iterations, "-l", "packed"))
    assert (default["layout"], padded["layout"], packed["layout"]) == ("padded", "padded", "packed")
    assert default["gosa"] == padded["gosa"] == packed["gosa"] == padded["gosa_expected"]
    assert padded["verified"] is True and packed["verified"] is True


@pytest.mark.parametrize("layout", ["padded", "packed"])
def test_himeno_layouts_match_numpy_over_many_iterations(run_kernel, layout):
    out = assert_contract(run_kernel("himeno", "-s", "XS", "-n", 48, "-l", layout))
    assert out["gosa"] == pytest.approx(himeno_reference_gosa(32, 32, 64, 48), rel=5e-5)


@pytest.mark.parametrize("layout", ["padded", "packed"])
def test_himeno_calibration_restarts_from_the_initial_state(run_kernel, layout):
    """A calibrated run re-initialises the fields after its rehearsal (static arrays too):
    its residual is the reference's for the count it ran, not for rehearsal + count."""
    out = assert_contract(run_kernel("himeno", "-s", "XS", "-t", "0.1", "-l", layout))
    assert out["verified"] is True and out["iterations"] > 3


@pytest.mark.parametrize("layout", ["padded", "packed"])
def test_himeno_wrong_residual_fails_the_run(run_kernel, layout):
    run = run_kernel("himeno", "-s", "XS", "-n", 12, "-l", layout, "--corrupt-point")
    out = assert_contract(run, expected_rc=3)
    assert out["verified"] is False
    assert out["gosa"] != out["gosa_expected"]
    assert "RESIDUAL CHECK FAILED" in run.stderr


def test_himeno_count_without_reference_is_unverified(run_kernel):
    out = assert_contract(run_kernel("himeno", "-s", "XS", "-n", 9))
    assert out["verified"] is None and out["gosa_expected"] is None


def test_himeno_mflops_formula(run_kernel):
    out = assert_contract(run_kernel("himeno", "-s", "XS", "-n", 300))
    imax, jmax, kmax = out["grid"]
    assert out["seconds"] > 0
    expect = 34 * (imax - 2) * (jmax - 2) * (kmax - 2) * out["iterations"] / out["seconds"] / 1e6
    # seconds is printed with 6 decimals; the run lasts >> 1 ms.
    assert out["mflops"] == pytest.approx(expect, rel=1e-3)


def test_himeno_calibrated_run(run_kernel):
    out = assert_contract(run_kernel("himeno", "-s", "XS", "-t", "0.3"))
    assert out["iterations"] >= 1
    assert out["mflops"] > 0
    # calibration picks a count the residual table holds, so the run is checked
    assert out["verified"] is True
    # Calibrated to ~0.3 s; generous bounds to survive a noisy machine.
    assert 0.02 < out["seconds"] < 5
    assert "calibration" in run_kernel("himeno", "-s", "XS", "-t", "0.05").stderr


@pytest.mark.parametrize("args", [
    ["-s", "XXL"], ["-s", "m"], ["-n", "0"], ["-n", "x"], ["-n"], ["-t", "-1"],
    ["-t", "0"], ["-q"], ["XS"], ["-l", "static"], ["-l"],
])
def test_himeno_bad_arguments(run_kernel, args):
    assert_usage_error(run_kernel("himeno", *args))


RATE_KEYS = ("copy_mb_s", "scale_mb_s", "add_mb_s", "triad_mb_s")


@pytest.mark.parametrize("procs", [1, 2, 3])
def test_stream_runs_and_validates(run_kernel, procs):
    out = assert_contract(run_kernel("stream", "-n", 200000, "-p", 5, "-P", procs))
    assert out["kernel"] == "stream"
    assert out["elements"] == 200000
    assert out["passes"] == 5
    assert out["processes"] == procs
    assert out["validated"] is True
    assert len(out["per_process"]) == procs
    for proc in out["per_process"]:
        assert set(proc) == set(RATE_KEYS)
        assert all(proc[k] > 0 for k in RATE_KEYS)
    assert set(out["aggregate"]) == set(RATE_KEYS)
    assert out["timing"] == ("single-process" if procs == 1 else "common-interval")
    for k in RATE_KEYS:
        total = sum(proc[k] for proc in out["per_process"])
        if procs == 1:
            assert out["aggregate"][k] == total
        else:
            # one common interval per kernel is at least as long as each process's own
            assert out["aggregate"][k] <= total * (1 + 1e-9)


def test_stream_aggregate_is_all_bytes_over_the_common_interval(run_kernel):
    n, procs = 300000, 2
    run = run_kernel("stream", "-n", n, "-p", 5, "-P", procs)
    out = assert_contract(run)
    common = dict(re.findall(r"(copy|scale|add|triad) [0-9.]+ MB/s \(common best ([0-9.]+) s\)",
                             run.stderr))
    assert set(common) == {"copy", "scale", "add", "triad"}, run.stderr
    for name, nbytes in (("copy", 16), ("scale", 16), ("add", 24), ("triad", 24)):
        expect = procs * nbytes * n / float(common[name]) / 1e6
        assert out["aggregate"][f"{name}_mb_s"] == pytest.approx(expect, rel=1e-4)


def test_stream_reports_the_cache_rule(run_kernel):
    small = assert_contract(run_kernel("stream", "-n", 1000, "-p", 2))
    if small["llc_bytes"] is None:
        pytest.skip("this host's sysfs describes no caches")
    assert small["array_bytes"] == 8000
    assert small["cache_rule"] is False          # 8 kB is far below 4 x any last-level cache
    big = 4 * small["llc_bytes"] // 8
    if big * 24 > 2 * 2**30:
        pytest.skip("the last-level cache is too large to fill 4x here")
    out = assert_contract(run_kernel("stream", "-n", big, "-p", 2))
    assert out["cache_rule"] is True


def test_stream_rates_are_bytes_over_best_time(run_kernel):
    # stderr reports each kernel's best time; the JSON rate must be
    # bytes moved (16 per element for Copy/Scale, 24 for Add/Triad) / best / 1e6.
    n = 200000
    run = run_kernel("stream", "-n", n, "-p", 5)
    out = assert_contract(run)
    best = dict(re.findall(r"(copy|scale|add|triad) [0-9.]+ MB/s \(best ([0-9.]+) s\)", run.stderr))
    assert set(best) == {"copy", "scale", "add", "triad"}, run.stderr
    for name, nbytes in (("copy", 16), ("scale", 16), ("add", 24), ("triad", 24)):
        expect = nbytes * n / float(best[name]) / 1e6
        assert out["per_process"][0][f"{name}_mb_s"] == pytest.approx(expect, rel=1e-4)


@pytest.mark.parametrize("procs", [1, 2])
def test_stream_validation_failure_detected(run_kernel, procs):
    # Test hook: one element of a[] off by 1 part in 1e12 must fail validation.
    run = run_kernel("stream", "-n", 100000, "-p", 3, "-P", procs, "--corrupt-element", 99999)
    out = assert_contract(run, expected_rc=3)
    assert out["validated"] is False
    assert len(out["per_process"]) == procs
    assert "VALIDATION FAILED" in run.stderr


def test_stream_defaults_reported(run_kernel):
    # Only -n overridden, to stay fast; passes/processes take their defaults.
    out = assert_contract(run_kernel("stream", "-n", 50000))
    assert (out["passes"], out["processes"], out["validated"]) == (20, 1, True)


@pytest.mark.parametrize("args", [
    ["-P", "0"], ["-p", "1"], ["-n", "abc"], ["-n", "0"], ["-n"], ["-q"], ["-n", "10", "extra"],
    ["-n", "10", "--corrupt-element", "10"],
])
def test_stream_bad_arguments(run_kernel, args):
    assert_usage_error(run_kernel("stream", *args))


# FNV-1a 64 over the first 16384 fractional digits of pi (verified against
# MPFR by the kernel itself when the value was pinned).
PI_K14_CHECKSUM = "a28b02f99fc94d82"


def test_pi_verified(run_kernel):
    out = assert_contract(run_kernel("pi", "-k", 14))
    assert out["kernel"] == "pi"
    assert out["digits"] == 16384
    assert out["verified"] is True
    assert out["first50"] == PI_FIRST50
    assert re.fullmatch(r"[0-9a-f]{16}", out["checksum"])
    assert out["checksum"] == PI_K14_CHECKSUM
    assert 10 <= out["iterations"] <= 16  # ~log2(digits)
    assert out["seconds"] >= 0


def test_pi_digit_count_not_power_of_two(run_kernel):
    out = assert_contract(run_kernel("pi", "-d", 1000))
    assert (out["digits"], out["verified"], out["first50"]) == (1000, True, PI_FIRST50)


def test_pi_corrupt_leading_digit_detected(run_kernel):
    run = run_kernel("pi", "-k", 14, "--corrupt-digit", 1)
    out = assert_contract(run, expected_rc=3)
    assert out["verified"] is False
    assert out["first50"] != PI_FIRST50
    assert out["first50"][:3] == "3.6"  # digit 1 ('1') is changed
    assert "VERIFICATION FAILED" in run.stderr


@pytest.mark.parametrize("digit", [10000, 16384])
def test_pi_corrupt_deep_digit_caught_by_checksum(run_kernel, digit):
    run = run_kernel("pi", "-k", 14, "--corrupt-digit", digit)
    out = assert_contract(run, expected_rc=3)
    assert out["verified"] is False
    assert out["first50"] == PI_FIRST50  # only the checksum can catch it
    assert out["checksum"] != PI_K14_CHECKSUM
    assert "checksum" in run.stderr and "VERIFICATION FAILED" in run.stderr


def test_pi_k_range_is_the_benchmarks(run_kernel):
    from virtbench.measure.benchmarks import REGISTRY
    from virtbench.measure.benchmarks.cpu import PI_K_RANGE
    from virtbench.core.errors import VirtbenchError
    low, high = PI_K_RANGE
    assert f"K in {low}..{high}" in run_kernel("pi", "--help").stderr
    assert_usage_error(run_kernel("pi", "-k", low - 1))
    assert_usage_error(run_kernel("pi", "-k", high + 1))
    assert assert_contract(run_kernel("pi", "-k", low))["verified"] is True
    for k in (low, high):
        assert REGISTRY["pi"].params({"k": k})["k"] == k
    for k in (low - 1, high + 1):
        with pytest.raises(VirtbenchError, match="out of range"):
            REGISTRY["pi"].params({"k": k})


@pytest.mark.parametrize("args", [
    ["-k", "5"], ["-k", "29"], ["-k", "14", "-d", "100"], ["-d", "49"],
    ["-k", "14", "--corrupt-digit", "16385"], ["--corrupt-digit", "0"], ["-k"], ["--bogus"],
])
def test_pi_bad_arguments(run_kernel, args):
    assert_usage_error(run_kernel("pi", *args))


BYTES = {"copy": 16, "scale": 16, "add": 24, "triad": 24}


def test_the_python_common_interval_aggregate_is_the_kernels_own_on_its_stamps(run_kernel):
    """stream -P 3 computes its aggregate in C from every process's stamps; the one Python
    function virtbench applies to a group of instances gives the same figure on the same
    stamps (printed to the nanosecond), and on the per-pass spans stream prints for a host."""
    from virtbench.measure.benchmarks.memory import Stream
    from virtbench.foundations.stats.aggregate import Span, common_rate, transpose
    n, procs, passes = 200000, 3, 6
    out = assert_contract(run_kernel("stream", "-n", n, "-p", passes, "-P", procs, "--stamps"))
    assert len(out["stamps"]) == procs
    timing = Stream().timing(json.dumps(out))
    for k, nbytes in BYTES.items():
        mb = nbytes * n / 1e6
        per_process = [[Span(a, b, mb) for a, b in proc[k][1:]] for proc in out["stamps"]]
        ours = common_rate(transpose(per_process))
        assert ours.value == pytest.approx(out["aggregate"][f"{k}_mb_s"], rel=1e-5), k
        # what a host gets: this instance's spans (earliest start, latest end per pass)
        spans = timing.spans[f"{k}_mb_s"]
        assert len(spans) == passes - 1 and spans[0].work == pytest.approx(procs * mb)
        assert common_rate([[s] for s in spans]).value == pytest.approx(ours.value, rel=1e-9)
        # and it is not the sum of each process's own best: that one is at least as large
        assert sum(p[f"{k}_mb_s"] for p in out["per_process"]) >= ours.value * (1 - 1e-6)


def test_single_process_kernels_stamp_their_timed_section(run_kernel):
    from virtbench.measure.benchmarks.cpu import CyclePi, Himeno, Pi
    from virtbench.foundations.stats.aggregate import common_rate, makespan
    himeno = assert_contract(run_kernel("himeno", "-s", "XS", "-n", 48))
    [span] = Himeno().timing(json.dumps(himeno)).spans["mflops"]
    assert span.end - span.start == pytest.approx(himeno["seconds"], abs=2e-6)
    assert common_rate([[span]]).value == pytest.approx(himeno["mflops"], rel=1e-3)
    pi = assert_contract(run_kernel("pi", "-k", 12))
    assert makespan([Pi().timing(json.dumps(pi)).spans["seconds"]]).value == \
        pytest.approx(pi["seconds"], abs=2e-6)
    cyc = assert_contract(run_kernel("cyclepi", "-n", 100000))
    assert makespan([CyclePi().timing(json.dumps(cyc)).spans["seconds"]]).value == \
        pytest.approx(cyc["seconds"], abs=2e-6)


@pytest.mark.parametrize("kernel,args", [
    ("stream", ["-n", 20000, "-p", 2, "-P", 2]), ("himeno", ["-s", "XS", "-n", 4]),
    ("pi", ["-k", 10]), ("cyclepi", ["-n", 10000])])
def test_start_at_waits_for_the_moment_and_says_how_late_it_was(run_kernel, kernel, args):
    import time
    at = time.monotonic() + 0.8
    out = assert_contract(run_kernel(kernel, *args, "--start-at", f"{at:.6f}"))
    assert out["start_at"] == pytest.approx(at, abs=1e-6) and 0 <= out["late_s"] < 0.1
    first = min(a for a, _ in out["spans"]["copy"]) if kernel == "stream" else out["start_s"]
    assert at <= first < at + 0.5
    past = assert_contract(run_kernel(kernel, *args, "--start-at", "1"))
    assert past["late_s"] > 0                      # ready after the moment: started at once
    plain = assert_contract(run_kernel(kernel, *args))
    assert plain["start_at"] is None and plain["late_s"] is None


@pytest.mark.parametrize("kernel", ["stream", "himeno", "pi", "cyclepi"])
@pytest.mark.parametrize("value", ["-1", "abc", "1e13", "nan"])
def test_start_at_takes_only_a_time_within_the_hour(run_kernel, kernel, value):
    assert_usage_error(run_kernel(kernel, "--start-at", value))
    import time
    assert_usage_error(run_kernel(kernel, "--start-at", f"{time.monotonic() + 7200:.3f}"))


def test_stream_slots_start_each_kernel_of_each_pass_at_its_own_moment(run_kernel):
    import time
    at, slot = time.monotonic() + 0.5, 0.02
    out = assert_contract(run_kernel("stream", "-n", 20000, "-p", 3, "-P", 2,
                                     "--start-at", f"{at:.6f}", "--slot", slot))
    assert out["slot_s"] == slot and out["slot_late_s"] >= 0
    # never early; late only by as much as the kernel says (a busy host delays a wake, and
    # "spans" holds the earliest start over the processes, "slot_late_s" the latest)
    for k, name in enumerate(("copy", "scale", "add", "triad")):
        for p, (start, _) in enumerate(out["spans"][name]):
            due = at + (4 * p + k) * slot
            assert due - 1e-6 <= start <= due + out["slot_late_s"] + 1e-6, (name, p)
    assert_usage_error(run_kernel("stream", "--slot", "0.1"))          # slots need a start
    assert_usage_error(run_kernel("stream", "--start-at", f"{at + 10:.3f}", "--slot", "0"))
