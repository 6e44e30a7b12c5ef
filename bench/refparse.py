"""Pure parsers of the reference programs bench/kernels.py sets our kernels beside: McCalpin's
STREAM, RIKEN's Himeno and lmbench's lat_syscall, lat_ctx, lat_pagefault and lat_mem_rd.
Tested on their real output (tests/unit/bench/test_refparse.py)."""
from __future__ import annotations

import re


class RefError(ValueError):
    """The output does not hold what the parser looks for."""


def stream_rates(text: str) -> dict[str, float]:
    """STREAM's best rates, MB/s: {"copy", "scale", "add", "triad"}."""
    rates = dict(re.findall(r"^(Copy|Scale|Add|Triad):\s+([0-9.]+)", text, re.M))
    if len(rates) != 4:
        raise RefError("no STREAM rate table (Copy/Scale/Add/Triad)")
    return {k.lower(): float(v) for k, v in rates.items()}


def himeno_seconds_per_iteration(text: str) -> float:
    """Himeno's measured run: cpu seconds / iterations ("Loop executed for N times", "cpu :")."""
    loops = re.search(r"Loop executed for\s+(\d+)\s+times", text)
    cpu = re.search(r"cpu\s*:\s*([0-9.]+)", text)
    if not loops or not cpu or int(loops.group(1)) <= 0:
        raise RefError("no 'Loop executed for N times' / 'cpu : S' in Himeno's output")
    return float(cpu.group(1)) / int(loops.group(1))


def himeno_total_iterations(text: str) -> int:
    """Jacobi iterations the program ran in all: its 3-iteration rehearsal and the measured run
    (what an instruction count of jacobi() is divided by)."""
    rehearsal = re.search(r"Measure the performance in\s+(\d+)\s+times", text)
    loops = re.search(r"Loop executed for\s+(\d+)\s+times", text)
    if not rehearsal or not loops:
        raise RefError("no rehearsal or measured iteration count in Himeno's output")
    return int(rehearsal.group(1)) + int(loops.group(1))


def lat_syscall_ns(text: str) -> float:
    """lat_syscall null: "Simple syscall: 0.2922 microseconds" -> ns."""
    m = re.search(r"Simple syscall:\s+([0-9.]+)\s+microseconds", text)
    if not m:
        raise RefError("no 'Simple syscall: X microseconds' in lat_syscall's output")
    return float(m.group(1)) * 1000.0


def lat_ctx(text: str, procs: int = 2) -> tuple[float, float]:
    """lat_ctx -s 0 N: (ns per switch, pipe overhead ns) -- the switch is lmbench's: the
    token's time per process minus the overhead it measured without a switch."""
    ovr = re.search(r'"size=\d+k ovr=([0-9.]+)', text)
    line = re.search(rf"^{procs}\s+([0-9.]+)\s*$", text, re.M)
    if not ovr or not line:
        raise RefError(f"no 'size=0k ovr=X' header or '{procs} Y' line in lat_ctx's output")
    return float(line.group(1)) * 1000.0, float(ovr.group(1)) * 1000.0


def lat_pagefault_ns(text: str) -> float:
    """lat_pagefault FILE: "Pagefaults on FILE: X microseconds" -> ns."""
    m = re.search(r"Pagefaults on .*:\s+([0-9.]+)\s+microseconds", text)
    if not m:
        raise RefError("no 'Pagefaults on FILE: X microseconds' in lat_pagefault's output")
    return float(m.group(1)) * 1000.0


def lat_mem_rd(text: str) -> list[tuple[float, float]]:
    """lat_mem_rd: [(array MB, ns per load)] of the first stride's table."""
    rows = [(float(a), float(b)) for a, b in
            re.findall(r"^([0-9]+\.[0-9]+)\s+([0-9]+\.[0-9]+)\s*$", text, re.M)]
    if not rows:
        raise RefError("no 'size latency' rows in lat_mem_rd's output")
    return rows


def nearest_size(rows: list[tuple[float, float]], mb: float) -> tuple[float, float]:
    """The row of lat_mem_rd's table whose array size is closest to `mb` (by ratio)."""
    import math
    return min(rows, key=lambda r: abs(math.log(r[0] / mb)) if r[0] > 0 else math.inf)
