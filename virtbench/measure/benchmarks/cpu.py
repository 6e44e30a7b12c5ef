"""CPU benchmarks: Himeno (RIKEN's Poisson solver) and SuperPI-style pi, our own kernels."""
from __future__ import annotations

from ...core.errors import VirtbenchError
from .base import (
    Benchmark,
    Metric,
    ParseError,
    Timing,
    finite_values,
    kernel_result,
    late_of,
    number,
    span_of,
)

HIMENO_SIZES = ("XS", "S", "M", "L")
# padded: RIKEN's static arrays (one padding plane per axis), within a few per cent of the
# reference program (bench/kernels.py); packed: our faster variant (about 1.25x here), an
# explicit choice that shows in the benchmark's label (himeno[layout=packed])
HIMENO_LAYOUTS = ("padded", "packed")
PI_K_RANGE = (6, 28)      # what the pi kernel accepts: 2^6 .. 2^28 digits
# The largest iteration count per size with a reference residual (kernels/himeno_gosa.h);
# a calibrated run is capped there, an explicit count beyond it is refused.
HIMENO_MAX_CHECKED = {"XS": 262144, "S": 65536, "M": 8192, "L": 1024}
HIMENO_GRIDS = {"XS": (32, 32, 64), "S": (64, 64, 128), "M": (128, 128, 256),
                "L": (256, 256, 512)}


def himeno_checked_count(n: int) -> bool:
    """Is `n` an iteration count whose residual the himeno kernel can check: 1, 2, 3 or
    m * 2^e with m = 4..7 (the counts its table of reference residuals holds)."""
    if n < 1:
        return False
    if n <= 3:
        return True
    while n > 7 and n % 2 == 0:
        n //= 2
    return 4 <= n <= 7


class Himeno(Benchmark):
    name = "himeno"
    family = "cpu"
    description = ("Himeno: 19-point Jacobi iteration of a Poisson equation, single precision "
                   "(MFLOPS); the residual is checked against the reference program's; "
                   "layout=padded (default) runs as RIKEN's himenoBMTxps does, layout=packed is "
                   "our faster variant")
    metrics = (Metric("mflops", "MFLOPS", True, "floating-point rate of the Jacobi sweeps"),)
    # himeno-l: the same program with size L's padded arrays (1.9 GB, static) built in
    tools = ("himeno", "himeno-l")
    cpu_bound = True
    timed = ("mflops",)
    # RIKEN 2012 ran size M (128 x 128 x 256 grid points: "256 x 128 x 128" in the paper);
    # the original times itself to run about 60 s. iterations=0: calibrate to target_seconds.
    defaults = {"size": "M", "target_seconds": 60.0, "iterations": 0, "layout": "padded"}
    quick = {"size": "S", "target_seconds": 1.0}

    def check(self, params):
        if params["size"] not in HIMENO_SIZES:
            raise VirtbenchError(f"benchmark himeno: size={params['size']} is not valid; "
                                 f"use one of: {', '.join(HIMENO_SIZES)}")
        if params["layout"] not in HIMENO_LAYOUTS:
            raise VirtbenchError(f"benchmark himeno: layout={params['layout']} is not valid; "
                                 f"use one of: {', '.join(HIMENO_LAYOUTS)}")
        if not 0 < params["target_seconds"] <= 1e6:
            raise VirtbenchError("benchmark himeno: target_seconds must be above 0")
        n, most = params["iterations"], HIMENO_MAX_CHECKED[params["size"]]
        if n != 0 and (not himeno_checked_count(n) or n > most):
            raise VirtbenchError(
                f"benchmark himeno: iterations={n} has no reference residual to check; use 0 "
                "(calibrate to target_seconds), 1, 2, 3 or m*2^e with m = 4..7 (e.g. 64, 80, 96), "
                f"at most {most} for size {params['size']}")

    def memory_need(self, params):
        """Fourteen single-precision fields over the grid (padded: one more plane per axis)."""
        i, j, k = HIMENO_GRIDS[params["size"]]
        if params["layout"] == "padded":
            i, j, k = i + 1, j + 1, k + 1
        return 14 * 4 * i * j * k

    def argv(self, params, env):
        program = "himeno-l" if params["size"] == "L" and params["layout"] == "padded" else "himeno"
        argv = [env.kernel_path(program), "-s", params["size"], "-l", params["layout"]]
        if params["iterations"] > 0:
            return argv + ["-n", str(params["iterations"])]
        return argv + ["-t", str(params["target_seconds"])]

    def timeout(self, params):
        return 600.0 + 100 * params["target_seconds"]

    def parse(self, stdout):
        result = kernel_result(stdout, "himeno")
        if result.get("verified") is not True:
            why = ("differs from the reference program's" if result.get("verified") is False
                   else "could not be checked (no reference residual for this count)")
            raise ParseError(f"the residual (gosa {result.get('gosa')}) {why}: a wrong "
                             "residual is no result", finite_values(result, {"mflops": "mflops"}))
        return {"mflops": number(result, "mflops")}

    def timing(self, stdout):
        """The measured run, one block: its start, end and MFLOP of work."""
        try:
            result = kernel_result(stdout, "himeno")
            return Timing({"mflops": [span_of(result, work=number(result, "mflop"))]},
                          late_of(result))
        except ParseError:
            return None


