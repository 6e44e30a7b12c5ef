"""The live part of tests/unit/benchmarks/test_disk.py: its tests that need root and this host.

Disk family: parsers on captured real output and each benchmark
end to end in the native environment at quick sizes.
"""
import subprocess
import pytest
from virtbench.measure import environments
from virtbench.measure.benchmarks import get
from nativekit import native  # noqa: F401


@pytest.mark.parametrize("name, given, metric", [
    ("dd-write", {}, "write_mb_s"),
    ("dd-write", {"form": "sync-mount"}, "write_mb_s"),
    ("dd-write", {"cache": "in"}, "write_mb_s"),
    ("ior-rw", {}, "read_mb_s"),
    ("cdm", {}, "rnd4k_qd32_read_iops"),
    ("bonnie", {}, "block_write_mb_s"),
])
def test_end_to_end_native(native, name, given, metric):
    env, scratch = native
    bench = get(name)
    outcome = bench.run_trial(env, bench.params(given, quick=True))
    assert outcome.ok, outcome.error
    assert outcome.values[metric] > 0
    assert all(v >= 0 for v in outcome.values.values())
    assert list(scratch.iterdir()) == []          # the trial's files are gone
    assert all(kind != "cleanup" for kind, _ in outcome.warnings)


def test_hdparm_end_to_end_on_a_loop_mounted_scratch(tmp_path):
    image, mnt = tmp_path / "fs.img", tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["truncate", "-s", "96M", str(image)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
    if subprocess.run(["mount", "-o", "loop", str(image), str(mnt)]).returncode != 0:
        pytest.skip("cannot loop-mount here")
    try:
        env = environments.create(f"native:scratch={mnt}")
        env.start()
        try:
            bench = get("hdparm-read")
            assert env.scratch_device().startswith("/dev/loop")
            outcome = bench.run_trial(env, bench.params(quick=True))
            assert outcome.ok, outcome.error
            assert outcome.values["read_mb_s"] > 0
        finally:
            env.stop()
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
