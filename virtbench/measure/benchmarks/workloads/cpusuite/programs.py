"""The cpu-suite's programs: what each runs (timed), how its result is checked, its sizes and
its reference times.

Every argument is a template: `{work}` stands for the program's input directory in the
environment and `{KNOB}` for a size knob (SIZES). `run` is the timed command; `verify`, run
after it and not timed, must exit 0 (it compares an output with what the generator says it
must be); `judge` reads the timed command's output with a pure parser (cpusuite_parsers.py)
and says what is wrong with it, or None.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...base import ParseError
from .parsers import (parse_gtp, parse_hmmsearch, parse_povray, parse_stockfish_bench,
                               parse_x264)

# Work per program for each size. quick: about 1.5-4 s each natively here; full: 20-35 s
# (xalan 10 s: its memory grows with its input, about 200 MB at full).
SIZES: dict[str, dict[str, int]] = {
    "quick": {"bzip2_mb": 8, "gcc_functions": 150, "gnugo_moves": 16, "hmmer_sequences": 2500,
              "hmmer_planted": 10, "povray_width": 320, "povray_height": 240,
              "xalan_orders": 50000, "x264_frames": 60, "stockfish_depth": 11},
    "full": {"bzip2_mb": 96, "gcc_functions": 1500, "gnugo_moves": 50,
             "hmmer_sequences": 30000, "hmmer_planted": 10, "povray_width": 1280,
             "povray_height": 960, "xalan_orders": 120000, "x264_frames": 600,
             "stockfish_depth": 17},
}

Judge = Callable[[str, str, dict], "str | None"]


def _no_judge(stdout: str, stderr: str, knobs: dict) -> str | None:
    return None


def judge_gnugo(stdout: str, stderr: str, knobs: dict) -> str | None:
    """Every GTP command answered (3 to set up, the moves, estimate_score, quit), none with
    an error, and each genmove a move."""
    found = parse_gtp(stdout)
    want = knobs["gnugo_moves"] // 2 * 2
    if found["errors"]:
        return f"gnugo answered {found['errors']:.0f} GTP command(s) with an error"
    if found["responses"] != want + 5 or found["moves"] != want:
        return (f"gnugo answered {found['responses']:.0f} of {want + 5} GTP commands "
                f"({found['moves']:.0f} of {want} moves): the game did not finish")
    return None


def judge_hmmer(stdout: str, stderr: str, knobs: dict) -> str | None:
    """Every target searched, and every planted relative found above the inclusion line."""
    found = parse_hmmsearch(stdout)
    if found["targets"] != knobs["hmmer_sequences"]:
        return (f"hmmsearch searched {found['targets']:.0f} of {knobs['hmmer_sequences']} "
                "sequences")
    if found["included_planted"] != knobs["hmmer_planted"]:
        return (f"hmmsearch found {found['included_planted']:.0f} of the "
                f"{knobs['hmmer_planted']} planted relatives")
    return None


def judge_povray(stdout: str, stderr: str, knobs: dict) -> str | None:
    found = parse_povray(stderr)
    want = (knobs["povray_width"], knobs["povray_height"])
    if (found["width"], found["height"]) != want or found["pixels"] != want[0] * want[1]:
        return (f"povray rendered {found['pixels']:.0f} pixels at {found['width']:.0f}x"
                f"{found['height']:.0f}, not {want[0]}x{want[1]}")
    return None


def judge_x264(stdout: str, stderr: str, knobs: dict) -> str | None:
    found = parse_x264(stderr)
    if found["frames"] != knobs["x264_frames"]:
        return f"x264 encoded {found['frames']:.0f} of {knobs['x264_frames']} frames"
    return None


def judge_stockfish(stdout: str, stderr: str, knobs: dict) -> str | None:
    parse_stockfish_bench(stderr)       # a finished bench prints its node count
    return None


def judged(judge: Judge, stdout: str, stderr: str, knobs: dict) -> str | None:
    """What is wrong with a finished run's output, in one line, or None."""
    try:
        return judge(stdout, stderr, knobs)
    except ParseError as exc:
        return f"unparsable output: {exc}"


@dataclass(frozen=True)
class Program:
    name: str                   # the parameter's word and the metric's prefix
    spec: str                   # the SPEC CPU2006 program it stands in for
    tool: str                   # what must be on PATH, or its path (tools.py PACKAGES: package)
    package: str                # the Debian package
    knobs: tuple[str, ...]      # the SIZES knobs its input and run depend on
    run: tuple[str, ...]        # the timed command
    judge: Judge = _no_judge
    verify: tuple[str, ...] = ()
    prepare: tuple[str, ...] = ()   # after the generator, once per environment, not timed


