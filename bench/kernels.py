#!/usr/bin/env python3
"""Are our kernels what they stand for? Figures, internal consistency, what the compiler did.

For each kernel at the seed studies' size (STREAM 10,000,000 x 20 passes, Himeno M, pi 2^20):
- the figures, median of --rounds runs;
- internal consistency: STREAM's Add and Triad move the same 24 bytes per element (and Copy
  and Scale the same 16), so on a memory-bound host each pair lands within a few per cent;
  the cache rule (arrays >= 4 x the last-level cache); Himeno's residual against the
  reference program's; pi's digits against MPFR;
- the compiler's vectorisation report (gcc -fopt-info-vec with the kernels' own flags) and
  the instructions of each hot loop as built.

With --stream-ref / --himeno-ref (reference programs you built yourself with the same flags,
-O2 -march=x86-64 -mtune=generic; virtbench ships none), each round runs ours and the
reference back to back, alternating which goes first, and prints the median of the pairwise ratios (ours / reference; for
Himeno, reference seconds per iteration / ours, since the programs count flops differently).

    .venv/bin/python bench/kernels.py [--rounds 5] [--quick]
    .venv/bin/python bench/kernels.py --stream-ref ~/ref/stream --himeno-ref "~/ref/himenoBMTxpa M"
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from virtbench import kernels  # noqa: E402
from virtbench.benchmarks.base import kernel_result  # noqa: E402

KERNEL_CFLAGS = ["-std=c11", "-O2", "-march=x86-64", "-mtune=generic"]
STREAM_KEYS = ("copy", "scale", "add", "triad")
# Where the hot loops are in the source, and the symbol they end up in as built (Himeno's
# sweep is inlined, per grid size, into jacobi).
HOT_FUNCTIONS = {"stream": ("k_copy", "k_scale", "k_add", "k_triad"), "himeno": ("sweep",)}
HOT_SYMBOLS = {"stream": HOT_FUNCTIONS["stream"], "himeno": ("jacobi",)}
PACKED = re.compile(r"\b(movapd|movupd|mulpd|addpd|subpd|movaps|movups|mulps|addps|subps)\b")
SCALAR = re.compile(r"\b(mulsd|addsd|subsd|mulss|addss|subss|movss|movsd)\b")


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=3600)


# -- what the compiler did ----------------------------------------------------------------

def function_lines(text: str, name: str) -> tuple[int, int] | None:
    """First and last source line of C function `name` (its definition to the closing brace
    in column 0)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"^(static\s+)?[\w\s\*()]*\b{name}\(", line) and not line.rstrip().endswith(";"):
            for j in range(i, len(lines)):
                if lines[j].startswith("}"):
                    return i + 1, j + 1
    return None


def loop_note(text: list[str], line: int) -> str:
    """Why gcc had nothing to vectorise in a loop of ours: its body is SSE2 intrinsics
    already, or it is the scalar remainder after them."""
    body = " ".join(text[line - 1:line + 1])
    if "_mm_" in body:
        return " (its body is SSE2 intrinsics: packed by hand)"
    if "for (" in " ".join(text[line:line + 3]):
        return " (an outer loop)"
    if "memcpy" in " ".join(text[line:line + 3]):
        return " (a memcpy per row)"
    if "gosa" in " ".join(text[line - 1:line + 20]) and "for (long k" in text[line - 1]:
        return " (the k loop: two points per vector, gosa summed in order as the reference)"
    if re.search(r"=\s*m\s*;", text[line - 1]):
        return " (the scalar remainder: at most one element)"
    return ""


