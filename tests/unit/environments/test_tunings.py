"""Guest tunings (pure): options, label, kernel command line, guest commands, and the
read-back parsers on output captured from a virtbench guest (tests/fixtures/tunings/)."""
import xml.etree.ElementTree as ET

import pytest

from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.libvirt import Libvirt
from virtbench.measure.environments.libvirt.domain_xml import build_domain_xml
from virtbench.measure.environments.qemu import Qemu
from virtbench.measure.environments.qemu.booted import readback as rb
from virtbench.measure.environments.qemu.cmdline.argv import build_argv, kernel_cmdline
from virtbench.measure.environments.qemu.booted.tunings import (
    TUNINGS,
    boot_args,
    mismatches,
    requested,
    runtime_commands,
)
from virtbench.core.errors import VirtbenchError


def qemu(text):
    return Qemu(EnvSpec.parse(text))


def fixture(fixture_text, name):
    """A captured output without its `# ` header lines."""
    lines = fixture_text("tunings", name).splitlines(keepends=True)
    while lines and lines[0].startswith("# "):
        lines.pop(0)
    return "".join(lines)


# -- options and label ---------------------------------------------------------------------
def test_defaults_leave_label_and_command_line_untouched():
    env = qemu("qemu:accel=tcg,disk=ide,nic=e1000")
    assert env.label == "qemu-tcg/ide/e1000"
    assert requested(env.values) == {} and boot_args(env.values) == []
    # writing a default is the same environment, with the same label
    same = qemu("qemu:accel=tcg,disk=ide,nic=e1000,tick=dynamic,highres=on,pmtimer=on,"
                "clocksource=auto,iosched=auto,offloads=on,e1000_itr=auto")
    assert same.label == env.label and requested(same.values) == {}


def test_non_default_tunings_appear_in_the_label_in_option_order():
    env = qemu("qemu:accel=tcg,disk=ide,nic=e1000,iosched=none,tick=periodic,e1000_itr=3000")
    assert env.label == "qemu-tcg/ide/e1000/tick=periodic/iosched=none/e1000_itr=3000"
    assert requested(env.values) == {"tick": "periodic", "iosched": "none", "e1000_itr": 3000}


def test_libvirt_defined_domains_take_the_tunings_too():
    env = Libvirt.create(EnvSpec.parse("libvirt:uri=qemu:///system,nic=virtio-net,napi_tx=off"))
    assert requested(env.values) == {"napi_tx": "off"}
    assert env.label.endswith("/napi_tx=off")


@pytest.mark.parametrize("spec,words", [
    ("qemu:tick=often", "tick=often is not valid; use one of: dynamic, periodic"),
    ("qemu:clocksource=jiffies", "clocksource=jiffies is not valid"),
    ("qemu:iosched=cfq", "iosched=cfq is not valid; use one of: auto, none, mq-deadline"),
    ("qemu:nic_coalesce_us=-1", "nic_coalesce_us=-1 is not valid (a count of microseconds"),
    ("qemu:nic_coalesce_us=ten", "nic_coalesce_us=ten is not valid (write a whole number"),
    ("qemu:nic=e1000,e1000_itr=50", "e1000_itr=50 is not valid (e1000 takes 0 (off)"),
    ("qemu:nic=e1000,nic_coalesce_us=50",
     "nic_coalesce_us works only with nic=virtio-net (ethtool -C), not nic=e1000; for e1000 "
     "use e1000_itr=N"),
    ("qemu:nic=e1000,napi_tx=off", "napi_tx works only with nic=virtio-net"),
    ("qemu:e1000_itr=3000", "e1000_itr works only with nic=e1000"),
    ("qemu:clocksource=acpi_pm,pmtimer=off", "clocksource=acpi_pm needs the PM timer"),
])
def test_bad_tunings_are_one_line_naming_the_option(spec, words):
    with pytest.raises(VirtbenchError) as exc:
        qemu(spec)
    assert words in str(exc.value) and "\n" not in str(exc.value)


# -- at boot: the one kernel command line ------------------------------------------------
def test_boot_args_of_every_boot_time_tuning():
    env = qemu("qemu:disk=ide,nic=e1000,tick=periodic,highres=off,clocksource=hpet,"
               "pmtimer=off,e1000_itr=3000")
    assert boot_args(env.values) == ["nohz=off", "highres=off", "clocksource=hpet", "pmtmr=0",
                                     "e1000.InterruptThrottleRate=3000"]
    assert boot_args(qemu("qemu:napi_tx=off").values) == ["virtio_net.napi_tx=0"]
    # tunings applied after boot add nothing to the command line
    assert boot_args(qemu("qemu:iosched=none,offloads=off,nic_coalesce_us=5").values) == []


