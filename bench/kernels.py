#!/usr/bin/env python3
"""Are our kernels what they stand for? Figures, internal consistency, what the compiler did,
and -- given the reference programs -- how they compare, both ways.

For each kernel at the published studies' size (STREAM 10,000,000 x 20 passes, Himeno M, pi 2^20):
- the figures, median of --rounds runs;
- internal consistency: STREAM's Add and Triad move the same 24 bytes per element (Copy and
  Scale the same 16); the cache rule; Himeno's residual against the reference program's; pi's
  digits against MPFR;
- the compiler's vectorisation report (gcc -fopt-info-vec with the kernels' own flags) and the
  instructions of each hot loop as built.

Against the reference programs (built by you with the same flags, -O2 -march=x86-64
-mtune=generic; virtbench ships none), each round runs ours and the reference back to back,
alternating which goes first, and the figure is the median of the pairwise ratios. The rule:
by default each kernel is within +-3 % of its reference, neither slower nor faster.
- --stream-ref CMD: McCalpin's stream.c (-DSTREAM_ARRAY_SIZE=10000000 -DNTIMES=20): ours / ref
  per kernel.
- --himeno-ref CMD: RIKEN's himenoBMTxps.c built for --himeno-size (default M, -DMIDDLE): ref
  seconds per iteration / ours, for the default layout (padded) and for layout=packed.
- --himeno-callgrind-ref CMD: the same reference built for size S (-DSMALL), counted once under
  callgrind: instructions per grid point and iteration of its jacobi() beside ours, a steady
  second opinion on a loaded machine (valgrind must be installed).
- --lmbench DIR: lmbench's bin directory (lat_syscall, lat_ctx, lat_pagefault, lat_mem_rd):
  each round our primitives kernel and lmbench's tools, ours / lmbench, with the method
  differences said beside each pair.

    .venv/bin/python bench/kernels.py [--rounds 5] [--quick]
    .venv/bin/python bench/kernels.py --rounds 20 --stream-ref ~/ref/stream \\
        --himeno-ref ~/ref/himeno_M --himeno-callgrind-ref ~/ref/himeno_S --lmbench ~/lmbench/bin
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from refparse import (himeno_seconds_per_iteration, himeno_total_iterations,  # noqa: E402
                      lat_ctx, lat_mem_rd, lat_pagefault_ns, lat_syscall_ns, nearest_size,
                      stream_rates)
from virtbench.machinery.kernels import build as kernels  # noqa: E402
from virtbench.measure.benchmarks.base import kernel_result  # noqa: E402

KERNEL_CFLAGS = ["-std=c11", "-O2", "-march=x86-64", "-mtune=generic"]
STREAM_KEYS = ("copy", "scale", "add", "triad")
HIMENO_POINTS = {"XS": 30 * 30 * 62, "S": 62 * 62 * 126, "M": 126 * 126 * 254,
                 "L": 254 * 254 * 510}      # interior points a sweep updates
# Where the hot loops are in the source (file, function pattern), and the symbols they end up
# in as built: Himeno's padded sweep is PAD(jacobi) per size (jacobi_m for M), the packed one
# sweep() inlined into packed_m.
HOT_FUNCTIONS = {"stream.c": ("k_copy", "k_scale", "k_add", "k_triad"),
                 "himeno_padded.h": (r"PAD\(jacobi\)",), "himeno.c": ("sweep",)}
HOT_SYMBOLS = {"stream": ("k_copy", "k_scale", "k_add", "k_triad"),
               "himeno": ("jacobi_m", "packed_m")}
PACKED = re.compile(r"\b(movapd|movupd|mulpd|addpd|subpd|movaps|movups|mulps|addps|subps)\b")
SCALAR = re.compile(r"\b(mulsd|addsd|subsd|mulss|addss|subss|movss|movsd)\b")


def run(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=3600,
                          env={**os.environ, **(env or {})})


def median(xs):
    return statistics.median(xs)


# -- what the compiler did ----------------------------------------------------------------

def function_lines(text: str, name: str) -> tuple[int, int] | None:
    """First and last source line of C function `name` (a regex; its definition to the
    closing brace in column 0)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"^(static\s+)?[\w\s\*()]*{name}\(", line) and not line.rstrip().endswith(";"):
            for j in range(i, len(lines)):
                if lines[j].startswith("}"):
                    return i + 1, j + 1
    return None


