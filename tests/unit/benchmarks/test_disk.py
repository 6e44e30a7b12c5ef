"""Disk family: parsers on captured real output and each benchmark
end to end in the native environment at quick sizes."""
import shutil
import pytest
from virtbench.measure import environments
from virtbench.measure.benchmarks import get
from virtbench.measure.benchmarks.base import ParseError
from virtbench.measure.benchmarks.disk.parsers import fio_jobs, parse_bonnie, parse_dd, parse_hdparm
from virtbench.core.errors import VirtbenchError
from nativekit import native  # noqa: F401

MIB = 1024 * 1024


def disk(fixture_text, name):
    return fixture_text("disk", name)


# -- dd ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, nbytes, seconds", [
    ("dd-direct-64m-GBps.stderr", 67108864, 0.0476309),      # "..., 1.4 GB/s"
    ("dd-1g-MBps.stderr", 1073741824, 4.07558),               # "..., 263 MB/s"
    ("dd-fdatasync-256m.stderr", 268435456, 0.330965),        # "..., 811 MB/s"
    ("dd-pipe-kBps.stderr", 2000, 1.203),                     # "..., 1.7 kB/s"
    ("dd-pipe-500-bytes.stderr", 500, 1.10253),               # "500 bytes copied, ..., 0.5 kB/s"
    ("dd-sync-mount-32m.stderr", 33554432, 0.114624),
    ("dd-oflag-sync-32m.stderr", 33554432, 0.0582339),
])
def test_dd_rate_is_bytes_over_seconds_whatever_unit_dd_prints(fixture_text, name, nbytes, seconds):
    result = parse_dd(disk(fixture_text, name))
    assert result["bytes"] == nbytes and result["seconds"] == seconds
    assert result["mb_s"] == pytest.approx(nbytes / seconds / 1e6)
    assert get("dd-write").parse(disk(fixture_text, name)) == {"write_mb_s": result["mb_s"]}


def test_dd_old_formats():
    # as printed in the Xen 2006 article (BSD-style dd) and by coreutils before 8.24
    xen = ("32+0 records in\n32+0 records out\n"
           "33554432 bytes transferred in 17.615797 seconds (1904792 bytes/sec)\n")
    assert parse_dd(xen)["mb_s"] == pytest.approx(33554432 / 17.615797 / 1e6)
    old = "1073741824 bytes (1.1 GB) copied, 4.07558 s, 263 MB/s\n"
    assert parse_dd(old)["mb_s"] == pytest.approx(1073741824 / 4.07558 / 1e6)


@pytest.mark.parametrize("text", [
    "", "garbage\n", "1024+0 records in\n1024+0 records out\n",
    "67108864 bytes (67 MB, 64 MiB) copied, 0.04",                       # truncated
    "0 bytes copied, 0.000102 s, 0.0 kB/s\n",
])
def test_dd_garbage_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_dd(text)


def test_dd_error_output_is_a_parse_error(fixture_text):
    with pytest.raises(ParseError):
        parse_dd(disk(fixture_text, "dd-enoent.stderr"))


# -- hdparm -----------------------------------------------------------------------------------
def test_hdparm_rate_in_decimal_mb(fixture_text):
    assert parse_hdparm(disk(fixture_text, "hdparm-t-loop.stdout")) == {
        "read_mb_s": pytest.approx(470.66 * MIB / 1e6)}
    assert parse_hdparm(disk(fixture_text, "hdparm-t-direct-loop.stdout")) == {
        "read_mb_s": pytest.approx(2117.16 * MIB / 1e6)}


@pytest.mark.parametrize("text", ["", "\n/dev/loop0:\n", "/dev/vda: Operation not permitted\n",
                                  " Timing buffered disk reads: 512 MB in  1.09 sec"])
def test_hdparm_garbage_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_hdparm(text)


# -- fio: ior-rw and cdm ----------------------------------------------------------------------
def test_ior_rw_from_fio_json(fixture_text):
    bench = get("ior-rw")
    assert bench.parse(disk(fixture_text, "fio-ior-direct-64m.json")) == {
        "write_mb_s": 2236962133 / 1e6, "read_mb_s": 1398101333 / 1e6}


def test_fio_json_after_note_lines(fixture_text):
    text = disk(fixture_text, "fio-ior-buffered-notes.stdout")
    assert text.startswith("note: both iodepth >= 1 and synchronous I/O engine")
    assert get("ior-rw").parse(text) == {"write_mb_s": 2581110153 / 1e6,
                                         "read_mb_s": 1973790117 / 1e6}


def test_cdm_all_jobs(fixture_text):
    values = get("cdm").parse(disk(fixture_text, "fio-cdm-quick-32m.json"))
    assert len(values) == 12
    assert values["seq1m_read_mb_s"] == 1954972203 / 1e6
    assert values["seq1m_write_mb_s"] == 1408925794 / 1e6
    assert values["rnd512k_read_mb_s"] == 816548443 / 1e6
    assert values["rnd512k_write_mb_s"] == 1384308875 / 1e6
    assert values["rnd4k_qd1_read_iops"] == 11470.529471
    assert values["rnd4k_qd1_write_mb_s"] == 23804171 / 1e6
    assert values["rnd4k_qd32_read_iops"] == 71327.672328
    assert values["rnd4k_qd32_write_iops"] == 55678.642715
    full = get("cdm").parse(disk(fixture_text, "fio-cdm-50m.json"))
    assert full["rnd4k_qd32_write_mb_s"] == 315836144 / 1e6