CFG = {"qemu": "qemu-system-x86_64", "accel": "tcg", "machine": "q35", "cpu": "max",
       "vcpus": 1, "mem": "1G", "linux": "/k", "initrd": "/i", "root_image": "/r",
       "root_label": "vbroot", "scratch": "/s", "scratch_format": "raw", "cache": "none",
       "aio": "threads", "disk": "virtio-blk", "nic": "virtio-net", "vhost": False,
       "mac": "52:54:00:00:00:01", "guest_addr": "10.213.0.2/24", "tap": "vbtap",
       "console_log": "/c", "agent_socket": "/a", "qmp_socket": "/q", "pidfile": "/p",
       "name": "n", "domain_type": "qemu", "emulator": "/e", "root_overlay": "/o",
       "boot_args": ["nohz=off", "virtio_net.napi_tx=0"]}


def test_qemu_and_libvirt_boot_the_same_kernel_command_line():
    line = kernel_cmdline(CFG)
    assert line == ("console=ttyS0 quiet root=LABEL=vbroot rw panic=-1 vb.ip=10.213.0.2/24 "
                    "vb.mac=52:54:00:00:00:01 nohz=off virtio_net.napi_tx=0")
    argv = build_argv(CFG)
    assert argv[argv.index("-append") + 1] == line
    assert ET.fromstring(build_domain_xml(CFG)).find("os/cmdline").text == line
    untuned = dict(CFG, boot_args=[])
    assert kernel_cmdline(untuned) == line.rsplit(" nohz", 1)[0]


# -- after boot: guest commands -----------------------------------------------------------
def test_runtime_commands_load_scheduler_modules_and_drive_ethtool():
    env = qemu("qemu:iosched=kyber,offloads=off,nic_coalesce_us=50")
    cmds = runtime_commands(env.values, "enp0s4", "vdb")
    assert cmds["iosched"][:2] == ["sh", "-c"] and cmds["iosched"][-1] == "vdb"
    assert cmds["iosched"][2].startswith("modprobe kyber-iosched && echo kyber > ")
    assert cmds["offloads"] == ["ethtool", "-K", "enp0s4", "tso", "off", "gso", "off",
                                "gro", "off"]
    assert cmds["nic_coalesce_us"] == ["ethtool", "-C", "enp0s4", "rx-usecs", "50",
                                       "tx-usecs", "50"]
    none = runtime_commands(qemu("qemu:iosched=none").values, "eth0", "sda")["iosched"]
    assert "modprobe" not in none[2]          # none and mq-deadline are built in
    assert runtime_commands(qemu("qemu").values, "eth0", "sda") == {}


def test_mismatches_name_the_tuning_and_what_the_guest_reports():
    want = {"clocksource": "kvm-clock", "iosched": "none", "e1000_itr": 3000}
    got = {"clocksource": "tsc", "iosched": "none", "e1000_itr": "auto"}
    out = mismatches(want, got, {"clocksource": "available: tsc hpet acpi_pm"})
    assert out == ["clocksource=kvm-clock did not take: the guest reports tsc "
                   "(available: tsc hpet acpi_pm)",
                   "e1000_itr=3000 did not take: the guest reports no InterruptThrottleRate "
                   "(the driver's default, 3: dynamic conservative)"]
    assert mismatches(want, dict(got, clocksource="kvm-clock", e1000_itr=3000)) == []


# -- read-back parsers on captured output ------------------------------------------------
def test_timer_list_tells_periodic_lowres_from_dynamic_highres(fixture_text):
    periodic = rb.parse_timer_list(fixture(fixture_text, "periodic-lowres.timer_list.txt"))
    assert periodic == {"nohz_mode": [0], "hres_active": [0]}
    assert rb.tick_mode(periodic) == "periodic" and rb.highres_state(periodic) == "off"
    dynamic = rb.parse_timer_list(fixture(fixture_text, "dynamic-highres.timer_list.txt"))
    assert rb.tick_mode(dynamic) == "dynamic" and rb.highres_state(dynamic) == "on"
    assert rb.tick_mode(rb.parse_timer_list("")) is None


def test_linux_6_12_says_nohz_where_6_1_said_nohz_mode(fixture_text):
    # newer kernels print the flag `.nohz` (found by the upgrade study: 6.12 guests recorded
    # no tick, and tick=periodic could not be checked on them)
    dynamic = rb.parse_timer_list(fixture(fixture_text, "linux-6.12-default.timer_list.txt"))
    assert dynamic == {"nohz_mode": [1], "hres_active": [1]}
    assert rb.tick_mode(dynamic) == "dynamic" and rb.highres_state(dynamic) == "on"
    periodic = rb.parse_timer_list(fixture(fixture_text, "linux-6.12-periodic.timer_list.txt"))
    assert rb.tick_mode(periodic) == "periodic"


def test_clocksource_and_pm_timer(fixture_text):
    assert rb.parse_clocksource(fixture(fixture_text, "hpet.current_clocksource.txt")) == "hpet"
    without = fixture(fixture_text, "pmtmr0.available_clocksource.txt").split()
    with_pm = fixture(fixture_text, "default.available_clocksource.txt").split()
    assert "acpi_pm" not in without and "hpet" in without
    assert "acpi_pm" in with_pm


@pytest.mark.parametrize("name,sched", [("default.scheduler.txt", "mq-deadline"),
                                        ("none.scheduler.txt", "none"),
                                        ("bfq.scheduler.txt", "bfq"),
                                        ("kyber.scheduler.txt", "kyber")])
