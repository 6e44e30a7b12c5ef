"""cpu-suite: its parsers on output captured here, its parameters, its inputs, its trial."""
import json
import math
import shutil
import subprocess
import sys

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.agent.transport import ExecResult
from virtbench.machinery.host.tools import PACKAGES
from virtbench.measure.benchmarks import REGISTRY, ParseError
from virtbench.measure.benchmarks.workloads.cpusuite import programs as programs
from virtbench.measure.benchmarks.workloads.cpusuite.suite import CpuSuite, chosen, score
from virtbench.measure.benchmarks.workloads.cpusuite.inputs import GENERATOR
from virtbench.measure.benchmarks.workloads.cpusuite.parsers import (
    parse_gtp, parse_hmmsearch, parse_povray, parse_stockfish_bench, parse_x264)

QUICK = programs.SIZES["quick"]


# -- parsers on real output (tests/fixtures/workloads/<tool>/*.source say how) -----------
def test_stockfish_bench_normal(fixture_text):
    assert parse_stockfish_bench(fixture_text("workloads", "stockfish", "normal.txt")) == {
        "nodes": 18388.0, "nodes_per_s": 108164.0}


def test_hmmsearch_normal_finds_the_three_planted(fixture_text):
    # above the inclusion line: planted173, planted106, planted204 and one random (rand97)
    found = parse_hmmsearch(fixture_text("workloads", "hmmsearch", "normal.txt"))
    assert found == {"targets": 300.0, "included": 4.0, "included_planted": 3.0}


def test_povray_normal(fixture_text):
    found = parse_povray(fixture_text("workloads", "povray", "normal.txt"))
    assert (found["width"], found["height"], found["pixels"]) == (160.0, 120.0, 19200.0)
    assert found["rays"] > 19200


def test_x264_normal(fixture_text):
    assert parse_x264(fixture_text("workloads", "x264", "normal.txt"))["frames"] == 10.0


def test_gtp_normal(fixture_text):
    assert parse_gtp(fixture_text("workloads", "gnugo", "normal.txt")) == {
        "responses": 9.0, "errors": 0.0, "moves": 4.0}


@pytest.mark.parametrize("tool,parser,match", [
    ("stockfish", parse_stockfish_bench, "did not finish"),
    ("hmmsearch", parse_hmmsearch, "did not finish"),
    ("povray", parse_povray, "did not finish"),
    ("x264", parse_x264, "did not finish"),
])
@pytest.mark.parametrize("case", ["interrupted", "failed"])
def test_interrupted_or_failed_output_is_one_line_parse_error(fixture_text, tool, parser,
                                                              match, case):
    with pytest.raises(ParseError, match=match) as info:
        parser(fixture_text("workloads", tool, f"{case}.txt"))
    assert "\n" not in str(info.value)


def test_povray_partial_render_is_refused():
    text = "Rendered 100 of 200 pixels (50%)\nImage Resolution 20 x 10\nRays: 5\nPOV-Ray finished\n"
    with pytest.raises(ParseError, match="rendered 100 of 200"):
        parse_povray(text)


def test_gnugo_interrupted_session_fails_its_judge(fixture_text):
    knobs = dict(QUICK, gnugo_moves=16)
    text = fixture_text("workloads", "gnugo", "interrupted.txt")
    assert "did not finish" in programs.judge_gnugo(text, "", knobs)


def test_gnugo_error_response_fails_its_judge(fixture_text):
    text = fixture_text("workloads", "gnugo", "failed.txt")
    assert parse_gtp(text)["errors"] == 1.0
    assert "with an error" in programs.judge_gnugo(text, "", dict(QUICK, gnugo_moves=2))


def test_gnugo_normal_passes_its_judge(fixture_text):
    text = fixture_text("workloads", "gnugo", "normal.txt")
    assert programs.judge_gnugo(text, "", dict(QUICK, gnugo_moves=4)) is None
    assert programs.judge_gnugo(text, "", dict(QUICK, gnugo_moves=6)) is not None


def test_gtp_without_responses_is_a_parse_error():
    with pytest.raises(ParseError, match="no GTP responses"):
        parse_gtp("")


def test_hmmer_judge_counts_targets_and_planted(fixture_text):
    text = fixture_text("workloads", "hmmsearch", "normal.txt")
    knobs = dict(QUICK, hmmer_sequences=300, hmmer_planted=3)
    assert programs.judge_hmmer(text, "", knobs) is None
    assert "300 of 301" in programs.judge_hmmer(text, "", dict(knobs, hmmer_sequences=301))
    assert "3 of the 4" in programs.judge_hmmer(text, "", dict(knobs, hmmer_planted=4))


def test_x264_and_povray_judges_compare_with_the_size(fixture_text):
    x264 = fixture_text("workloads", "x264", "normal.txt")
    assert programs.judge_x264("", x264, dict(QUICK, x264_frames=10)) is None
    assert "10 of 60" in programs.judge_x264("", x264, dict(QUICK, x264_frames=60))
    pov = fixture_text("workloads", "povray", "normal.txt")
    assert programs.judge_povray("", pov, dict(QUICK, povray_width=160,
                                                povray_height=120)) is None
    assert "not 320x240" in programs.judge_povray("", pov, QUICK)