@pytest.mark.parametrize("cut", [0, 100, 5000, -3])
def test_fio_truncated_or_garbage_is_a_parse_error(fixture_text, cut):
    text = disk(fixture_text, "fio-cdm-quick-32m.json")
    with pytest.raises(ParseError):
        get("cdm").parse(text[:cut])
    with pytest.raises(ParseError):
        get("ior-rw").parse("fio: /nonexistent/dir is not a directory\n")


def test_fio_missing_job_and_failed_job(fixture_text):
    ior = disk(fixture_text, "fio-ior-direct-64m.json")
    with pytest.raises(ParseError, match="lacks job seq1m_read"):
        get("cdm").parse(ior)
    with pytest.raises(ParseError, match="error 5"):
        fio_jobs(ior.replace('"error" : 0', '"error" : 5', 1))


# -- bonnie++ ---------------------------------------------------------------------------------
def test_bonnie_csv_fields(fixture_text):
    values = get("bonnie").parse(disk(fixture_text, "bonnie-s1024-direct.stdout"))
    assert values == {"block_write_mb_s": 83673 * 1024 / 1e6, "block_write_cpu_pct": 33.0,
                      "rewrite_mb_s": 185425 * 1024 / 1e6, "rewrite_cpu_pct": 62.0,
                      "seeks_per_s": 13926.0, "seeks_cpu_pct": 71.0}
    assert parse_bonnie(disk(fixture_text, "bonnie-s1024-direct.stdout")).unmeasured == ["block_read"]
    values = get("bonnie").parse(disk(fixture_text, "bonnie-s512.stdout"))
    assert values == {"block_write_mb_s": 1025994 * 1024 / 1e6, "block_write_cpu_pct": 42.0}


def test_bonnie_all_plus_and_garbage(fixture_text):
    text = disk(fixture_text, "bonnie-s64-all-plus.stdout")
    assert parse_bonnie(text).unmeasured == ["block_write", "rewrite", "block_read", "seeks"]
    with pytest.raises(ParseError, match="too fast"):
        get("bonnie").parse(text)
    assert get("bonnie").extra_warnings(text)[0][0] == "unmeasured"
    for bad in ("", "garbage", text[:40], "1.98,2.00a,vm,1,1,64M,,8192,5,,,abc,12,,,,,,,,,\n"):
        with pytest.raises(ParseError):
            get("bonnie").parse(bad)


# -- parameters and commands ------------------------------------------------------------------
def test_params_and_commands():
    with pytest.raises(VirtbenchError, match="cache=warm is not valid"):
        get("cdm").params({"cache": "warm"})
    with pytest.raises(VirtbenchError, match="form=async is not valid"):
        get("dd-write").params({"form": "async"})
    env = environments.create("native:scratch=/var/tmp/vb-test-argv")
    argv = get("cdm").argv(get("cdm").params(), env)
    assert argv.count("--stonewall") == 8 and "--direct=1" in argv and "--size=50M" in argv
    assert get("dd-write").argv(get("dd-write").params(), env)[-3:] == [
        "count=1024", "conv=fdatasync", "oflag=direct"]
    dd_sync = get("dd-write").argv(get("dd-write").params({"form": "sync-mount"}), env)
    assert dd_sync[-2:] == ["bs=1M", "count=32"]
    bonnie = get("bonnie").argv(get("bonnie").params({"cache": "in"}, quick=True), env)
    assert "-D" not in bonnie and bonnie[bonnie.index("-s") + 1] == "256"
    shutil.rmtree("/var/tmp/vb-test-argv", ignore_errors=True)


def test_hdparm_without_a_device_is_a_failed_trial(tmp_path):
    env = environments.create("native:scratch=/dev/shm/virtbench-test-nodev")
    env.start()
    try:
        assert env.scratch_device() is None            # tmpfs: no block device
        outcome = get("hdparm-read").run_trial(env, get("hdparm-read").params())
        assert not outcome.ok and "has no block device under test" in outcome.error
    finally:
        env.stop()
        shutil.rmtree("/dev/shm/virtbench-test-nodev", ignore_errors=True)


def test_a_failing_command_is_a_failed_trial_and_cleans_up(native):
    env, scratch = native
    bench = get("ior-rw")
    outcome = bench.run_trial(env, bench.params({"bs_kb": 1000000}, quick=True))
    assert not outcome.ok and outcome.error
    assert list(scratch.iterdir()) == []


def test_sync_mount_asks_the_environment_whether_it_owns_the_scratch_fs_not_its_kind():
    from virtbench.measure.benchmarks.disk.base import DiskTrial
    from virtbench.machinery.agent.transport import ExecResult

    class Owner:
        kind = "native"              # deliberately: the kind must not decide
        instance_of = None

        def __init__(self):
            self.argvs = []

        def capabilities(self):
            from virtbench.core.capabilities import Capabilities, can
            return Capabilities.none("native").with_(scratch=can("disk"))

        def exec(self, argv, timeout, env=None):
            self.argvs.append(argv)
            out = {"TARGET": "/mnt/vbscratch\n", "OPTIONS": "rw,sync,relatime\n"}
            return ExecResult(0, next((v for k, v in out.items() if k in argv), ""), "", 0.0)

    env, trial = Owner(), DiskTrial(workdir="/mnt/vbscratch/virtbench-dd-write")
    bench = get("dd-write")
    bench.prepare(env, bench.params({"form": "sync-mount"}), trial)
    assert ["mount", "-o", "remount,sync", "/mnt/vbscratch"] in env.argvs
    assert trial.cleanup == [["mount", "-o", "remount,async", "/mnt/vbscratch"]]
    import virtbench.measure.benchmarks as pkg
    from pathlib import Path
    for path in Path(pkg.__file__).parent.glob("*.py"):
        assert "env.kind" not in path.read_text(), path.name
