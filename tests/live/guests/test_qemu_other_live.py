"""Another QEMU for real (docs/versions.md): `virtbench qemu fetch bookworm-backports` (QEMU
10.0.2 from Debian's mirror, cached after the first time), then the run of issue 31's "done
when" beside the system's QEMU (7.2 here): both guests boot (TCG here: ~65 s for the whole
run), the report shows both, and the metadata says which QEMU each ran, from -version and
from QMP query-version once the guest was up."""
import json
import os
import subprocess
import sys

import pytest

from virtbench.environments import qemu

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")


def _vb(*args, timeout):
    return subprocess.run([sys.executable, "-m", "virtbench", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_the_system_qemu_and_bookworm_backports_side_by_side(tmp_path):
    fetched = _vb("qemu", "fetch", "bookworm-backports", timeout=600)
    assert fetched.returncode == 0, fetched.stderr
    binary = fetched.stdout.strip().splitlines()[-1]
    store = f"sqlite:///{tmp_path / 'q10.db'}"
    run = _vb("run", "--env", "qemu", "--env", f"qemu:binary={binary},name=q10",
              "--bench", "pi", "--bench", "primitives:only=syscall", "--trials", "3",
              "--quick", "--store", store, "--no-progress", timeout=900)
    assert run.returncode == 0, run.stderr
    assert "q10" in run.stdout and "qemu-" in run.stdout
    report = _vb("report", "--store", store, "--format", "json", timeout=120)
    envs = {e["label"]: e["metadata"] for e in json.loads(report.stdout)["environments"]}
    q10 = envs.pop("q10")
    (system,) = envs.values()
    assert q10["qemu_version"] == q10["qemu_version_qmp"] == "10.0.2"
    assert q10["qemu_binary"] == binary and q10["qemu_system"] is False
    assert system["qemu_version"].startswith("7.2.")
    assert system["qemu_version_qmp"] == system["qemu_version"] and system["qemu_system"]
    # the guest ran the fetched QEMU with its own firmware directories
    argv = q10["qemu_argv"]
    assert argv[0] == binary and argv[1] == "-L" and argv[2].endswith("/usr/share/qemu")