def test_judged_turns_a_parse_error_into_one_line(fixture_text):
    text = fixture_text("workloads", "stockfish", "interrupted.txt")
    assert programs.judged(programs.judge_stockfish, "", text, QUICK).startswith(
        "unparsable output: no 'Nodes searched'")


# -- parameters, metrics, score -------------------------------------------------------------
def test_registered_with_a_rate_per_program_and_a_score():
    bench = REGISTRY["cpu-suite"]
    assert isinstance(bench, CpuSuite) and bench.family == "workload"
    names = [m.name for m in bench.metrics]
    assert names == [f"{p.name}_per_s" for p in programs.PROGRAMS] + ["score"]
    assert all(m.higher_is_better for m in bench.metrics)


def test_every_tool_has_its_debian_package():
    bench = REGISTRY["cpu-suite"]
    assert all(tool in PACKAGES for tool in bench.tools)
    assert set(bench.packages) >= {"gnugo", "hmmer", "povray", "bzip2", "gcc", "xalan",
                                   "x264", "stockfish"}


def test_programs_parameter():
    assert chosen("all") == [p.name for p in programs.PROGRAMS]
    assert chosen("stockfish, bzip2") == ["bzip2", "stockfish"]      # suite order
    for bad in ("bzip2,sjeng", "", " , "):
        with pytest.raises(VirtbenchError, match="valid: all or a comma list of gnugo,"):
            chosen(bad)


def test_params_quick_size_and_bad_values():
    bench = REGISTRY["cpu-suite"]
    assert bench.params({}, quick=True)["size"] == "quick"
    assert bench.params({})["size"] == "full"
    with pytest.raises(VirtbenchError, match="size='huge'; use quick or full"):
        bench.params({"size": "huge"})
    with pytest.raises(VirtbenchError, match="unknown one \\(gobmk\\)"):
        bench.params({"programs": "gobmk"})


def test_score_is_the_geometric_mean_of_reference_over_measured():
    ref = programs.REFERENCE_S["quick"]
    assert score({"gcc": ref["gcc"], "x264": ref["x264"]}, "quick") == pytest.approx(1.0)
    twice = score({"gcc": ref["gcc"] * 2, "x264": ref["x264"] / 2}, "quick")
    assert twice == pytest.approx(1.0)
    slow = score({"gcc": ref["gcc"] * 4, "x264": ref["x264"]}, "quick")
    assert slow == pytest.approx(math.sqrt(0.25))


def test_reference_times_cover_every_program_and_size():
    for size in programs.SIZES:
        assert set(programs.REFERENCE_S[size]) == set(programs.BY_NAME)


def test_fill_puts_work_and_knobs_in():
    argv = programs.fill(programs.BY_NAME["x264"].run, "/w", QUICK)
    assert argv[-1] == "/w/input.yuv" and str(QUICK["x264_frames"]) in argv
    assert "--threads" in argv and argv[argv.index("--threads") + 1] == "1"


# -- the inputs -----------------------------------------------------------------------------
def generate(program, knobs, where):
    where.mkdir()
    subprocess.run([sys.executable, "-c", GENERATOR, program, "1", json.dumps(knobs),
                    str(where)], check=True, timeout=60)
    return {p.name: p.read_bytes() for p in where.iterdir()}


@pytest.mark.parametrize("program,knobs", [
    ("gcc", {"gcc_functions": 3}), ("xalan", {"xalan_orders": 40}),
    ("hmmer", {"hmmer_sequences": 20, "hmmer_planted": 2}), ("gnugo", {"gnugo_moves": 4}),
    ("povray", {}), ("x264", {"x264_frames": 2}), ("bzip2", {"bzip2_mb": 0})])
def test_generator_is_deterministic(tmp_path, program, knobs):
    assert generate(program, knobs, tmp_path / "a") == generate(program, knobs, tmp_path / "b")


def test_x264_frames_have_the_size_of_640x360_i420(tmp_path):
    made = generate("x264", {"x264_frames": 3}, tmp_path / "x")
    assert len(made["input.yuv"]) == 3 * 640 * 360 * 3 // 2


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_gcc_program_prints_what_the_generator_expects(tmp_path):
    made = generate("gcc", {"gcc_functions": 12}, tmp_path / "g")
    subprocess.run(["gcc", "-O2", str(tmp_path / "g/input.c"), "-o", str(tmp_path / "p")],
                   check=True, timeout=120)
    printed = subprocess.run([str(tmp_path / "p")], capture_output=True, check=True).stdout
    assert printed == made["expected"]


