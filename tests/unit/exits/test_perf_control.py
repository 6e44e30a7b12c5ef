"""perf_control against the real perf of this host: a recorder started disabled is enabled over
its FIFOs and acknowledges; one that dies or never answers is an error, not a hang."""
import shutil
import signal
import subprocess
import sys
import time

import pytest

from virtbench.machinery.exits.perf_control import PerfControlError, control_args, enable_recorder, make_fifos

PERF = shutil.which("perf")
needs_perf = pytest.mark.skipif(PERF is None or subprocess.run(
    [PERF or "perf", "--version"], capture_output=True).returncode != 0,
    reason="perf is not installed (apt-get install linux-perf)")

SPIN = [sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 20: pass"]


def perf_record(tmp_path, extra=()):
    ctl, ack = tmp_path / "r.ctl", tmp_path / "r.ack"
    make_fifos(ctl, ack)
    argv = [PERF, "record", "-e", "cpu-clock", "-o", str(tmp_path / "p.data"),
            *control_args(ctl, ack), *extra, "--", *SPIN]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    return proc, ctl, ack


def end(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


@needs_perf
def test_a_disabled_recorder_is_enabled_and_records_from_then_on(tmp_path):
    proc, ctl, ack = perf_record(tmp_path)
    try:
        took = enable_recorder(ctl, ack, timeout=30, alive=lambda: proc.poll() is None)
        assert 0 <= took < 30
        time.sleep(0.5)                                  # the spinning target is sampled
    finally:
        _, err = end(proc)
    # perf says so itself on stderr, in this order: disabled at start, enabled by our command
    assert err.index("Events disabled") < err.index("Events enabled"), err
    report = subprocess.run([PERF, "report", "-i", str(tmp_path / "p.data"), "--stdio",
                             "--header-only"], capture_output=True, text=True, timeout=60)
    assert "cpu-clock" in report.stdout


@needs_perf
def test_a_recorder_that_dies_at_start_is_an_error(tmp_path):
    proc, ctl, ack = perf_record(tmp_path, extra=["--no-such-switch"])
    try:
        with pytest.raises(PerfControlError) as err:
            enable_recorder(ctl, ack, timeout=30, alive=lambda: proc.poll() is None)
        assert err.value.exited
    finally:
        end(proc)


def test_nobody_listening_times_out(tmp_path):
    ctl, ack = tmp_path / "c", tmp_path / "a"
    make_fifos(ctl, ack)
    t0 = time.monotonic()
    with pytest.raises(PerfControlError) as err:
        enable_recorder(ctl, ack, timeout=0.3, alive=lambda: True)
    assert not err.value.exited and "in time" in str(err.value)
    assert time.monotonic() - t0 < 5


def test_fifos_are_made_fresh_and_private(tmp_path):
    ctl, ack = tmp_path / "c", tmp_path / "a"
    ctl.write_text("stale")
    make_fifos(ctl, ack)
    assert ctl.is_fifo() and ack.is_fifo()
    assert ctl.stat().st_mode & 0o777 == 0o600
