"""Memory benchmarks: STREAM (McCalpin's Copy/Scale/Add/Triad), our own kernel."""
from __future__ import annotations

from ...core.errors import VirtbenchError
from .base import (
    Benchmark,
    Metric,
    ParseError,
    Span,
    Timing,
    finite_values,
    kernel_result,
    late_of,
    number,
)

STREAM_KERNELS = ("copy", "scale", "add", "triad")


def cache_rule_warning(result: dict) -> str | None:
    """STREAM's rule: each array at least 4x the last-level cache, else the rates include
    cache hits. None when the rule holds or the cache size is unknown (pure)."""
    if result.get("cache_rule") is not False:
        return None
    llc, arrays = number(result, "llc_bytes"), number(result, "array_bytes")
    procs = max(1, int(result.get("processes", 1)))
    need = int(-(-4 * llc // (8 * procs)))
    return (f"each STREAM array ({arrays / 1e6:.0f} MB over {procs} process(es)) is smaller "
            f"than 4 x the {llc / 2**20:.0f} MiB last-level cache: the rates include cache "
            f"hits, not only memory; STREAM's rule wants elements >= {need} per process "
            "(the published studies' 10,000,000 may be below it on today's caches)")


class Stream(Benchmark):
    name = "stream"
    family = "memory"
    description = ("STREAM Copy/Scale/Add/Triad, best of passes; processes = N: bytes moved by "
                   "all N over one common interval per kernel (STREAM's threaded form)")
    metrics = tuple(Metric(f"{k}_mb_s", "MB/s", True, f"STREAM {k.capitalize()} bandwidth of "
                           "all processes over their common interval") for k in STREAM_KERNELS)
    tools = ("stream",)
    cpu_bound = True
    timed = tuple(f"{k}_mb_s" for k in STREAM_KERNELS)
    slotted = True
    defaults = {"elements": 10_000_000, "passes": 20, "processes": 1}  # RIKEN 2012
    quick = {"elements": 2_000_000, "passes": 5}

    def check(self, params):
        if not 1000 <= params["elements"] <= 2**36:
            raise VirtbenchError("benchmark stream: elements from 1000 to 2^36")
        if not 2 <= params["passes"] <= 200:
            raise VirtbenchError("benchmark stream: passes from 2 to 200 (the first is warm-up)")
        if not 1 <= params["processes"] <= 1024:
            raise VirtbenchError("benchmark stream: processes from 1 to 1024")

    def argv(self, params, env):
        return [env.kernel_path("stream"), "-n", str(params["elements"]),
                "-p", str(params["passes"]), "-P", str(params["processes"])]

    def memory_need(self, params):
        """Three arrays of 8-byte elements in each process."""
        return 3 * 8 * params["elements"] * params["processes"]

    def timeout(self, params):
        return 300.0 + params["elements"] * params["passes"] * params["processes"] * 2e-6

    def parse(self, stdout):
        result = kernel_result(stdout, "stream")
        aggregate = result.get("aggregate")
        if result.get("validated") is not True:
            raise ParseError("STREAM's validation of the arrays failed", finite_values(
                aggregate, {f"{k}_mb_s": f"{k}_mb_s" for k in STREAM_KERNELS}))
        if not isinstance(aggregate, dict):
            raise ParseError("no aggregate rates")
        return {f"{k}_mb_s": number(aggregate, f"{k}_mb_s") for k in STREAM_KERNELS}

    def timing(self, stdout):
        """Per kernel, every pass after the warm-up: its common interval over the processes
        and the bytes they all moved (MB). None for output without them."""
        try:
            result = kernel_result(stdout, "stream")
            spans, moved = result.get("spans"), result.get("bytes_per_pass")
            warm = int(number(result, "warmup_passes"))
            if not isinstance(spans, dict) or not isinstance(moved, dict):
                return None
            out = {}
            for k in STREAM_KERNELS:
                mb = number(moved, k) / 1e6
                pairs = spans.get(k)
                if not isinstance(pairs, list) or len(pairs) <= warm:
                    return None
                out[f"{k}_mb_s"] = [Span(float(a), float(b), mb) for a, b in pairs[warm:]]
            return Timing(out, late_of(result), late_of(result, "slot_late_s"))
        except (ParseError, TypeError, ValueError):
            return None

    def slots_needed(self, params):
        return len(STREAM_KERNELS) * params["passes"]

    def extra_warnings(self, text):
        text = cache_rule_warning(kernel_result(text, "stream"))
        return [("stream-cache-rule", text)] if text else []
