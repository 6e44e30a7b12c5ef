"""The host's load over a trial: /proc parsers on real captured files, and the sampler on
this machine's own /proc."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from virtbench.machinery.machine import load as hostload
from virtbench.machinery.machine.load import (
    LoadSampler,
    StatReading,
    parse_stat,
    parse_task_stat,
    steal_pct,
    task_cpu_s,
    threads_cpu_s,
)

PROC = Path(__file__).resolve().parents[2] / "fixtures" / "proc"


def test_proc_stat_of_a_two_cpu_vm():
    r = parse_stat((PROC / "stat_2cpu.txt").read_text())
    assert r.cpu == {"user": 1222908, "nice": 4132, "system": 275409, "idle": 538379,
                     "iowait": 20338, "irq": 0, "softirq": 29610, "steal": 11549}
    assert sorted(r.cpus) == [0, 1]
    assert r.cpus[0]["steal"] == 5761
    assert r.procs_running >= 1 and r.procs_blocked is not None


def test_steal_is_its_share_of_all_ticks_between_two_readings():
    before = parse_stat((PROC / "stat_2cpu.txt").read_text())
    after = StatReading({k: v + (30 if k == "steal" else 0) + (70 if k == "user" else 0)
                         for k, v in before.cpu.items()}, {}, 2, 0)
    assert steal_pct(before, after) == pytest.approx(30.0)
    assert steal_pct(before, before) is None            # no tick: no share


def test_a_stat_without_a_cpu_line_is_refused():
    with pytest.raises(ValueError, match="no aggregate cpu line"):
        parse_stat("intr 1 2 3\nprocs_running 2\n")


@pytest.mark.parametrize("name, comm", [("task_vcpu_tcg.txt", "CPU 0/TCG"),
                                        ("task_parens.txt", "a) (b"),
                                        ("pid_self.txt", None)])
def test_task_stat_reads_utime_and_stime_whatever_the_thread_is_called(name, comm):
    text = (PROC / name).read_text()
    if comm is not None:
        assert f"({comm})" in text
    utime, stime = parse_task_stat(text)
    # the fields after the name: state, ppid, pgrp, session, tty, tpgid, flags, minflt,
    # cminflt, majflt, cmajflt, utime, stime
    after = text[text.rindex(")") + 2:].split()
    assert (utime, stime) == (int(after[11]), int(after[12]))
    if comm is not None:                  # those threads had used about 0.3 s of CPU
        assert 20 <= utime + stime <= 40


def test_a_thread_s_own_cpu_time_not_its_process_s():
    """/proc/TID/stat of a thread that does not lead its process is the whole process's."""
    seen = {}
    stop = threading.Event()

    def spin():
        t = time.thread_time()
        while time.thread_time() - t < 0.3:
            pass
        seen["tid"] = threading.get_native_id()
        stop.wait(10)

    th = threading.Thread(target=spin)
    th.start()
    t = time.thread_time()
    while time.thread_time() - t < 0.6:     # the main thread burns more than the other
        pass
    while "tid" not in seen:
        time.sleep(0.01)
    mine = threads_cpu_s([seen["tid"]])
    whole = task_cpu_s(seen["tid"])
    stop.set()
    th.join()
    assert 0.2 <= mine <= 0.5
    assert whole > mine + 0.4


def test_a_gone_thread_has_no_cpu_time():
    assert threads_cpu_s([2 ** 22 + 12345]) is None


def test_the_sampler_reads_this_host_over_a_trial():
    with LoadSampler(every_s=0.02) as s:
        t = time.process_time()
        while time.process_time() - t < 0.3:
            pass
    load = s.load
    assert 0.25 <= load.wall_s <= 5
    assert load.samples >= 3 and load.run_queue_max >= 1
    assert load.run_queue_mean >= 1      # this thread was running at every sample
    assert load.steal_pct is None or 0 <= load.steal_pct <= 100
    assert set(load.to_dict()) >= {"wall_s", "samples", "run_queue_mean", "run_queue_max"}


def test_the_sampler_measures_the_threads_it_is_given():
    ready, stop = threading.Event(), threading.Event()
    tid = {}

    def spin():
        tid["t"] = threading.get_native_id()
        ready.set()
        while not stop.is_set():
            pass

    th = threading.Thread(target=spin)
    th.start()
    ready.wait()
    try:
        with LoadSampler([tid["t"]]) as s:
            time.sleep(0.5)
    finally:
        stop.set()
        th.join()
    assert 0.05 <= s.load.threads_cpu_s <= 0.7     # it shares the GIL with this thread


def test_a_missing_proc_gives_no_figures(tmp_path):
    with LoadSampler(proc=str(tmp_path), every_s=0.01) as s:
        time.sleep(0.05)
    assert s.load.steal_pct is None and s.load.samples == 0
    assert hostload.read_stat(str(tmp_path)) is None
    assert os.path.exists("/proc/stat")