def vectorisation_report(src: Path) -> list[str]:
    """gcc's -fopt-info-vec verdict on the loops of each kernel's hot functions, with the
    kernels' own flags."""
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, functions in HOT_FUNCTIONS.items():
            path = src / f"{name}.c"
            proc = run(["gcc", *KERNEL_CFLAGS, "-pthread", "-fopt-info-vec-optimized",
                        "-fopt-info-vec-missed", "-c", str(path), "-o", f"{tmp}/{name}.o"])
            text = path.read_text().splitlines()
            spans = {fn: function_lines(path.read_text(), fn) for fn in functions}
            for fn, span in spans.items():
                verdicts = []
                for ln in proc.stderr.splitlines():
                    m = re.match(rf".*{name}\.c:(\d+):\d+: \w+: (loop vectorized using .*|couldn't vectorize loop)$", ln)
                    if m and span and span[0] <= int(m.group(1)) <= span[1]:
                        verdict = (f"line {m.group(1)}: {m.group(2)}"
                                   + loop_note(text, int(m.group(1))))
                        if verdict not in verdicts:   # one per line, not per inlined copy
                            verdicts.append(verdict)
                lines.append(f"{name}.c {fn}: " + ("; ".join(verdicts) or "no loop left for "
                                                   "gcc to vectorise (written with SSE2 or a call)"))
    return lines


def hot_loops(binary: Path, functions: tuple[str, ...]) -> list[str]:
    """Packed vs scalar floating-point instructions in each hot function of a built kernel."""
    dis = run(["objdump", "-d", "--no-show-raw-insn", str(binary)]).stdout
    out = []
    for fn in functions:
        m = re.search(rf"^[0-9a-f]+ <{fn}(?:\.[a-z0-9.]+)?>:\n(.*?)(?=^[0-9a-f]+ <|\Z)", dis, re.S | re.M)
        if not m:
            out.append(f"  {fn}: not found (inlined?)")
            continue
        body = m.group(1)
        packed = sorted(set(PACKED.findall(body)))
        scalar = sorted(set(SCALAR.findall(body)))
        if not packed and not scalar and re.search(r"\bjmp\s", body):
            out.append(f"  {fn}: a jump to glibc's memcpy (picked at load time for this CPU)")
            continue
        out.append(f"  {fn}: packed {' '.join(packed) or '-'}; scalar {' '.join(scalar) or '-'}")
    return out


# -- our kernels ------------------------------------------------------------------------

