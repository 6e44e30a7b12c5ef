"""Memory benchmarks: STREAM (McCalpin's Copy/Scale/Add/Triad), our own kernel."""
from __future__ import annotations

from ..errors import VirtbenchError
from .base import Benchmark, Metric, ParseError, kernel_result, number

STREAM_KERNELS = ("copy", "scale", "add", "triad")


class Stream(Benchmark):
    name = "stream"
    family = "memory"
    description = "STREAM Copy/Scale/Add/Triad, best of passes; several processes at once sum up"
    metrics = tuple(Metric(f"{k}_mb_s", "MB/s", True, f"STREAM {k.capitalize()} bandwidth, "
                           "summed over processes") for k in STREAM_KERNELS)
    tools = ("stream",)
    defaults = {"elements": 10_000_000, "passes": 20, "processes": 1}  # RIKEN 2012
    quick = {"elements": 2_000_000, "passes": 5}

    def check(self, params):
        if params["elements"] < 1000 or params["passes"] < 2 or params["processes"] < 1:
            raise VirtbenchError("benchmark stream: need elements >= 1000, passes >= 2, "
                                 "processes >= 1")

    def argv(self, params, env):
        return [env.kernel_path("stream"), "-n", str(params["elements"]),
                "-p", str(params["passes"]), "-P", str(params["processes"])]

    def timeout(self, params):
        return 300.0 + params["elements"] * params["passes"] * params["processes"] * 2e-6

    def parse(self, stdout):
        result = kernel_result(stdout, "stream")
        if result.get("validated") is not True:
            raise ParseError("STREAM's validation of the arrays failed")
        aggregate = result.get("aggregate")
        if not isinstance(aggregate, dict):
            raise ParseError("no aggregate rates")
        return {f"{k}_mb_s": number(aggregate, f"{k}_mb_s") for k in STREAM_KERNELS}