def loop_note(text: list[str], line: int) -> str:
    """Why gcc had nothing to vectorise in a loop of ours."""
    body = " ".join(text[line - 1:line + 1])
    if "_mm_" in body:
        return " (its body is SSE2 intrinsics: packed by hand)"
    if "for (" in " ".join(text[line:line + 3]):
        return " (an outer loop)"
    if "memcpy" in " ".join(text[line:line + 3]):
        return " (a memcpy per row)"
    if "gosa" in " ".join(text[line - 1:line + 30]) and "for (" in text[line - 1]:
        return " (the k loop, gosa summed in order as the reference's)"
    if re.search(r"=\s*m\s*;", text[line - 1]):
        return " (the scalar remainder: at most one element)"
    return ""


def vectorisation_report(src: Path) -> list[str]:
    """gcc's -fopt-info-vec verdict on the loops of each kernel's hot functions, with the
    kernels' own flags."""
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for unit in ("stream.c", "himeno.c"):
            proc = run(["gcc", *KERNEL_CFLAGS, "-pthread", "-fopt-info-vec-optimized",
                        "-fopt-info-vec-missed", "-c", str(src / unit), "-o", f"{tmp}/x.o"])
            for fname, functions in HOT_FUNCTIONS.items():
                if (fname == "stream.c") != (unit == "stream.c"):
                    continue
                text = (src / fname).read_text()
                for fn in functions:
                    span = function_lines(text, fn)
                    verdicts = []
                    for ln in proc.stderr.splitlines():
                        m = re.match(rf".*{re.escape(fname)}:(\d+):\d+: \w+: (loop vectorized "
                                     r"using .*|couldn't vectorize loop)$", ln)
                        if m and span and span[0] <= int(m.group(1)) <= span[1]:
                            verdict = (f"line {m.group(1)}: {m.group(2)}"
                                       + loop_note(text.splitlines(), int(m.group(1))))
                            if verdict not in verdicts:
                                verdicts.append(verdict)
                    name = fn.replace("\\", "")
                    lines.append(f"{fname} {name}: " + ("; ".join(verdicts) or "no loop left for "
                                 "gcc to vectorise (written with SSE2 or a call)"))
    return lines


def hot_loops(binary: Path, functions: tuple[str, ...]) -> list[str]:
    """Packed vs scalar floating-point instructions in each hot function of a built kernel."""
    dis = run(["objdump", "-d", "--no-show-raw-insn", str(binary)]).stdout
    out = []
    for fn in functions:
        m = re.search(rf"^[0-9a-f]+ <{fn}(?:\.[a-z0-9.]+)?>:\n(.*?)(?=^[0-9a-f]+ <|\Z)", dis,
                      re.S | re.M)
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


# -- running ours and the references ------------------------------------------------------

def ours(binary: Path, *args) -> dict:
    proc = run([str(binary), *map(str, args)])
    if proc.returncode != 0:
        raise SystemExit(f"{binary.name} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return kernel_result(proc.stdout, binary.name.split("-")[0])


def command(cmd: str) -> list[str]:
    return shlex.split(os.path.expanduser(cmd))


def reference(cmd: str) -> str:
    proc = run(command(cmd))
    return proc.stdout + proc.stderr


def callgrind_ir(argv: list[str], function: str) -> tuple[int, str]:
    """Instructions executed in `function` (callgrind, --toggle-collect) and the program's
    output. A leading `env VAR=value ...` of the command stays in front of valgrind."""
    lead = []
    if argv and argv[0] == "env":
        lead = ["env"]
        argv = argv[1:]
        while argv and "=" in argv[0]:
            lead.append(argv.pop(0))
    proc = run(lead + ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                       f"--toggle-collect={function}", *argv])
    m = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
    if proc.returncode != 0 or not m:
        raise SystemExit(f"callgrind of {argv[0]} failed: {proc.stderr.strip()[-300:]}")
    return int(m.group(1)), proc.stdout


