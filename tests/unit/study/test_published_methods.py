"""The published study files run each benchmark as its seed did (the commands are checked here)
and say where virtbench deviates (method notes)."""
from pathlib import Path

import pytest

from virtbench.measure import benchmarks, environments
from virtbench.study import design as study

STUDIES = Path(__file__).resolve().parents[3] / "studies"


@pytest.fixture
def env(tmp_path):
    with environments.create(f"native:scratch={tmp_path}") as e:   # argv may ask it things
        yield e


def case(study_name: str, label: str):
    s = study.load(STUDIES / f"{study_name}.toml")
    found = {c.label: c for c in s.benchmarks}[label]
    bench = benchmarks.get(found.name)
    return bench, bench.params(found.params), found


def test_riken_dd_is_conv_fdatasync_of_1gb_without_oflag_direct(env):
    bench, params, _ = case("riken-2012", "dd-write")
    argv = bench.argv(params, env)
    assert argv[:2] == ["dd", "if=/dev/zero"] and "bs=1M" in argv and "count=1024" in argv
    assert "conv=fdatasync" in argv and not any(a.startswith("oflag") for a in argv)
    # the benchmark's own default still writes with O_DIRECT
    default = benchmarks.get("dd-write")
    assert "oflag=direct" in default.argv(default.params(), env)


def test_riken_ior_is_ior_defaults_buffered(env):
    bench, params, found = case("riken-2012", "ior-rw")
    argv = bench.argv(params, env)
    assert {"--size=1M", "--bs=256k", "--direct=0", "--rw=write", "--rw=read"} <= set(argv)
    assert "fio" in found.method_note


def test_riken_hdparm_is_plain_hdparm_t(env):
    bench, params, _ = case("riken-2012", "hdparm-read")
    assert "--direct" not in bench.argv(params, env)


@pytest.mark.parametrize("seed", ["zhang-kvm-io", "cnaf-xen-kvm-2009"])
def test_bonnie_runs_with_its_defaults_2x_ram_per_char_buffered(env, seed):
    bench, params, _ = case(seed, "bonnie")
    argv = bench.argv(params, env)
    assert "-s" not in argv and "-r" not in argv      # bonnie++ sizes the file at 2 x RAM
    assert "-f" not in argv                           # per-char tests run
    assert "-D" not in argv                           # no O_DIRECT
    default = benchmarks.get("bonnie")
    assert {"-D", "-f", "-s"} <= set(default.argv(default.params(), env))


def test_cnaf_iperf_is_w256k_p5_t900():
    for label, reverse in (("iperf-in", True), ("iperf-out", False)):
        bench, params, found = case("cnaf-xen-kvm-2009", label)
        argv = bench.client_argv(params, "10.0.0.1")
        assert argv[argv.index("-t") + 1] == "900" and argv[argv.index("-P") + 1] == "5"
        assert argv[argv.index("-w") + 1] == "256K"
        assert ("-R" in argv) is reverse
        assert "iperf 2.0.4" in found.method_note


def test_zhang_netperf_durations_and_rr_sizes():
    bench, params, found = case("zhang-kvm-io", "tcp-rr")
    argv = bench.client_argv(params, "10.0.0.1")
    assert argv[argv.index("-t") + 1] == "10" and argv[argv.index("-m") + 1] == "14"
    assert "--tcp" in argv and "1-byte" in found.method_note
    bench, params, _ = case("zhang-kvm-io", "udp-rr")
    assert "--tcp" not in bench.client_argv(params, "10.0.0.1")
    bench, params, _ = case("zhang-kvm-io", "udp-stream")
    argv = bench.client_argv(params, "10.0.0.1")
    assert argv[argv.index("-b") + 1] == "0" and argv[argv.index("-t") + 1] == "10"
    bench, params, _ = case("zhang-kvm-io", "tcp-stream")
    argv = bench.client_argv(params, "10.0.0.1")
    assert argv[argv.index("-t") + 1] == "10" and "-R" not in argv and "--bidir" not in argv


def test_xen_dd_is_bs_1m_count_32_on_a_sync_mount(env):
    bench, params, _ = case("xen-domu-io-2006", "dd-sync")
    argv = bench.argv(params, env)
    assert argv[-2:] == ["bs=1M", "count=32"] and params["form"] == "sync-mount"


@pytest.mark.parametrize("seed, noted", [
    ("riken-2012", {"pi", "blast", "ior-rw", "scp", "tcp-1-bidir", "tcp-1-send",
                    "tcp-1-receive", "tcp-10-bidir", "tcp-10-send", "tcp-10-receive"}),
    ("zhang-kvm-io", {"tcp-stream", "udp-stream", "tcp-rr", "udp-rr", "ping-hops"}),
    ("cnaf-xen-kvm-2009", {"cyclepi", "iperf-in", "iperf-out"}),
    ("virtualbox-ahci-2010", {"cdm", "tcp"}),
    ("xen-domu-io-2006", {"dd-sync"}),
])
def test_every_substitute_tool_carries_a_method_note(seed, noted):
    s = study.load(STUDIES / f"{seed}.toml")
    assert set(s.method_notes()) == noted
    assert s.to_dict()["method_notes"] == s.method_notes()


def test_riken_ior_runs_as_written_on_this_host(env):
    """IOR's 1 MiB file in 256 KiB buffered transfers: fio takes it and reports both phases."""
    env.start()
    try:
        bench, params, _ = case("riken-2012", "ior-rw")
        outcome = bench.run_trial(env, params)
        assert outcome.ok, outcome.error
        assert outcome.values["write_mb_s"] > 0 and outcome.values["read_mb_s"] > 0
    finally:
        env.stop()


class _Guest:
    """Just what dd-write's sync-mount preparation asks of an environment."""

    label = "fake-guest"

    def __init__(self, owns: bool):
        self.owns, self.argvs = owns, []

    def capabilities(self):
        from virtbench.core.capabilities import Capabilities, can
        return Capabilities.none("fake").with_(scratch=can("disk" if self.owns else "directory"))

    def exec(self, argv, timeout, env=None):
        from virtbench.machinery.agent.transport import ExecResult
        self.argvs.append(argv)
        out = "/scratch\n" if argv[0] == "findmnt" and "TARGET" in argv else "rw,sync\n"
        return ExecResult(exit=0, stdout=out, stderr="", wall_s=0.0)


@pytest.mark.parametrize("owns, remounts", [(True, True), (False, False)])
def test_sync_mount_asks_the_environment_not_its_kind(owns, remounts):
    from virtbench.measure.benchmarks.disk.base import DiskTrial
    bench = benchmarks.get("dd-write")
    guest, trial = _Guest(owns), DiskTrial(workdir="/scratch/w", target="/scratch/w")
    bench.prepare(guest, bench.params({"form": "sync-mount"}), trial)
    did_remount = any(a[:3] == ["mount", "-o", "remount,sync"] for a in guest.argvs)
    assert did_remount is remounts
    assert not hasattr(guest, "kind")
