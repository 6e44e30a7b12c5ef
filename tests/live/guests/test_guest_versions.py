"""Another guest kernel and another firmware, live (TCG here, one guest boot each):
qemu:linux=bookworm-backports runs our kernels and the agent in a Linux 6.12 guest and says so
in its metadata; qemu:firmware=ovmf boots through UEFI, which its boot phases show. The pure
parts are tested in tests/unit/environments/test_qemu_firmware_linux.py and
tests/unit/image/test_suites.py."""
from __future__ import annotations

import os

import pytest

from virtbench.cli.commands import main
from virtbench.environments import qemu
from virtbench.environments.base import EnvSpec
from virtbench.environments.qemu import firmware
from virtbench.host import workroot
from virtbench.store import Store

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")


@pytest.fixture(scope="module")
def backports_run(tmp_path_factory):
    """One run of a Linux 6.12 guest: pi (our C kernel) and a primitive, one trial each.
    Builds the suite's image the first time (about 2.5 minutes here)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VIRTBENCH_STORE", url)
        code = main(["run", "--env", "qemu:accel=tcg,linux=bookworm-backports", "--bench", "pi",
                     "--bench", "primitives:only=syscall", "--trials", "1", "--quick",
                     "--no-progress"])
    store = Store(url)
    run_id = store.get_run()["id"]
    return code, store, run_id


def test_a_backports_guest_runs_linux_6_12_and_says_so(backports_run):
    code, store, run_id = backports_run
    assert code == 0
    env = store.environments(run_id)[0]
    meta = env["metadata"]
    assert env["label"] == "qemu-tcg/virtio-blk/virtio-net/linux-6.12"
    assert meta["guest_kernel"].startswith("6.12.")                # uname -r in the guest
    assert meta["guest_kernel_package"] == meta["guest_kernel"]    # the image's own kernel
    assert meta["guest_kernel_deb"].startswith("linux-image-6.12.")
    assert "bpo12" in meta["guest_kernel_deb"]
    assert meta["guest_linux_suite"] == "bookworm-backports" and meta["firmware"] == "seabios"
    trials = store.trials(run_id)
    assert trials and all(t["status"] == "ok" for t in trials)     # our kernels, the agent


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
