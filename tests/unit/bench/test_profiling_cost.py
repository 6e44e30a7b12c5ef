"""bench/profiling_cost.py's rounds on fake guests: plain and profiled trials interleaved,
the profiled one between two snapshots of the plugin's counts, the figures it prints, and a
failed trial that stops it (exit 1, both guests stopped)."""
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

SPEC = importlib.util.spec_from_file_location(
    "profiling_cost", Path(__file__).resolve().parents[3] / "bench" / "profiling_cost.py")
cost = importlib.util.module_from_spec(SPEC)
sys.modules["profiling_cost"] = cost
SPEC.loader.exec_module(cost)


class Guest:
    def __init__(self, name, log, wall, fail=False):
        self.name, self.log, self.wall, self.fail = name, log, wall, fail
        self.boot_s, self.label = 12.345, "qemu-tcg/virtio-blk/virtio-net"

    def start(self):
        self.log.append(f"start {self.name}")

    def stop(self):
        self.log.append(f"stop {self.name}")

    def exec(self, argv, timeout):
        return SimpleNamespace(stdout="ffffffff81000000 T _stext\n")

    def run_trial(self, bench, params):
        self.log.append(f"{bench.name} on {self.name}")
        return SimpleNamespace(error="broke" if self.fail else None, wall_s=self.wall,
                               values={"seconds": self.wall})


class Control:
    def __init__(self, path, log):
        self.log = log

    def settle(self):
        self.log.append("settle")

    def snapshot(self, path):
        self.log.append(f"snapshot {path.name}")
        path.write_text("stats")
        return path.name


def _world(monkeypatch, tmp_path, fail=False):
    log = []
    monkeypatch.setattr(cost.tcg, "PluginControl", lambda path: Control(path, log))
    monkeypatch.setattr(cost.tcg, "diff", lambda before, after: (before, after))
    monkeypatch.setattr(cost.tcg, "to_profile", lambda counts, table, wall: SimpleNamespace(
        by_reason=[SimpleNamespace(count=40), SimpleNamespace(count=2)]))
    monkeypatch.setattr(cost.tcg, "parse_stats", lambda text: {"read": text})
    args = SimpleNamespace(rounds=2, no_settle=False)
    benches = cost.benches_with(["pi"], ["k=9", "nothing=1"])
    plain = Guest("plain", log, 1.0)
    profiled = Guest("profiled", log, 2.0, fail=fail)
    return log, args, benches, plain, profiled


def test_the_rounds_interleave_the_guests_and_say_what_profiling_costs(monkeypatch, tmp_path):
    log, args, benches, plain, profiled = _world(monkeypatch, tmp_path)
    assert benches[0][1]["k"] == 9
    result = {"benchmarks": {}}
    assert cost.measure(args, benches, plain, profiled, tmp_path, result) == 0
    one = ["pi on plain", "settle", "snapshot before", "pi on profiled", "snapshot after"]
    assert log == ["start plain", "start profiled", *one, *one]
    pi = result["benchmarks"]["pi"]
    assert pi["slowdown"] == 2.0 and pi["within_target"] and pi["events_per_trial"] == [42, 42]
    assert pi["wall_s"] == {"plain": [1.0, 1.0], "profiled": [2.0, 2.0]}
    assert pi["metric_slowdown"] == {"seconds": 2.0}
    assert result["symbolise"]["text_symbols"] == 1 and result["settle"]
    assert result["plugin_stats"] == {"read": "stats"} and result["boot_s"]["plain"] == 12.35


def test_a_failed_trial_stops_the_rounds(monkeypatch, tmp_path, capsys):
    log, args, benches, plain, profiled = _world(monkeypatch, tmp_path, fail=True)
    assert cost.measure(args, benches, plain, profiled, tmp_path, {}) == 1
    assert log[-1] == "pi on profiled" and "pi on profiled: broke" in capsys.readouterr().err