def test_scheduler_is_the_bracketed_entry(fixture_text, name, sched):
    assert rb.parse_scheduler(fixture(fixture_text, name)) == sched


def test_ethtool_features_offloads(fixture_text):
    default = rb.parse_ethtool_features(fixture(fixture_text, "e1000-default.ethtool-k.txt"))
    assert default["tcp-segmentation-offload"] is True
    assert default["tx-checksum-ipv4"] is False            # "off [fixed]"
    assert rb.offloads_state(default) == "on"
    for name in ("e1000-off.ethtool-k.txt", "virtio-off.ethtool-k.txt"):
        assert rb.offloads_state(rb.parse_ethtool_features(fixture(fixture_text, name))) == "off"
    mixed = dict(default, **{"generic-receive-offload": False})
    assert rb.offloads_state(mixed) == "tso=on,gso=on,gro=off"


def test_ethtool_coalesce(fixture_text):
    default = rb.parse_ethtool_coalesce(fixture(fixture_text, "virtio-default.ethtool-c.txt"))
    assert default["rx-usecs"] == 0 and default["tx-frames"] == 1
    assert default["rx-usecs-irq"] is None                 # n/a
    assert rb.coalesce_us(default) == 0
    napi_off = rb.parse_ethtool_coalesce(fixture(fixture_text, "virtio-napi_tx0.ethtool-c.txt"))
    assert napi_off["tx-frames"] == 0
    assert rb.parse_ethtool_coalesce(fixture(fixture_text, "e1000.ethtool-c.txt")) is None
    assert rb.coalesce_us({"rx-usecs": 50, "tx-usecs": 0}) == "rx=50,tx=0"


def test_module_parameters(fixture_text):
    assert rb.parse_module_bool(fixture(fixture_text, "napi_tx-default.param.txt")) == "on"
    assert rb.parse_module_bool(fixture(fixture_text, "napi_tx0.param.txt")) == "off"
    assert rb.parse_e1000_itr(fixture(fixture_text, "itr3000.dmesg.txt")) == 3000
    assert rb.parse_e1000_itr("") is None
    line = "[ 6.4] e1000 0000:00:04.0: Interrupt Throttling Rate (ints/sec) "
    assert rb.parse_e1000_itr(line + "turned off") == 0
    assert rb.parse_e1000_itr(line + "set to dynamic conservative mode") == 3
    assert rb.parse_e1000_itr(line + "set to dynamic mode") == 1


def test_read_all_from_one_script_output(fixture_text):
    def sec(name, fx):
        return f"@@{name}\n" + fixture(fixture_text, fx)
    out = "".join([sec("clocksource", "hpet.current_clocksource.txt"),
                   sec("available_clocksource", "pmtmr0.available_clocksource.txt"),
                   sec("timer_list", "periodic-lowres.timer_list.txt"),
                   sec("scheduler", "none.scheduler.txt"),
                   sec("features", "e1000-off.ethtool-k.txt"),
                   sec("coalesce", "e1000.ethtool-c.txt"),
                   sec("napi_tx", "napi_tx-default.param.txt"),
                   sec("e1000", "itr3000.dmesg.txt")])
    assert rb.read_all(out, "e1000") == {
        "tick": "periodic", "highres": "off", "clocksource": "hpet", "pmtimer": "off",
        "iosched": "none", "offloads": "off", "e1000_itr": 3000}
    # on virtio-net: its coalescing and napi_tx, no e1000 rate
    got = rb.read_all(out.replace(fixture(fixture_text, "e1000.ethtool-c.txt"),
                                  fixture(fixture_text, "virtio-default.ethtool-c.txt")),
                      "virtio-net")
    assert got["nic_coalesce_us"] == 0 and got["napi_tx"] == "on" and "e1000_itr" not in got


def test_every_tuning_has_a_read_back():
    """A tuning added to TUNINGS without a read-back would never be checked."""
    import inspect
    source = inspect.getsource(rb.read_all)
    for name in TUNINGS:
        assert f'"{name}"' in source, name


# -- the study that needs them ---------------------------------------------------------------
def test_zhang_tuning_environments_are_runnable_and_say_what_stands_in():
    from pathlib import Path

    from virtbench.study import design as study
    s = study.load(Path(__file__).resolve().parents[3] / "studies" / "zhang-kvm-io.toml")
    assert study.skipped_environments(s) == []            # none waits for a tuning any more
    untuned = "qemu:disk=ide,nic=e1000,cache=writethrough,backing=raw"
    tuned = {}
    for e in s.environments:
        if e.spec.startswith(untuned + ","):
            tuned[e.spec] = requested(qemu(e.spec).values)
            assert "section 3" in e.note and e.note.count(":") >= 1, e.spec
    assert sorted(k for want in tuned.values() for k in want) == [
        "e1000_itr", "iosched", "pmtimer", "tick"]
    # the paper's before/after figures are against the untuned guest
    for p in s.published:
        if p["environment"] in tuned:
            assert p["versus"] == untuned