def pairs(rounds: int, first, second) -> list[tuple]:
    """`rounds` pairs (first(), second()), alternating which runs first."""
    out = []
    for r in range(rounds):
        if r % 2:
            b = second()
            a = first()
        else:
            a = first()
            b = second()
        out.append((a, b))
    return out


# -- the comparisons -----------------------------------------------------------------------

def compare_stream(bindir: Path, args, n: int, passes: int) -> dict:
    with_ref = args.stream_ref and not args.quick       # the reference is built for full size
    runs = pairs(args.rounds, lambda: ours(bindir / "stream", "-n", n, "-p", passes),
                 (lambda: stream_rates(reference(args.stream_ref))) if with_ref
                 else (lambda: None))
    figures = {"rates": {k: median([o["aggregate"][f"{k}_mb_s"] for o, _ in runs])
                         for k in STREAM_KEYS}}
    rates = figures["rates"]
    print(f"\n== stream ({n:,} elements x {passes} passes, median of {args.rounds})")
    print("  " + "  ".join(f"{k} {rates[k]:,.0f} MB/s" for k in STREAM_KEYS))
    print(f"  Triad / Add = {rates['triad'] / rates['add']:.3f} (same 24 bytes per element)")
    print(f"  Scale / Copy = {rates['scale'] / rates['copy']:.3f} (same 16 bytes per element)")
    s0 = runs[0][0]
    print(f"  cache rule: arrays {s0['array_bytes'] / 1e6:.0f} MB vs last-level cache "
          f"{(s0.get('llc_bytes') or 0) / 2**20:.0f} MiB: "
          + {True: "holds (>= 4x)", False: "BROKEN (< 4x: rates include cache hits)",
             None: "unknown cache size"}[s0.get("cache_rule")])
    if args.stream_ref and args.quick:
        print("  vs reference: not in --quick (the reference is built for 10,000,000 elements)")
    if with_ref:
        ratios = {k: [o["aggregate"][f"{k}_mb_s"] / ref[k] for o, ref in runs]
                  for k in STREAM_KEYS}
        figures["vs_reference"] = {k: median(v) for k, v in ratios.items()}
        figures["vs_reference_range"] = {k: [min(v), max(v)] for k, v in ratios.items()}
        print("  vs reference (median of pairwise ratios, ours/ref): "
              + "  ".join(f"{k} {figures['vs_reference'][k]:.3f}" for k in STREAM_KEYS))
        print("  single pairs: " + "  ".join(f"{k} {min(v):.2f}-{max(v):.2f}"
                                             for k, v in ratios.items()))
    return figures


