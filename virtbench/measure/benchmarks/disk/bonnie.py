"""bonnie: bonnie++ block write, rewrite, block read and seeks, with %CPU
(Zhang et al.; CNAF 2009)."""
from __future__ import annotations

from ....core.errors import VirtbenchError
from ..base import Metric, ParseError
from .base import DiskBenchmark
from .parsers import parse_bonnie


class Bonnie(DiskBenchmark):
    name = "bonnie"
    description = ("bonnie++ block write, rewrite, block read (and random seeks) with %CPU "
                   "(Zhang et al.; CNAF 2009); per-char tests skipped unless per_char")
    metrics = tuple(
        [Metric(f"{p}_mb_s", "MB/s", True, f"bonnie++ {p.replace('_', ' ')} (K/sec -> 10^6 B/s)")
         for p in ("block_write", "rewrite", "block_read")]
        + [Metric(f"{p}_cpu_pct", "%", False, f"bonnie++ %CPU during {p.replace('_', ' ')}")
           for p in ("block_write", "rewrite", "block_read")]
        + [Metric("seeks_per_s", "seeks/s", True, "bonnie++ random seeks"),
           Metric("char_write_mb_s", "MB/s", True, "bonnie++ per-char write (per_char=true)"),
           Metric("char_read_mb_s", "MB/s", True, "bonnie++ per-char read (per_char=true)"),
           Metric("char_write_cpu_pct", "%", False, "bonnie++ %CPU, per-char write"),
           Metric("char_read_cpu_pct", "%", False, "bonnie++ %CPU, per-char read")])
    tools = ("bonnie++",)
    # ram_mb=0: size_mb/2 (bonnie++ wants the file at least twice RAM; with cache=out and
    # direct the bulk tests use O_DIRECT (-D), so the page cache cannot hold them anyway).
    # size_mb=0: bonnie++'s own default, as the published studies ran it: a file twice the
    # environment's RAM (ram_mb, if given, stands for the RAM). direct=false: no -D.
    defaults = {"size_mb": 2048, "ram_mb": 0, "cache": "out", "per_char": False, "direct": True}
    quick = {"size_mb": 256}

    def check(self, params):
        super().check(params)
        if params["size_mb"] == 1 or params["size_mb"] < 0 or params["ram_mb"] < 0:
            raise VirtbenchError("benchmark bonnie: need size_mb >= 2 (or 0: twice the RAM, "
                                 "bonnie++'s default), ram_mb >= 0")

    def timeout(self, params):
        size = params["size_mb"] or 64 * 1024     # twice the RAM: allow for a large guest
        return 900.0 + size * (3.0 if params["per_char"] else 1.0)

    def command(self, params, trial):
        argv = ["bonnie++", "-d", trial.target]
        if params["size_mb"]:
            ram = params["ram_mb"] or max(1, params["size_mb"] // 2)
            argv += ["-s", str(params["size_mb"]), "-r", str(ram)]
        elif params["ram_mb"]:
            argv += ["-r", str(params["ram_mb"])]
        argv += ["-n", "0", "-u", "root", "-q", "-m", "virtbench"]
        if not params["per_char"]:
            argv.append("-f")
        if params["cache"] == "out" and params["direct"]:
            argv.append("-D")
        return argv

    def parse(self, stdout):
        result = parse_bonnie(stdout)
        if not result.values:
            raise ParseError("bonnie++ printed +++++ for every test it ran: each finished too "
                             "fast to time; use a larger size_mb")
        return result.values

    def extra_warnings(self, text):
        try:
            unmeasured = parse_bonnie(text).unmeasured
        except ParseError:
            return []
        return [("unmeasured", f"bonnie++ printed +++++ for {', '.join(unmeasured)}: the test "
                               "finished too fast to time; use a larger size_mb")] if unmeasured else []