@pytest.mark.skipif(shutil.which("Xalan") is None, reason="xalan is not installed")
def test_xalan_transformation_is_what_the_generator_expects(tmp_path):
    made = generate("xalan", {"xalan_orders": 300}, tmp_path / "x")
    out = tmp_path / "out.txt"
    subprocess.run(["Xalan", "-o", str(out), str(tmp_path / "x/input.xml"),
                    str(tmp_path / "x/style.xsl")], check=True, timeout=120)
    assert out.read_bytes() == made["expected"] and made["expected"].count(b"\n") > 15


# -- a trial, in an environment that answers as told ----------------------------------------
class Answering:
    """An environment whose exec() answers by the first rule whose word is in the command."""

    def __init__(self, rules=(), ready=False):
        self.rules, self.ready, self.calls = list(rules), ready, []

    def scratch_dir(self):
        return "/scratch"

    def exec(self, argv, timeout, env=None, alive=None):
        self.calls.append(argv)
        line = " ".join(argv)
        if argv[:2] == ["test", "-f"]:
            return ExecResult(0 if self.ready else 1, "", "", 0.01)
        for word, result in self.rules:
            if word in line:
                return result
        return ExecResult(0, "", "", 2.0, user_s=1.5, sys_s=0.1)


def ok_bench(frames):
    return ExecResult(0, "", f"encoded {frames} frames, 9.0 fps, 100.0 kb/s\n", 2.0, 1.9, 0.1)


def trial(env, programs_="x264,bzip2"):
    bench = REGISTRY["cpu-suite"]
    return bench.run_trial(env, bench.params({"programs": programs_}, quick=True))


def test_trial_times_each_program_and_scores():
    env = Answering([("x264 --preset", ok_bench(QUICK["x264_frames"]))])
    out = trial(env)
    assert out.ok, out.error
    assert out.values["x264_per_s"] == pytest.approx(0.5)
    assert out.values["bzip2_per_s"] == pytest.approx(0.5)
    ref = programs.REFERENCE_S["quick"]
    assert out.values["score"] == pytest.approx(math.sqrt(ref["x264"] / 2 * ref["bzip2"] / 2))
    assert out.wall_s == pytest.approx(4.0) and out.cpu_s == pytest.approx(3.6)
    generated = [c for c in env.calls if c[:2] == ["python3", "-c"]]
    assert [c[3] for c in generated] == ["bzip2", "x264"]        # inputs made first
    assert any(c[0] == "cmp" for c in env.calls)                   # bzip2's round trip


def test_ready_inputs_are_not_made_again():
    env = Answering([("x264 --preset", ok_bench(QUICK["x264_frames"]))], ready=True)
    assert trial(env).ok
    assert not [c for c in env.calls if c[0] in ("python3", "rm", "mkdir")]


def test_input_generation_failing_fails_the_trial():
    env = Answering([("python3", ExecResult(1, "", "MemoryError", 0.5))])
    out = trial(env)
    assert out.error == ("cpu-suite: bzip2: preparing bzip2's input: python3: exit status 1: "
                         "MemoryError") and not out.values


def test_program_exit_fails_the_trial_and_keeps_earlier_rates_as_evidence():
    env = Answering([("x264 --preset", ExecResult(255, "", "x264 [error]: no input", 0.1))])
    out = trial(env)
    assert out.error == "cpu-suite: x264: exit status 255: x264 [error]: no input"
    assert out.partial == {"bzip2_per_s": pytest.approx(0.5)} and not out.values


def test_program_timeout_fails_the_trial():
    env = Answering([("bzip2 -9", ExecResult(-9, "", "", 999.0, timed_out=True))])
    assert trial(env).error.startswith("cpu-suite: bzip2: timed out after")


def test_unfinished_output_fails_the_trial():
    env = Answering([("x264 --preset", ok_bench(QUICK["x264_frames"] - 1))])
    assert trial(env).error == (f"cpu-suite: x264: x264 encoded {QUICK['x264_frames'] - 1} of "
                                f"{QUICK['x264_frames']} frames")


def test_wrong_output_fails_the_trial():
    env = Answering([("cmp", ExecResult(1, "", "input.txt input.txt.back differ: byte 7", 0.1))])
    out = trial(env, "bzip2")
    assert out.error == ("cpu-suite: bzip2: its output is not the expected one (input.txt "
                         "input.txt.back differ: byte 7)")


def test_no_wall_time_fails_the_trial():
    env = Answering([("bzip2 -9", ExecResult(0, "", "", 0.0))])
    assert "no wall time measured" in trial(env, "bzip2").error


def test_an_environment_without_scratch_fails_the_trial_in_one_line():
    class NoScratch(Answering):
        def scratch_dir(self):
            raise VirtbenchError("environment x has no scratch directory")
    assert trial(NoScratch(), "bzip2").error == ("cpu-suite: bzip2: environment x has no "
                                                 "scratch directory")


def test_memory_need_is_the_largest_programs_peak():
    bench = REGISTRY["cpu-suite"]
    assert bench.memory_need(bench.params({}, quick=True)) == 120 << 20
    assert bench.memory_need(bench.params({})) == 350 << 20