SH = "sh"       # programs that need a redirection run under sh with their paths as $1, $2...
GAMES = "/usr/games"    # Debian installs gnugo and stockfish there, off root's PATH

PROGRAMS: tuple[Program, ...] = (
    Program("gnugo", "445.gobmk", f"{GAMES}/gnugo", "gnugo", ("gnugo_moves",),
            (f"{GAMES}/gnugo", "--mode", "gtp", "--gtp-input", "{work}/input.gtp", "--seed",
             "1", "--level", "10"), judge_gnugo),
    Program("hmmer", "456.hmmer", "hmmsearch", "hmmer", ("hmmer_sequences", "hmmer_planted"),
            ("hmmsearch", "--cpu", "0", "--max", "--noali", "{work}/family.hmm",
             "{work}/db.fa"), judge_hmmer,
            prepare=("hmmbuild", "--informat", "afa", "{work}/family.hmm",
                     "{work}/family.afa")),
    Program("povray", "453.povray", "povray", "povray", ("povray_width", "povray_height"),
            ("povray", "+I{work}/input.pov", "+O{work}/output.png", "+W{povray_width}",
             "+H{povray_height}", "+WT1", "-D", "+A0.3", "-J", "+FN"), judge_povray),
    Program("bzip2", "401.bzip2", "bzip2", "bzip2", ("bzip2_mb",),
            (SH, "-c", 'bzip2 -9 -c "$1" > "$1.bz2" && bzip2 -d -c "$1.bz2" > "$1.back"', SH,
             "{work}/input.txt"),
            verify=("cmp", "{work}/input.txt", "{work}/input.txt.back")),
    Program("gcc", "403.gcc", "gcc", "gcc", ("gcc_functions",),
            ("gcc", "-O2", "-c", "{work}/input.c", "-o", "{work}/output.o"),
            verify=(SH, "-c", 'gcc "$1/output.o" -o "$1/output" && "$1/output" | cmp - '
                    '"$1/expected"', SH, "{work}")),
    Program("xalan", "483.xalancbmk", "Xalan", "xalan", ("xalan_orders",),
            ("Xalan", "-o", "{work}/output.txt", "{work}/input.xml", "{work}/style.xsl"),
            verify=("cmp", "{work}/output.txt", "{work}/expected")),
    Program("x264", "464.h264ref", "x264", "x264", ("x264_frames",),
            ("x264", "--preset", "veryslow", "--threads", "1", "--no-progress", "--input-res",
             "640x360", "--fps", "25", "--frames", "{x264_frames}", "-o",
             "{work}/output.264", "{work}/input.yuv"), judge_x264),
    Program("stockfish", "458.sjeng", f"{GAMES}/stockfish", "stockfish", ("stockfish_depth",),
            (f"{GAMES}/stockfish", "bench", "16", "1", "{stockfish_depth}", "default", "depth"),
            judge_stockfish),
)
BY_NAME = {p.name: p for p in PROGRAMS}

# Seconds each program took natively on the reference machine (this host, 2026-11-29: the
# least user + system CPU time of its runs, single-threaded, i.e. its wall time on an idle
# CPU; the host was shared, so wall times were 3-6x longer); the score is the geometric mean of reference / measured over the programs run.
REFERENCE_S: dict[str, dict[str, float]] = {
    "quick": {"gnugo": 3.29, "hmmer": 2.07, "povray": 2.96, "bzip2": 1.46, "gcc": 3.81,
              "xalan": 3.24, "x264": 1.71, "stockfish": 1.99},
    "full": {"gnugo": 22.02, "hmmer": 24.75, "povray": 24.26, "bzip2": 21.48, "gcc": 34.93,
             "xalan": 9.68, "x264": 20.40, "stockfish": 21.84},
}
# The peak resident memory of the largest program of a size (measured here: x264 at quick,
# gcc -O2 at full); the programs run one after another
PEAK_BYTES = {"quick": 120 << 20, "full": 350 << 20}


def fill(template: tuple[str, ...], work: str, knobs: dict) -> list[str]:
    """A command template with {work} and the knobs filled in (pure)."""
    return [arg.format(work=work, **knobs) for arg in template]