def ours(binary: Path, *args) -> dict:
    proc = run([str(binary), *map(str, args)])
    if proc.returncode != 0:
        raise SystemExit(f"{binary.name} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return kernel_result(proc.stdout, binary.name)


def reference_stream(cmd: str) -> dict:
    out = run(shlex.split(os.path.expanduser(cmd))).stdout
    rates = dict(re.findall(r"^(Copy|Scale|Add|Triad):\s+([0-9.]+)", out, re.M))
    if len(rates) != 4:
        raise SystemExit(f"{cmd}: no STREAM rate table in its output")
    return {k.lower(): float(v) for k, v in rates.items()}


def reference_himeno(cmd: str) -> float:
    """Seconds per Jacobi iteration of the reference's measured run."""
    out = run(shlex.split(os.path.expanduser(cmd))).stdout
    loops = re.search(r"Loop executed for\s+(\d+)\s+times", out)
    cpu = re.search(r"cpu\s*:\s*([0-9.]+)", out)
    if not loops or not cpu:
        raise SystemExit(f"{cmd}: no 'Loop executed for N times' / 'cpu : S' in its output")
    return float(cpu.group(1)) / int(loops.group(1))


def median(xs):
    return statistics.median(xs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--stream-ref", metavar="CMD", help="a reference STREAM built with 20 passes")
    ap.add_argument("--himeno-ref", metavar="CMD", help="a reference Himeno and its size argument")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = ap.parse_args()

    bindir = kernels.build()
    src = kernels.source_dir()
    n, passes = (2_000_000, 5) if args.quick else (10_000_000, 20)
    size, target = ("S", 1.0) if args.quick else ("M", 20.0)
    k = 16 if args.quick else 20

    print("== compiler (gcc " + run(["gcc", "-dumpfullversion"]).stdout.strip()
          + ", " + " ".join(KERNEL_CFLAGS) + ")")
    for line in vectorisation_report(src):
        print(line)
    for name, fns in HOT_SYMBOLS.items():
        print(f"{name} hot loops as built:")
        for line in hot_loops(bindir / name, fns):
            print(line)

    stream_runs, himeno_runs, pi_runs = [], [], []
    ref_stream, ref_himeno = [], []
    for r in range(args.rounds):
        # Ours and the reference back to back, the order alternating between rounds, so
        # neither always runs first (after the other kernels, or on a warmer machine).
        ref_first = r % 2 == 1
        if args.stream_ref and ref_first:
            ref_stream.append(reference_stream(args.stream_ref))
        stream_runs.append(ours(bindir / "stream", "-n", n, "-p", passes))
        if args.stream_ref and not ref_first:
            ref_stream.append(reference_stream(args.stream_ref))
        if args.himeno_ref and ref_first:
            ref_himeno.append(reference_himeno(args.himeno_ref))
        himeno_runs.append(ours(bindir / "himeno", "-s", size, "-t", target))
        if args.himeno_ref and not ref_first:
            ref_himeno.append(reference_himeno(args.himeno_ref))
        pi_runs.append(ours(bindir / "pi", "-k", k))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    figures: dict = {}
    print(f"\n== stream ({n:,} elements x {passes} passes, median of {args.rounds})")
    rates = {key: median([s["aggregate"][f"{key}_mb_s"] for s in stream_runs])
             for key in STREAM_KEYS}
    figures["stream_mb_s"] = rates
    print("  " + "  ".join(f"{key} {rates[key]:,.0f} MB/s" for key in STREAM_KEYS))
    add_triad = rates["triad"] / rates["add"]
    copy_scale = rates["scale"] / rates["copy"]
    figures["triad_over_add"], figures["scale_over_copy"] = add_triad, copy_scale
    print(f"  Triad / Add = {add_triad:.3f} (same 24 bytes per element: expect ~1.00)")
    print(f"  Scale / Copy = {copy_scale:.3f} (same 16 bytes per element; Copy is memcpy)")
    s0 = stream_runs[0]
    rule = s0.get("cache_rule")
    print(f"  cache rule: arrays {s0['array_bytes'] / 1e6:.0f} MB vs last-level cache "
          f"{(s0.get('llc_bytes') or 0) / 2**20:.0f} MiB: "
          + {True: "holds (>= 4x)", False: "BROKEN (< 4x: rates include cache hits)",
             None: "unknown cache size"}[rule])
    if ref_stream:
        ratios = {key: median([o["aggregate"][f"{key}_mb_s"] / ref[key]
                               for o, ref in zip(stream_runs, ref_stream)]) for key in STREAM_KEYS}
        figures["stream_vs_reference"] = ratios
        print("  vs reference (median of pairwise ratios, ours/ref): "
              + "  ".join(f"{key} {ratios[key]:.3f}" for key in STREAM_KEYS))

    print(f"\n== himeno (size {size}, ~{target:g} s per run, median of {args.rounds})")
    mflops = median([h["mflops"] for h in himeno_runs])
    verified = all(h["verified"] is True for h in himeno_runs)
    figures["himeno_mflops"] = mflops
    print(f"  {mflops:,.1f} MFLOPS; residual {'matches the reference' if verified else 'DIFFERS'} "
          f"in {sum(h['verified'] is True for h in himeno_runs)}/{len(himeno_runs)} runs "
          f"(gosa {himeno_runs[0]['gosa']:.9e} after {himeno_runs[0]['iterations']} iterations)")
    if ref_himeno:
        ratios = [ref / (h["seconds"] / h["iterations"]) for h, ref in zip(himeno_runs, ref_himeno)]
        figures["himeno_vs_reference"] = median(ratios)
        print(f"  vs reference (median of pairwise ratios of seconds per iteration, ref/ours): "
              f"{median(ratios):.3f}")

    print(f"\n== pi (2^{k} digits, median of {args.rounds})")
    secs = median([p["seconds"] for p in pi_runs])
    figures["pi_seconds"] = secs
    print(f"  {secs:.3f} s; digits verified against MPFR in "
          f"{sum(p['verified'] is True for p in pi_runs)}/{len(pi_runs)} runs")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    ok = verified and all(p["verified"] is True for p in pi_runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
