"""hpcc (issue 39): the parser on hpccoutf.txt captured here from Debian 12's hpcc 1.5.0
(tests/fixtures/workloads/hpcc/*.source), the plan and the input file written, the
parameters, and a trial run against a fake environment."""
from __future__ import annotations

import subprocess

import pytest

from virtbench.core.capabilities import can, cannot
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.agent.transport import ExecResult
from virtbench.machinery.host import tools
from virtbench.measure.benchmarks import REGISTRY, ParseError
from virtbench.measure.benchmarks.workloads import hpcc as h
from virtbench.measure.benchmarks.workloads.hpcc_output import hpl_input_error, parse_hpcc

BENCH = REGISTRY["hpcc"]
METRICS = {"hpl_gflops", "dgemm_gflops", "randomaccess_gups", "ptrans_gbs", "fft_gflops",
           "ring_latency_us", "ring_bandwidth_gbs", "stream_triad_gbs"}


@pytest.fixture
def out(fixture_text):
    return lambda name: fixture_text("workloads", "hpcc", f"{name}.txt")


# -- the parser on captured output ---------------------------------------------------------
def test_a_normal_run_gives_every_metric_from_its_summary(out):
    values = parse_hpcc(out("normal"))
    assert set(values) == METRICS == {m.name for m in BENCH.metrics}
    text = out("normal")
    summary = dict(line.split("=", 1) for line in text.split("Begin of Summary section.\n")[1]
                   .split("End of Summary section.")[0].splitlines())
    assert values["hpl_gflops"] == pytest.approx(float(summary["HPL_Tflops"]) * 1000)
    assert values["ring_latency_us"] == float(summary["RandomlyOrderedRingLatency_usec"])
    assert values["stream_triad_gbs"] == float(summary["StarSTREAM_Triad"])
    assert all(v > 0 for v in values.values())


def test_an_interrupted_run_is_one_line_naming_where_it_stopped(out):
    with pytest.raises(ParseError) as exc:
        parse_hpcc(out("interrupted"))
    message = str(exc.value)
    assert "no summary section" in message and "section" in message and "\n" not in message


def test_a_failed_hpl_residual_is_no_number(out):
    with pytest.raises(ParseError, match="residual check FAILED") as exc:
        parse_hpcc(out("residual-failed"))
    assert "\n" not in str(exc.value)
    # what it measured is evidence only, kept with the failed trial
    assert exc.value.partial.get("hpl_gflops", 0) > 0


@pytest.mark.parametrize("name", ["bad-grid", "bad-truncated", "interrupted-late"])
def test_a_refused_input_file_or_a_late_interruption_is_one_line(out, name):
    with pytest.raises(ParseError, match="no summary section") as exc:
        parse_hpcc(out(name))
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("name, says", [
    ("bad-grid", "Need at least 4 processes for these tests"),
    ("bad-truncated", "Value of NDIV less than 2")])
def test_hpls_complaint_about_its_input_is_read_from_stderr(fixture_text, name, says):
    assert hpl_input_error(fixture_text("workloads", "hpcc", f"{name}.stderr")) == says
    assert hpl_input_error("virtbench: hpcc did not finish within 120 s\n") is None


