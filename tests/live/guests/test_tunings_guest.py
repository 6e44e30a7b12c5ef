"""Guest tunings on guests that really boot (TCG here, ~25 s each): three boots. The first
two carry every tuning between them and show each read back in the guest; the third asks
for two that cannot take under TCG / QEMU 7.2 and fails start() with one line."""
import os

import pytest

from virtbench.machinery.host.net import netns
from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec
from virtbench.core.errors import EnvironmentUnusable

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")



def boot_and_read(spec):
    env = qemu.Qemu(EnvSpec.parse(spec))
    try:
        env.start()
        cmdline = env.exec(["cat", "/proc/cmdline"], timeout=10).stdout.split()
        return env.label, env.metadata()["tunings"], cmdline
    finally:
        env.stop()


def test_boot_time_and_e1000_tunings_are_read_back(guest_image):
    label, tunings, cmdline = boot_and_read(
        "qemu:accel=tcg,disk=ide,nic=e1000,tick=periodic,highres=off,clocksource=hpet,"
        "pmtimer=off,iosched=none,offloads=off,e1000_itr=3000")
    assert label == ("qemu-tcg/ide/e1000/tick=periodic/highres=off/clocksource=hpet/"
                     "pmtimer=off/iosched=none/offloads=off/e1000_itr=3000")
    assert tunings == {"tick": "periodic", "highres": "off", "clocksource": "hpet",
                       "pmtimer": "off", "iosched": "none", "offloads": "off",
                       "e1000_itr": 3000}
    assert {"nohz=off", "highres=off", "clocksource=hpet", "pmtmr=0",
            "e1000.InterruptThrottleRate=3000"} <= set(cmdline)


def test_virtio_tunings_and_a_scheduler_module_are_read_back(guest_image):
    label, tunings, cmdline = boot_and_read(
        "qemu:accel=tcg,nic=virtio-net,clocksource=acpi_pm,iosched=kyber,offloads=off,"
        "nic_coalesce_us=0,napi_tx=off")
    assert label.endswith("/clocksource=acpi_pm/iosched=kyber/offloads=off/"
                          "nic_coalesce_us=0/napi_tx=off")
    assert tunings == {"tick": "dynamic", "highres": "on", "clocksource": "acpi_pm",
                       "pmtimer": "on", "iosched": "kyber", "offloads": "off",
                       "nic_coalesce_us": 0, "napi_tx": "off"}
    assert "virtio_net.napi_tx=0" in cmdline and "nohz=off" not in cmdline


def test_tunings_that_cannot_take_fail_start_with_one_line(guest_image):
    # TCG offers no kvm-clock, and QEMU 7.2's virtio-net no VIRTIO_NET_F_NOTF_COAL
    env = qemu.Qemu(EnvSpec.parse("qemu:accel=tcg,nic=virtio-net,clocksource=kvm-clock,"
                                  "nic_coalesce_us=50"))
    with pytest.raises(EnvironmentUnusable) as exc:
        env.start()
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(env.label + ": clocksource=kvm-clock did not take: the guest "
                          "reports ")
    assert "(available: " in msg and "kvm-clock" not in msg.split("(available: ")[1]
    assert ("nic_coalesce_us=50 did not take: the guest reports 0 (ethtool failed: "
            "netlink error: Operation not supported)") in msg
    assert env.vmm.proc is None and env.workdir is None and env.ns is None   # stop() ran
    assert not [n for n in netns.list_namespaces() if n.startswith("vb-")
                and not netns.owner_alive((netns.OWNERS / n).read_text()
                                          if (netns.OWNERS / n).exists() else "")]
