"""hdparm-read: hdparm -t on the block device under test (RIKEN 2012)."""
from __future__ import annotations

from typing import Any

from ..base import Metric
from .base import DiskBenchmark, TrialFailed
from .parsers import parse_hdparm


class HdparmRead(DiskBenchmark):
    name = "hdparm-read"
    description = "hdparm -t: buffered sequential reads of the device under test (RIKEN 2012)"
    metrics = (Metric("read_mb_s", "MB/s", True,
                      "hdparm -t's rate (printed in MiB/s, stored in 10^6 B/s)"),)
    tools = ("hdparm",)
    needs_workdir = False
    needs = ("scratch_device",)
    defaults = {"direct": False, "cache": "out"}
    quick: dict[str, Any] = {}

    def timeout(self, params):
        return 300.0

    def _device(self, env) -> str:
        dev = env.scratch_device()
        if dev is None:
            raise TrialFailed(f"environment {env.label} has no block device under test "
                              "(scratch_device() is None); hdparm-read needs one")
        return dev

    def prepare(self, env, params, trial):
        trial.target = self._device(env)

    def argv(self, params, env):
        return ["hdparm", "-t"] + (["--direct"] if params["direct"] else []) + \
            [env.scratch_device() or "<no scratch device>"]

    def command(self, params, trial):
        return ["hdparm", "-t"] + (["--direct"] if params["direct"] else []) + [trial.target]

    def limit_path(self, env, trial):
        return trial.target

    def parse(self, stdout):
        return parse_hdparm(stdout)
