"""The `libvirt` kind without a daemon: its spec, its domain XML (checked by libvirt's own
schema), its one-line errors, and an existing domain's life cycle on libvirt's test driver
(one connection per environment: the driver's state lives in the connection), measured
over SSH through a private sshd on 127.0.0.1 standing for the domain's."""
import shutil
import subprocess
import xml.etree.ElementTree as ET
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.measure.environments import create
from virtbench.measure.environments.libvirt.api import describe_error, is_local_qemu, platform_of
from virtbench.measure.environments.libvirt.domain_xml import build_domain_xml
from virtbench.measure.environments.libvirt.existing import first_ipv4
from virtbench.core.errors import EnvironmentUnusable, VirtbenchError
libvirt = pytest.importorskip("libvirt")


def cfg(**over):
    base = {"name": "virtbench-vb-abc123", "domain_type": "qemu", "emulator": "/usr/bin/qemu",
            "machine": "q35", "accel": "tcg", "cpu": "max", "vcpus": 2, "mem": "1G",
            "linux": "/k/vmlinuz", "initrd": "/k/initrd", "root_label": "vbroot",
            "root_overlay": "/w/root.qcow2", "scratch": "/w/scratch.raw",
            "scratch_format": "raw", "scratch_block": False, "cache": "none", "aio": "threads",
            "disk": "virtio-blk", "nic": "virtio-net", "vhost": False,
            "mac": "52:54:00:01:02:03", "guest_addr": "10.213.0.2/24", "tap": "vbtabc123",
            "console_log": "/w/console.log", "agent_socket": "/w/agent.sock",
            "agent_transport": "virtio-serial"}
    base.update(over)
    return base


# -- the domain XML -------------------------------------------------------------------------
@pytest.mark.parametrize("disk,bus,dev", [("virtio-blk", "virtio", "vdb"),
                                          ("virtio-scsi", "scsi", "sda"),
                                          ("ahci", "sata", "sda"), ("ide", "ide", "hda")])
def test_the_scratch_disk_sits_on_the_bus_under_test(disk, bus, dev):
    root = ET.fromstring(build_domain_xml(cfg(disk=disk, machine="pc" if disk == "ide" else "q35")))
    scratch = [d for d in root.iter("disk") if d.findtext("serial") == "vbscratch"]
    assert len(scratch) == 1
    assert scratch[0].find("target").attrib == {"dev": dev, "bus": bus}
    assert scratch[0].find("driver").get("cache") == "none"
    rootdisk = [d for d in root.iter("disk") if d.findtext("serial") == "vbroot"][0]
    assert rootdisk.find("target").get("bus") == "virtio"     # only the scratch bus varies
    scsi = [c for c in root.iter("controller") if c.get("type") == "scsi"]
    assert bool(scsi) == (disk == "virtio-scsi")


@pytest.mark.skipif(not shutil.which("virt-xml-validate"), reason="libvirt-clients missing")
@pytest.mark.parametrize("over", [{}, {"disk": "ide", "machine": "pc", "nic": "e1000"},
                                  {"disk": "virtio-scsi", "nic": "rtl8139", "cpu": "Skylake-Client"},
                                  {"disk": "ahci", "scratch_block": True, "scratch": "/dev/loop7",
                                   "agent_transport": "serial", "vhost": True,
                                   "domain_type": "kvm", "accel": "kvm", "cpu": "host"}])