class Pi(Benchmark):
    name = "pi"
    family = "cpu"
    description = "SuperPI-style: 2^k decimal digits of pi by Gauss-Legendre (GMP), verified against MPFR"
    metrics = (Metric("seconds", "s", False, "time to compute the digits", aggregate="makespan"),)
    tools = ("pi",)
    cpu_bound = True
    timed = ("seconds",)
    defaults = {"k": 20}   # SuperPI "1M": 2^20 = 1,048,576 digits, as RIKEN 2012
    quick = {"k": 16}

    def check(self, params):
        low, high = PI_K_RANGE
        if not low <= params["k"] <= high:
            raise VirtbenchError(f"benchmark pi: k={params['k']} is out of range; use {low} to "
                                 f"{high} (2^k digits)")

    def argv(self, params, env):
        return [env.kernel_path("pi"), "-k", str(params["k"])]

    def timeout(self, params):
        return 600.0 * max(1, 2 ** (params["k"] - 20)) * 4

    def parse(self, stdout):
        result = kernel_result(stdout, "pi")
        if result.get("verified") is not True:
            raise ParseError("the digits did not verify against MPFR: a wrong digit is no result",
                             finite_values(result, {"seconds": "seconds"}))
        return {"seconds": number(result, "seconds")}

    def timing(self, stdout):
        try:
            result = kernel_result(stdout, "pi")
            return Timing({"seconds": [span_of(result)]}, late_of(result))
        except ParseError:
            return None


class CyclePi(Benchmark):
    name = "cyclepi"
    family = "cpu"
    description = ("CNAF PI test: a CPU-bound pi loop timed in TSC cycles (rdtsc) and wall time; "
                   "run with instances = N to see how fairly guests share the CPUs")
    metrics = (Metric("cycles", "cycles", False, "time-stamp counter ticks for the loop",
                      aggregate="makespan"),
               Metric("seconds", "s", False, "wall time of the loop", aggregate="makespan"))
    tools = ("cyclepi",)
    cpu_bound = True
    timed = ("seconds",)
    defaults = {"steps": 2_000_000_000}
    quick = {"steps": 50_000_000}

    def check(self, params):
        if not 1000 <= params["steps"] <= 10**12:
            raise VirtbenchError("benchmark cyclepi: steps from 1000 to 10^12")

    def argv(self, params, env):
        return [env.kernel_path("cyclepi"), "-n", str(params["steps"])]

    def timeout(self, params):
        return 600.0 + params["steps"] * 1e-7

    def parse(self, stdout):
        result = kernel_result(stdout, "cyclepi")
        if result.get("verified") is not True:
            raise ParseError("the loop did not compute pi: the CPU gave a wrong result",
                             finite_values(result, {"cycles": "cycles", "seconds": "seconds"}))
        return {"cycles": number(result, "cycles"), "seconds": number(result, "seconds")}

    def timing(self, stdout):
        try:
            result = kernel_result(stdout, "cyclepi")
            return Timing({"seconds": [span_of(result)]}, late_of(result))
        except ParseError:
            return None
