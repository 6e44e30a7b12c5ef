"""The `ssh` environment against a guest virtbench did not start for this run: a TCG guest
booted here (its sshd and host key are in the image), reached from the root namespace over a
veth into its host-side namespace, then its tap: root -> veth -> vb-xxxxxx -> tap -> guest.
The ssh kind knows nothing of the guest; it must find out what the target runs on."""
import os

import pytest
from nstarget import VethLink, ip, link_exists

from virtbench.interface.cli import commands as cli
from virtbench.machinery.kernels import build as kernels
from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec
from virtbench.foundations.store import Store

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")


def route_to_guest(env: qemu.Qemu) -> VethLink:
    """A veth from the root namespace into the guest's host-side namespace, forwarding
    there, a host route to the guest through it and the guest's route back."""
    link = VethLink(env.ns.name)
    env.ns.run(["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"], check=True, capture_output=True)
    ip("route", "add", f"{env.guest_ip}/32", "via", link.ns_ip, "dev", link.root_dev)
    back = env.exec(["ip", "route", "add", f"{link.root_ip.rsplit('.', 1)[0]}.0/30", "via",
                     env.peer_ip], timeout=30)
    assert back.exit == 0, back.stderr
    return link


def test_a_tcg_guest_as_an_ssh_target(tmp_path, capsys, store_url, guest_image):
    info = guest_image
    guest = qemu.Qemu(EnvSpec.parse("qemu:accel=tcg"))
    link = None
    try:
        guest.start()
        link = route_to_guest(guest)
        kind, key = (info.dir / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        known = tmp_path / "known_hosts"
        known.write_text(f"{guest.guest_ip} {kind} {key}\n")
        spec = f"ssh:host={guest.guest_ip},key={info.ssh_key},known_hosts={known},name=guest"
        code = cli.main(["run", "--env", spec, "--bench", "pi", "--bench", "stream",
                         "--trials", "2", "--quick", "--min-section", "0", "--no-progress", "--seed", "1"])
        err = capsys.readouterr().err
        assert code == 0, err

        store = Store(store_url)
        run_id = store.list_runs()[0]["id"]
        [env] = store.environments(run_id)
        # QEMU's DMI, no KVM CPUID leaf: emulation, as hypervisor.detect reads it
        assert env["label"] == "guest"                        # name=guest is the label
        meta = env["metadata"]
        assert meta["kind_label"] == f"ssh-qemu/{guest.guest_ip}"
        assert meta["platform"] == "qemu" and "QEMU" in meta["platform_evidence"]
        assert meta["ssh_target"] == f"root@{guest.guest_ip}:22"
        trials = store.trials(run_id)
        assert sorted((t["benchmark"], t["status"]) for t in trials) == [
            ("pi", "ok"), ("pi", "ok"), ("stream", "ok"), ("stream", "ok")]
        assert {s["benchmark"] for s in store.samples(run_id)} == {"pi", "stream"}
        # the staged kernels crossed the veth (the route to the guest, not a loopback)
        staged = sum((kernels.build() / name).stat().st_size for name in kernels.KERNELS)
        assert link.counters() > staged
        # what was staged in the guest is gone (asked through virtbench's own agent)
        left = guest.exec(["sh", "-c", "ls -d /tmp/virtbench-* 2>/dev/null; true"], timeout=30)
        assert left.stdout.strip() == ""
    finally:
        try:
            guest.stop()
        finally:
            if link is not None:
                link.delete()
    assert not link_exists(link.root_dev)   # it went with the namespace
