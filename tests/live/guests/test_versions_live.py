"""Versions of the stack for real (docs/versions.md), in one run of three guests (TCG here):
the system's QEMU (7.2 here) with bookworm's kernel, bookworm-backports' QEMU 10.0.2
(`virtbench qemu fetch`) and bookworm-backports' Linux 6.12 (`linux=`), pi (our C kernel) and
a primitive, one trial each. The metadata says which QEMU and which guest kernel each ran,
and the report says what differs from the reference, one fact each. Then one UEFI boot
(`firmware=ovmf`), whose boot phases show it. The image and the fetched QEMU are built in
the background while the tier runs (tests/support/prebuild.py); the pure parts are in
tests/unit/image/ and tests/unit/environments/."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import prebuild
import pytest

from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu.cmdline import firmware
from virtbench.machinery.host import workroot

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")


def _vb(*args, timeout):
    return subprocess.run([sys.executable, "-m", "virtbench", *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """The run's `report --format json`, and the fetched QEMU's path."""
    for name in ("backports image", "backports qemu"):
        said = prebuild.wait(name)
        if said:
            print(said, flush=True)
    fetched = _vb("qemu", "fetch", prebuild.BACKPORTS, timeout=600)
    assert fetched.returncode == 0, fetched.stderr
    binary = fetched.stdout.strip().splitlines()[-1]
    store = f"sqlite:///{tmp_path_factory.mktemp('versions') / 'store.db'}"
    # one trial each: a trial the host disturbs (steal on a shared VM) would leave a row
    # without figures, and this run is about versions, not about the host's noise
    study = tmp_path_factory.mktemp("versions-study") / "versions.toml"
    study.write_text('name = "versions"\nsteal_limit = 100\ncpu_share_limit = 0\n')
    run = _vb("run", str(study), "--env", "qemu", "--env", f"qemu:binary={binary},name=q10",
              "--env", f"qemu:linux={prebuild.BACKPORTS},name=l612",
              "--bench", "pi", "--bench", "primitives:only=syscall", "--trials", "1",
              "--quick", "--min-section", "0", "--store", store, "--no-progress", timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    report = _vb("report", "--store", store, "--format", "json", timeout=120)
    assert report.returncode == 0, report.stderr
    return json.loads(report.stdout), binary


def _meta(data) -> dict[str, dict]:
    return {e["label"]: e["metadata"] for e in data["environments"]}


def test_the_fetched_qemu_ran_and_both_versions_are_recorded(versions):
    data, binary = versions
    meta = _meta(data)
    q10 = meta["q10"]
    [system] = [m for label, m in meta.items() if label.startswith("qemu-")]
    assert q10["qemu_version"] == q10["qemu_version_qmp"] == "10.0.2"   # -version and QMP
    assert q10["qemu_binary"] == binary and q10["qemu_system"] is False
    assert system["qemu_version"].startswith("7.2.")
    assert system["qemu_version_qmp"] == system["qemu_version"] and system["qemu_system"]
    # the guest ran the fetched QEMU with its own firmware directories
    argv = q10["qemu_argv"]
    assert argv[0] == binary and argv[1] == "-L" and argv[2].endswith("/usr/share/qemu")


def test_a_backports_guest_runs_linux_6_12_and_says_so(versions):
    data, _ = versions
    meta = _meta(data)["l612"]
    assert meta["guest_kernel"].startswith("6.12.")                # uname -r in the guest
    assert meta["guest_kernel_package"] == meta["guest_kernel"]    # the image's own kernel
    assert meta["guest_kernel_deb"].startswith("linux-image-6.12.")
    assert "bpo12" in meta["guest_kernel_deb"]
    assert meta["guest_linux_suite"] == "bookworm-backports" and meta["firmware"] == "seabios"
    assert data["run"]["status"] == "complete"
    assert not any(w["kind"] == "failed_trials" for w in data["warnings"])   # kernels, agent


def test_each_version_says_what_differs_from_the_reference_one_change_each(versions):
    data, _ = versions
    reference = data["run"]["baseline"]
    assert reference.startswith("qemu-")              # no native: the first environment
    pairs = {p["environment"]: p for p in data["differences"]}
    q10, l612 = pairs["q10"], pairs["l612"]
    assert q10["reference"] == l612["reference"] == reference
    assert q10["changes"] == 1 and q10["line"].startswith(f"q10 vs {reference}: QEMU 7.2.")
    assert q10["line"].endswith("→ 10.0.2; everything else equal")
    assert l612["changes"] == 1 and "guest Linux 6.1." in l612["line"]
    assert "→ 6.12." in l612["line"] and l612["line"].endswith("everything else equal")
    for r in data["results"]:
        if r["environment"] in ("q10", "l612"):
            assert r["vs_baseline"]["differs_in"]


def test_an_ovmf_guest_boots_through_uefi_and_its_phases_show_it():
    before = {p.name for p in workroot.root().iterdir()} if workroot.root().is_dir() else set()
    env = qemu.Qemu(EnvSpec.parse("qemu:accel=tcg,firmware=ovmf"))
    env.resolve()
    phases = env.measure_boot()               # one twin boot, stopped after
    assert phases.detail["firmware"] == "ovmf" and phases.detail["booted_by"] == "uefi"
    # Debian's OVMF prints nothing on the debug port: its share is in to_kernel_s
    assert "firmware_s" not in phases.phases
    values = phases.values()
    assert values["to_kernel_s"] == pytest.approx(values["vmm_s"])
    assert 0 < values["to_kernel_s"] < values["total_s"]
    assert all(v > 0 for v in phases.phases.values())
    after = {p.name for p in workroot.root().iterdir()} if workroot.root().is_dir() else set()
    assert after <= before                    # the twin's work dir (its vars copy) is gone
    assert not list(workroot.root().glob(f"*/{firmware.VARS_COPY}"))