def test_every_truncation_of_a_normal_run_is_refused_or_whole(out):
    text = out("normal")
    whole = parse_hpcc(text)
    for cut in range(0, len(text), max(1, len(text) // 97)):
        try:
            assert parse_hpcc(text[:cut]) == whole      # never a different number
        except ParseError as exc:
            assert "\n" not in str(exc)


def test_two_runs_appended_in_one_file_are_refused(out):
    with pytest.raises(ParseError, match="holds 2 runs"):
        parse_hpcc(out("normal") + out("normal"))


def test_a_test_that_did_not_run_keeps_minus_one_and_is_refused(out):
    text = out("normal").replace("\nMPIFFT_Gflops=", "\nMPIFFT_Gflops=-1\nX=")
    with pytest.raises(ParseError, match="MPIFFT_Gflops") as exc:
        parse_hpcc(text)
    assert "fft_gflops" not in exc.value.partial and "hpl_gflops" in exc.value.partial


def test_success_zero_and_randomaccess_errors_are_refused(out):
    with pytest.raises(ParseError, match="Success=0"):
        parse_hpcc(out("normal").replace("\nSuccess=1\n", "\nSuccess=0\n"))
    text = out("normal").replace("\nMPIRandomAccess_ErrorsFraction=0\n",
                                 "\nMPIRandomAccess_ErrorsFraction=0.02\n")
    with pytest.raises(ParseError, match="MPIRandomAccess"):
        parse_hpcc(text)


def test_empty_output_says_hpcc_did_not_start():
    with pytest.raises(ParseError, match="did not start"):
        parse_hpcc("")


# -- the plan and the input file ------------------------------------------------------------
@pytest.mark.parametrize("ranks, grid", [(1, (1, 1)), (2, (1, 2)), (4, (2, 2)), (6, (2, 3)),
                                          (7, (1, 7)), (12, (3, 4)), (64, (8, 8))])
def test_grid_is_as_square_as_the_ranks_allow(ranks, grid):
    assert h.grid(ranks) == grid


def test_problem_size_takes_the_fraction_in_multiples_of_nb():
    n = h.problem_size(8 * 10_000 ** 2 * 2, 0.5, 80)     # half of it: exactly 10000 x 10000
    assert n == 10_000 and n % 80 == 0
    assert h.problem_size(8 * 10_050 ** 2, 1.0, 80) == 10_000     # rounded down to NB
    assert 8 * h.problem_size(23 * 2**30, 0.5, 80) ** 2 <= 0.5 * 23 * 2**30


def test_hpccinf_puts_the_plan_on_hpls_lines():
    lines = h.hpccinf(h.HpccPlan(6, 12000, 192, 2, 3)).splitlines()
    assert len(lines) == 36                     # HPL's 31, the separator, PTRANS's four
    assert [lines[i].split()[0] for i in (4, 5, 6, 7, 9, 10, 11, 12)] == \
        ["1", "12000", "1", "192", "1", "2", "3", "16.0"]
    assert lines[31].startswith("#####") and [l.split()[0] for l in lines[32:]] == ["0"] * 4
    assert all(len(line) < 81 for line in lines)     # hpcc reads lines into 82 bytes


def test_the_input_file_the_script_writes_is_the_one_planned(tmp_path):
    plan = h.HpccPlan(2, 2000, 80, 1, 2)
    text = h.script(plan, str(tmp_path), 60).replace(
        "timeout -k 10 60 mpirun", "cp hpccinf.txt " + str(tmp_path / "seen.txt") + "; true")
    result = subprocess.run(["sh", "-c", text], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "seen.txt").read_text() == h.hpccinf(plan)
    assert [p.name for p in tmp_path.iterdir()] == ["seen.txt"]    # the work dir is gone


def test_the_script_reports_its_own_time_limit_and_cleans_up(tmp_path):
    mpirun = " ".join(h.MPIRUN + ["-np", "2", "hpcc"])
    text = h.script(h.HpccPlan(2, 2000, 80, 1, 2), str(tmp_path), 1).replace(mpirun, "sleep 30")
    result = subprocess.run(["sh", "-c", text], capture_output=True, text=True, timeout=30)
    assert result.returncode == h.TIMED_OUT_EXIT
    assert "did not finish within 1 s" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_mpirun_runs_as_root_on_shared_memory_only():
    script = h.script(h.HpccPlan(4, 2000, 80, 2, 2), "/scratch", 60)
    assert ("mpirun --allow-run-as-root --oversubscribe --mca btl self,vader "
            "--mca btl_vader_single_copy_mechanism none -np 4 hpcc") in script


def test_probe_text_gives_cpus_and_available_memory():
    text = "8\nMemTotal:  16000000 kB\nMemAvailable:  12000000 kB\n"
    assert h.parse_probe(text) == (8, 12_000_000 * 1024)
    assert h.parse_probe("no\n") == (None, None)


def test_plan_from_the_environment_and_from_the_parameters():
    params = BENCH.params({})
    plan = BENCH.plan(params, 4, 8 * 20_000 ** 2 * 2)
    assert (plan.ranks, plan.n, plan.p, plan.q) == (4, 20_000, 2, 2)
    fixed = BENCH.plan(BENCH.params({"ranks": 3, "n": 1000}), None, None)
    assert (fixed.ranks, fixed.n, fixed.p, fixed.q) == (3, 1000, 1, 3)
    with pytest.raises(ParseError, match="CPUs"):
        BENCH.plan(params, None, 2**30)
    with pytest.raises(ParseError, match="memory"):
        BENCH.plan(params, 2, None)
    with pytest.raises(ParseError, match="too little"):
        BENCH.plan(BENCH.params({"memory": 0.01}), 2, 100_000)


# -- parameters, tools, time limit -----------------------------------------------------------
@pytest.mark.parametrize("given, word", [({"ranks": -1}, "ranks"), ({"ranks": 5000}, "ranks"),
                                         ({"nb": 0}, "nb"), ({"n": 10}, "n "),
                                         ({"memory": 0.95}, "memory"),
                                         ({"memory": 0.0}, "memory")])
def test_parameters_out_of_range_are_one_line(given, word):
    with pytest.raises(VirtbenchError, match=word) as exc:
        BENCH.params(given)
    assert "\n" not in str(exc.value)


def test_quick_is_a_small_fixed_problem_and_full_takes_half_the_memory():
    assert BENCH.params({}, quick=True)["n"] == 2000
    full = BENCH.params({})
    assert full["n"] == 0 and full["memory"] == 0.5 and full["ranks"] == 0
    assert BENCH.memory_need(full) == 0 and BENCH.memory_need({"n": 1000}) == 8_000_000


def test_tools_name_their_debian_packages():
    assert BENCH.packages == ("hpcc", "openmpi-bin")
    assert {tools.PACKAGES[t] for t in BENCH.tools} == set(BENCH.packages)
    assert BENCH.family == "workload"


def test_time_limit_grows_with_the_problem():
    small = h.run_limit(h.HpccPlan(2, 2000, 80, 1, 2))
    big = h.run_limit(h.HpccPlan(2, 40000, 80, 1, 2))
    assert 600 < small < 700 and big > 100 * small
    assert BENCH.timeout({"n": 2000, "ranks": 2, "nb": 80}) == small + 120


# -- a trial against a fake environment ------------------------------------------------------
class FakeEnv:
    """Answers the probe and the trial script; records what ran."""

    def __init__(self, stdout, cpus="2", memory_size=True, exit=0, stderr="mpirun: killed"):
        self.stdout, self.cpus, self.exit, self.ran = stdout, cpus, exit, []
        self.stderr, self.stderr_ok = stderr, ""
        self.memory_size = memory_size

    def exec(self, argv, timeout=None):
        self.ran.append((argv, timeout))
        if argv[2].startswith("nproc"):
            return ExecResult(0, f"{self.cpus}\nMemAvailable: {2**24} kB\n", "", 0.01)
        return ExecResult(self.exit, self.stdout, self.stderr if self.exit else self.stderr_ok,
                          3.0)

    def scratch_dir(self):
        return "/scratch"

    def capabilities(self):
        class Caps:
            memory_size = can("x") if self.memory_size else cannot("unknown")
        return Caps()

    def memory_bytes(self):
        return 2**32


def test_a_trial_runs_the_planned_script_and_checks_its_report(out):
    env = FakeEnv(out("normal"))
    outcome = BENCH.run_trial(env, BENCH.params({}, quick=True))
    assert outcome.ok, outcome.error
    assert set(outcome.values) == METRICS
    script = env.ran[-1][0][2]
    assert "-np 2 hpcc" in script and "2000         Ns" in script
    assert env.ran[-1][1] == h.run_limit(h.HpccPlan(2, 2000, 80, 1, 2)) + 120


def test_full_size_takes_the_smaller_of_what_is_available_and_what_was_given(out):
    env = FakeEnv(out("normal"))
    BENCH.run_trial(env, BENCH.params({}))
    n = h.problem_size(min(2**34, 2**32), 0.5, 80)
    assert f"\n{n}         Ns" in env.ran[-1][0][2]
    env = FakeEnv(out("normal"), memory_size=False)
    BENCH.run_trial(env, BENCH.params({}))
    assert f"\n{h.problem_size(2**34, 0.5, 80)}         Ns" in env.ran[-1][0][2]


def test_a_report_of_another_run_is_a_failed_trial(out):
    env = FakeEnv(out("normal"), cpus="4")          # planned 4 ranks, the report says 2
    outcome = BENCH.run_trial(env, BENCH.params({}, quick=True))
    assert not outcome.ok and "not the 4 ranks and N=2000 planned" in outcome.error
    assert outcome.values == {} and "hpl_gflops" in outcome.partial


def test_an_unknown_cpu_count_is_a_failed_trial_before_anything_runs(out):
    env = FakeEnv(out("normal"), cpus="?")
    outcome = BENCH.run_trial(env, BENCH.params({}, quick=True))
    assert not outcome.ok and "nproc" in outcome.error and len(env.ran) == 1


def test_a_timed_out_run_is_a_failed_trial_with_one_line(out):
    env = FakeEnv(out("interrupted"), exit=h.TIMED_OUT_EXIT)
    outcome = BENCH.run_trial(env, BENCH.params({}, quick=True))
    assert not outcome.ok and outcome.error.startswith("exit status 124")
    assert outcome.values == {}


def test_a_refused_input_file_names_hpls_complaint_in_the_trials_error(fixture_text):
    env = FakeEnv(fixture_text("workloads", "hpcc", "bad-grid.txt"), exit=h.TIMED_OUT_EXIT,
                  stderr=fixture_text("workloads", "hpcc", "bad-grid.stderr"))
    outcome = BENCH.run_trial(env, BENCH.params({}, quick=True))
    assert not outcome.ok and "\n" not in outcome.error
    assert outcome.error.startswith("exit status 124")
    assert outcome.error.endswith("HPL refused hpccinf.txt (Need at least 4 processes for "
                                  "these tests), so hpcc ran its own defaults instead")


def test_a_refused_input_run_to_its_end_is_no_number(fixture_text, out):
    """hpcc 1.5.0 runs HPL's defaults after refusing hpccinf.txt and reports Success=1: the
    report parses, but it is of another run (N=3520, not 2000), and the trial says so."""
    assert parse_hpcc(out("bad-grid-long"))["hpl_gflops"] > 0       # the report alone passes
    stderr = fixture_text("workloads", "hpcc", "bad-grid-long.stderr")
    env = FakeEnv(out("bad-grid-long"), exit=0)
    env.stderr_ok = stderr
    outcome = BENCH.run_trial(env, BENCH.params({}, quick=True))
    assert not outcome.ok and outcome.values == {} and "\n" not in outcome.error
    assert "2 ranks and N=3520, not the 2 ranks and N=2000 planned" in outcome.error
    assert "HPL refused hpccinf.txt (Need at least 4 processes" in outcome.error
    assert outcome.partial["hpl_gflops"] > 0


def test_hpls_complaint_fails_a_trial_even_when_its_n_matches(fixture_text, out):
    env = FakeEnv(out("normal"), exit=0)
    env.stderr_ok = fixture_text("workloads", "hpcc", "bad-grid-long.stderr")
    outcome = BENCH.run_trial(env, BENCH.params({}, quick=True))
    assert not outcome.ok and outcome.values == {}
    assert outcome.error.startswith("HPL refused hpccinf.txt")


def test_one_rank_goes_without_the_ring_and_says_so(out):
    """A one-CPU guest runs one rank (ranks=0): b_eff's ring did not run, and only the ring's
    two metrics are missing; on two ranks a missing ring is still a failed trial."""
    values = parse_hpcc(out("one-rank"))
    assert set(values) == METRICS - {"ring_latency_us", "ring_bandwidth_gbs"}
    env = FakeEnv(out("one-rank"), cpus="1")
    outcome = BENCH.run_trial(env, BENCH.params({"n": 1000}))
    assert outcome.ok, outcome.error
    assert [k for k, _ in outcome.warnings] == ["ring_left_out"]
    two = out("normal").replace("\nRandomlyOrderedRingLatency_usec=",
                                "\nRandomlyOrderedRingLatency_usec=-1\nX=")
    with pytest.raises(ParseError, match="RandomlyOrderedRingLatency_usec"):
        parse_hpcc(two)
    assert BENCH.run_trial(FakeEnv(out("normal")), BENCH.params({}, quick=True)).warnings == []


@pytest.mark.parametrize("name, says", [
    ("gvisor-no-topology", "Open MPI could not start: topology discovery failed"),
    ("gvisor-pmix", "Open MPI could not start: The PMIx server's listener thread failed to start"),
])
def test_an_open_mpi_that_cannot_start_is_one_line(fixture_text, name, says):
    """gVisor's sysfs has no CPU topology: Open MPI stops before hpcc runs; the trial's error
    is its reason in one line, not the first line of its banner."""
    stderr = fixture_text("workloads", "hpcc", f"{name}.stderr")
    assert h.mpi_start_error(stderr) == says
    env = FakeEnv("", exit=1, stderr=stderr)
    outcome = BENCH.run_trial(env, BENCH.params({}, quick=True))
    assert outcome.error == f"exit status 1: {says}"
    assert h.mpi_start_error("mpirun: killed") is None