def compare_himeno(bindir: Path, args, size: str, target: float) -> dict:
    def one(layout):
        return ours(bindir / "himeno", "-s", size, "-l", layout, "-t", target)

    ref = (lambda: himeno_seconds_per_iteration(reference(args.himeno_ref))) \
        if args.himeno_ref else (lambda: None)
    padded = pairs(args.rounds, lambda: one("padded"), ref)
    packed = [one("packed") for _ in range(max(1, args.rounds // 2))]
    figures = {"mflops": median([h["mflops"] for h, _ in padded]),
               "packed_mflops": median([h["mflops"] for h in packed])}
    verified = all(h["verified"] is True for h, _ in padded) and all(
        h["verified"] is True for h in packed)
    figures["verified"] = verified
    print(f"\n== himeno (size {size}, ~{target:g} s per run, median of {args.rounds})")
    print(f"  layout=padded (default) {figures['mflops']:,.1f} MFLOPS, layout=packed "
          f"{figures['packed_mflops']:,.1f} MFLOPS; residual "
          f"{'matches the reference' if verified else 'DIFFERS'} in every run")
    if args.himeno_ref:
        per_iter = [h["seconds"] / h["iterations"] for h, _ in padded]
        ratios = [r / o for o, r in zip(per_iter, (r for _, r in padded))]
        figures["vs_reference"] = median(ratios)
        figures["vs_reference_range"] = [min(ratios), max(ratios)]
        ref_per_iter = median([r for _, r in padded])
        figures["packed_vs_reference"] = ref_per_iter / median(
            [h["seconds"] / h["iterations"] for h in packed])
        print(f"  padded vs reference (median of pairwise ratios of seconds per iteration, "
              f"ref/ours): {figures['vs_reference']:.3f} (single pairs {min(ratios):.2f}-"
              f"{max(ratios):.2f})")
        print(f"  packed vs reference (medians, ref/ours): {figures['packed_vs_reference']:.3f}")
    return figures


def callgrind_himeno(bindir: Path, cmd: str) -> dict:
    """Instructions per grid point and iteration at size S: ours (both layouts) and the
    reference's jacobi()."""
    n = 8
    points = HIMENO_POINTS["S"]
    padded, _ = callgrind_ir([str(bindir / "himeno"), "-s", "S", "-n", str(n)], "jacobi_s")
    packed, _ = callgrind_ir([str(bindir / "himeno"), "-s", "S", "-l", "packed", "-n", str(n)],
                             "packed_s")
    ref, out = callgrind_ir(command(cmd), "jacobi")
    ref_iters = himeno_total_iterations(out)
    figures = {"padded": padded / (points * n), "packed": packed / (points * n),
               "reference": ref / (points * ref_iters)}
    print(f"\n== himeno under callgrind (size S, instructions per grid point and iteration)")
    print(f"  reference {figures['reference']:.2f}  padded {figures['padded']:.2f} "
          f"({figures['padded'] / figures['reference']:.3f} of the reference)  packed "
          f"{figures['packed']:.2f} ({figures['packed'] / figures['reference']:.3f})")
    return figures


def compare_primitives(bindir: Path, args) -> dict:
    """Our primitives beside lmbench's tools (the same primitive, each its own method)."""
    lm = Path(os.path.expanduser(args.lmbench))
    tmp = tempfile.TemporaryDirectory()
    pf_file = Path(tmp.name) / "pagefault.dat"
    pf_file.write_bytes(b"\0" * (64 << 20))

    def ours_run():
        return ours(bindir / "primitives", "--only", "syscall,pagefault,ctxsw,memlat")

    def lmbench_run():
        out = {"syscall": lat_syscall_ns(reference(f"{lm}/lat_syscall null"))}
        ctx = run([str(lm / "lat_ctx"), "-s", "0", "2"], env={"LMBENCH_SCHED": "SINGLE"})
        out["ctxsw"], out["ctxsw_overhead"] = lat_ctx(ctx.stdout + ctx.stderr)
        out["pagefault"] = lat_pagefault_ns(reference(f"{lm}/lat_pagefault {pf_file}"))
        out["memlat"] = lat_mem_rd(reference(f"{lm}/lat_mem_rd -N 1 -t 128 64"))
        return out

    runs = pairs(args.rounds, ours_run, lmbench_run)
    tmp.cleanup()
    rows = []

    def row(name, ours_ns, lm_ns, method):
        ratios = [o / m for o, m in zip(ours_ns, lm_ns)]
        rows.append({"primitive": name, "ours_ns": median(ours_ns), "lmbench_ns": median(lm_ns),
                     "ratio": median(ratios), "method": method})

    res = [o["results"] for o, _ in runs]
    row("syscall", [r["syscall_ns"]["value"] for r in res], [m["syscall"] for _, m in runs],
        "both getppid() in a loop; lmbench through libc, ours through syscall(2)")
    row("ctxsw (same CPU)",
        [r["ctxsw_same_cpu_ns"]["value"] - o["ctxsw"]["pipe_overhead_ns"]
         for r, (o, _) in zip(res, runs)],
        [m["ctxsw"] for _, m in runs],
        "lat_ctx -s 0 2 pinned to one CPU (LMBENCH_SCHED=SINGLE) minus its pipe overhead; ours "
        "ctxsw_same_cpu_ns minus the pipe overhead it reports")
    row("pagefault", [r["pagefault_4k_ns"]["value"] for r in res],
        [m["pagefault"] for _, m in runs],
        "NOT the same fault: lat_pagefault maps a file already in the page cache (the kernel "
        "maps 16 pages per fault around it); ours writes fresh anonymous pages (allocated and "
        "zeroed)")
    for ws in ("l1", "l2", "llc", "llc4x"):
        mb = runs[0][0]["memlat"][f"{ws}_4k"]["bytes"] / 2**20
        near = [nearest_size(m["memlat"], mb) for _, m in runs]
        row(f"memlat {ws} ({mb:g} MB; lmbench {near[0][0]:g} MB)",
            [r[f"memlat_{ws}_4k_ns"]["value"] for r in res], [n[1] for n in near],
            "both a chain of dependent loads; lat_mem_rd -t walks the set's pages in turn, one "
            "line of each, so every load misses a TLB smaller than the set; ours goes to any "
            "line next (a TLB hit when its page happens to be cached)")
    print(f"\n== primitives vs lmbench (median of {args.rounds} interleaved pairs, ours/lmbench)")
    for r in rows:
        print(f"  {r['primitive']:<38} ours {r['ours_ns']:10.1f} ns  lmbench "
              f"{r['lmbench_ns']:10.1f} ns  ratio {r['ratio']:.3f}")
        print(f"      {r['method']}")
    return {"rows": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--stream-ref", metavar="CMD", help="a reference STREAM built with 20 passes")
    ap.add_argument("--himeno-ref", metavar="CMD",
                    help="RIKEN's himenoBMTxps built for --himeno-size")
    ap.add_argument("--himeno-size", default="M", choices=("XS", "S", "M", "L"))
    ap.add_argument("--himeno-seconds", type=float, default=None,
                    help="seconds per run of ours (default 20, quick 2)")
    ap.add_argument("--himeno-callgrind-ref", metavar="CMD",
                    help="RIKEN's himenoBMTxps built for size S, counted under callgrind")
    ap.add_argument("--lmbench", metavar="DIR", help="lmbench's bin directory")
    ap.add_argument("--skip", action="append", default=[],
                    choices=("compiler", "stream", "himeno", "pi"), help="leave a part out")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = ap.parse_args()

    bindir = kernels.build()
    src = kernels.source_dir()
    n, passes = (2_000_000, 5) if args.quick else (10_000_000, 20)
    target = args.himeno_seconds or (2.0 if args.quick else 20.0)
    k = 16 if args.quick else 20
    figures: dict = {}
    ok = True

    if "compiler" not in args.skip:
        print("== compiler (gcc " + run(["gcc", "-dumpfullversion"]).stdout.strip()
              + ", " + " ".join(KERNEL_CFLAGS) + ")")
        for line in vectorisation_report(src):
            print(line)
        for name, fns in HOT_SYMBOLS.items():
            print(f"{name} hot loops as built:")
            for line in hot_loops(bindir / name, fns):
                print(line)
    if "stream" not in args.skip:
        figures["stream"] = compare_stream(bindir, args, n, passes)
    if "himeno" not in args.skip:
        figures["himeno"] = compare_himeno(bindir, args, args.himeno_size, target)
        ok &= figures["himeno"]["verified"]
    if args.himeno_callgrind_ref:
        figures["himeno_callgrind"] = callgrind_himeno(bindir, args.himeno_callgrind_ref)
    if "pi" not in args.skip:
        pi_runs = [ours(bindir / "pi", "-k", k) for _ in range(args.rounds)]
        figures["pi_seconds"] = median([p["seconds"] for p in pi_runs])
        print(f"\n== pi (2^{k} digits, median of {args.rounds})")
        print(f"  {figures['pi_seconds']:.3f} s; digits verified against MPFR in "
              f"{sum(p['verified'] is True for p in pi_runs)}/{len(pi_runs)} runs")
        ok &= all(p["verified"] is True for p in pi_runs)
    if args.lmbench:
        figures["primitives_vs_lmbench"] = compare_primitives(bindir, args)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