def test_every_combination_passes_libvirts_own_schema(over, tmp_path):
    path = tmp_path / "domain.xml"
    path.write_text(build_domain_xml(cfg(**over)))
    proc = subprocess.run(["virt-xml-validate", str(path), "domain"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_user_values_are_escaped_not_pasted():
    text = build_domain_xml(cfg(linux="/k/a&b<c>'\"", name="x'><evil/>"))
    root = ET.fromstring(text)
    assert root.findtext("os/kernel") == "/k/a&b<c>'\""
    assert root.findtext("name") == "x'><evil/>"
    assert root.find(".//evil") is None


def test_the_guest_is_the_qemu_kinds_guest():
    root = ET.fromstring(build_domain_xml(cfg()))
    assert "root=LABEL=vbroot" in root.findtext("os/cmdline")
    assert "vb.ip=10.213.0.2/24" in root.findtext("os/cmdline")
    assert {e.tag: e.text for e in root if e.tag.startswith("on_")} == {
        "on_poweroff": "destroy", "on_reboot": "destroy", "on_crash": "destroy"}
    channel = root.find("devices/channel")
    assert channel.find("target").get("name") == "org.virtbench.agent"
    iface = root.find("devices/interface")
    assert iface.find("target").attrib == {"dev": "vbtabc123", "managed": "no"}
    assert iface.find("driver").get("name") == "qemu"
    assert root.find("features/acpi") is not None          # else libvirt passes -no-acpi
    assert root.find("cpu").get("mode") == "maximum"         # -cpu max under TCG


# -- pure helpers on real libvirt output ----------------------------------------------------
def test_platform_from_driver_and_domain_xml():
    conn = libvirt.open("test:///default")
    try:
        xml = conn.lookupByName("test").XMLDesc(0)          # real output of the test driver
        assert platform_of(conn.getType(), xml) == "test"
    finally:
        conn.close()
    kvm = "<domain type='kvm'><os><type>hvm</type></os></domain>"
    assert platform_of("QEMU", kvm) == "kvm"
    assert platform_of("QEMU", kvm.replace("'kvm'", "'qemu'")) == "qemu"
    # Xen: libvirt's formatdomain documentation, "Host bootloader" (PV: <type>linux</type>)
    pv = "<domain type='xen'><os><type>linux</type></os></domain>"
    assert platform_of("Xen", pv) == "xen-pv"
    assert platform_of("Xen", pv.replace("linux", "hvm")) == "xen-hvm"
    assert platform_of("Xen", pv.replace("linux", "xenpvh")) == "xen-pvh"
    assert platform_of("VBOX", kvm) == "virtualbox"
    assert platform_of("ESX", kvm) == "vmware"


def test_first_ipv4_from_libvirts_answer():
    conn = libvirt.open("test:///default")
    try:
        dom = conn.lookupByName("test")
        answer = dom.interfaceAddresses(libvirt.VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_LEASE, 0)
    finally:
        conn.close()
    assert first_ipv4(answer) == "192.168.122.3"
    assert first_ipv4({"lo": {"addrs": [{"type": 0, "addr": "127.0.0.1"}]},
                       "eth0": {"addrs": [{"type": 1, "addr": "fe80::1"}]}}) is None
    assert first_ipv4({}) is None


# errors as libvirt 9.0's client printed them here (captured with the Python binding)
@pytest.mark.parametrize("uri,error,says", [
    ("xen:///system", "no connection driver available for xen:///system",
     "apt-get install libvirt-daemon-driver-xen"),
    ("vbox:///session", "Failed to connect socket to '/var/run/libvirt/libvirt-sock': "
                        "No such file or directory", "start libvirtd"),
    ("esx://127.0.0.1/?no_verify=1", "invalid argument: Missing authentication credentials",
     "auth.conf"),
])
def test_libvirt_errors_become_one_line_with_the_fix(uri, error, says):
    line = describe_error(uri, Exception(error))
    assert says in line and uri in line and "\n" not in line


def test_domains_virtbench_defines_are_local_qemu_ones():
    assert is_local_qemu("qemu:///system")
    assert is_local_qemu("qemu:///system?socket=/tmp/x/libvirt-sock")
    assert not is_local_qemu("qemu+ssh://host/system")
    assert not is_local_qemu("xen:///system")


# -- the spec ----------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,says", [
    ("libvirt:domain=web1", "uri= is required"),
    ("libvirt:uri=xen:///system", "local QEMU URI"),
    ("libvirt:uri=test:///default,domain=test,disk=ide", "disk= belongs to a domain virtbench"),
    ("libvirt:uri=qemu:///system,host=10.0.0.2", "host= needs domain=NAME"),
    ("libvirt:uri=qemu:///system,disk=nvme", "disk=nvme is not valid; use one of: virtio-blk"),
    ("libvirt:uri=qemu:///system,colour=red", "unknown option colour"),
])
def test_bad_specs_are_one_line(spec, says):
    with pytest.raises(VirtbenchError, match=says):
        create(spec)


def test_the_kinds_factory_picks_the_form():
    from virtbench.measure.environments import KINDS, Environment
    from virtbench.measure.environments.libvirt import DefinedDomain, ExistingDomain
    assert type(create("libvirt:uri=test:///default,domain=web1")) is ExistingDomain
    assert type(create("libvirt:uri=qemu:///system,accel=tcg")) is DefinedDomain
    entry = KINDS["libvirt"]        # the registry's entry is no environment: nothing makes one
    assert not isinstance(entry, type) or not issubclass(entry, Environment)
    assert "uri= (required); with domain=NAME: " in entry.options_text()


def test_an_unknown_domain_or_driver_is_one_line_before_anything_runs(capsys, store_url):
    env = create("libvirt:uri=test:///default,domain=nope")
    with pytest.raises(EnvironmentUnusable, match="no domain nope at test:///default.*virsh"):
        env.resolve()
    code = cli.main(["run", "--env", "libvirt:uri=test:///default,domain=nope", "--bench", "pi",
                     "--trials", "1", "--quick", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "no domain nope" in err
    assert not (store_url[len("sqlite:///"):] and
                __import__("os").path.exists(store_url[len("sqlite:///"):]))


def test_an_existing_domain_offers_what_ssh_offers_and_pausing():
    env = create("libvirt:uri=test:///default,domain=test,host=192.0.2.5")
    caps = env.capabilities()
    assert caps.pause and caps.scratch
    assert not caps.net_path and "peer=" in caps.net_path.reason
    with_peer = create("libvirt:uri=test:///default,domain=test,host=192.0.2.5,peer=192.0.2.1")
    assert with_peer.capabilities().net_path
    defined = create("libvirt:uri=qemu:///system,accel=tcg")
    assert defined.capabilities().ssh_target and defined.capabilities().pair_end


class SuspendingDom:
    def __init__(self, fail: bool = False):
        self.calls, self.fail = [], fail

    def suspend(self):
        self.calls.append("suspend")
        if self.fail:
            raise RuntimeError("suspend failed")

    def resume(self):
        self.calls.append("resume")


def test_both_kinds_of_domain_pause_and_resume_one_way(tmp_path):
    from virtbench.measure.environments.libvirt.domain import DomainVmm
    for holder in (create("libvirt:uri=test:///default,domain=test,host=192.0.2.5"),
                   DomainVmm("d", tmp_path, "qemu:///system")):
        holder.pause()
        holder.resume()                 # no domain yet: nothing to suspend or resume
        assert holder.paused is False
        holder.dom = SuspendingDom()
        holder.pause()
        assert holder.paused and holder.dom.calls == ["suspend"]
        holder.resume()
        assert not holder.paused and holder.dom.calls == ["suspend", "resume"]
        holder.dom = SuspendingDom(fail=True)
        with pytest.raises(RuntimeError):
            holder.pause()
        assert holder.paused            # a failed suspend may still have taken: resume after


def test_a_defined_domain_that_ended_says_how_and_the_guests_panic(tmp_path):
    class Dom:
        def state(self):
            return [libvirt.VIR_DOMAIN_SHUTOFF, libvirt.VIR_DOMAIN_SHUTOFF_CRASHED]

    from virtbench.measure.environments.libvirt.domain import DomainVmm
    env = create("libvirt:uri=qemu:///system,accel=tcg")
    env.vmm = DomainVmm(env.label, tmp_path, "qemu:///system")     # as launch() makes it
    env.vmm.dom = Dom()
    assert env.lost_reason() == "the domain is shut off (crashed)"
    (tmp_path / "console.log").write_text("[    1.0] ok\n[    2.5] Kernel panic - not syncing: Attempted "
                               "to kill init! exitcode=0x00000009\n")
    assert env.lost_reason() == ("the domain is shut off (crashed); guest Kernel panic - not "
                                 "syncing: Attempted to kill init! exitcode=0x00000009")
