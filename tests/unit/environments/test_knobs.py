"""The qemu kind's knobs (hugepages, iothread, queues, cpu, backing=nbd): their command line,
their checks, the read-back of the QMP replies captured from QEMU 7.2 here
(tests/fixtures/knobs/, made by capture.py there), the huge page arithmetic and the
guardian's share of them."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qemukit import argv_cfg
from virtbench.measure.environments import create
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu import Qemu, hugepages
from virtbench.measure.environments.qemu.booted import knobs
from virtbench.measure.environments.qemu.cmdline.argv import build_argv, net_queues
from virtbench.core.errors import EnvironmentUnusable, VirtbenchError
from virtbench.machinery.host import guardian

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "knobs"


def cfg(**over):
    return argv_cfg(**{"vcpus": 2, **over})


def s(argv):
    return " ".join(map(str, argv))


# -- the command line --------------------------------------------------------------------
def test_defaults_add_no_knob():
    line = s(build_argv(cfg()))
    for word in ("memory-backend", "hugetlb", "iothread", "num-queues", "mq=on", "queues=",
                 "nbd"):
        assert word not in line
    assert "file=/w/scratch.raw,format=raw,if=none,id=scratch,cache=none,aio=threads" in line


def test_hugepages_back_guest_ram_with_a_hugetlb_memfd():
    argv = build_argv(cfg(hugepages=True))
    line = s(argv)
    assert argv[argv.index("-machine") + 1] == "q35,accel=tcg,memory-backend=mem0"
    assert ("-object memory-backend-memfd,id=mem0,size=1G,hugetlb=on,hugetlbsize=2M,"
            "prealloc=on") in line
    assert "-m 1G" in line          # -m and the backend's size agree


def test_iothread_on_virtio_blk_and_virtio_scsi():
    line = s(build_argv(cfg(iothread=True)))
    assert "-object iothread,id=iothread0" in line
    assert "virtio-blk-pci,drive=scratch,serial=vbscratch,id=vbscratchdev,iothread=iothread0" \
        in line
    line = s(build_argv(cfg(iothread=True, disk="virtio-scsi")))
    assert "virtio-scsi-pci,id=scsi0,iothread=iothread0" in line


def test_queues_on_the_disk_and_a_multiqueue_nic():
    line = s(build_argv(cfg(queues=4)))
    assert "virtio-blk-pci,drive=scratch,serial=vbscratch,id=vbscratchdev,num-queues=4" in line
    assert "-netdev tap,id=net0,ifname=tap0,script=no,downscript=no,queues=4,vhost=off" in line
    assert "virtio-net-pci,netdev=net0,mac=52:54:00:01:02:03,id=vbnic,mq=on,vectors=10" in line
    assert net_queues("virtio-net", 4) == 4
    assert net_queues("e1000", 4) == 1 and net_queues("virtio-net", "auto") == 1
    line = s(build_argv(cfg(queues=4, nic="e1000")))
    assert ",queues=4" not in line and "mq=on" not in line and "num-queues=4" in line


def test_nbd_backing_reads_the_socket_not_the_file():
    line = s(build_argv(cfg(nbd_socket="/w/nbd.sock")))
    assert ("-drive driver=raw,file.driver=nbd,file.server.type=unix,"
            "file.server.path=/w/nbd.sock,if=none,id=scratch,cache=none,discard=unmap") in line
    assert "/w/scratch.raw" not in line and "aio=" not in line


# -- the options' checks -----------------------------------------------------------------
def make(text):
    return Qemu(EnvSpec.parse(text))


@pytest.mark.parametrize("spec,needle", [
    ("qemu:iothread=on,disk=ahci", "iothread=on works only with disk=virtio-blk"),
    ("qemu:queues=2", "queues=2 is more than vcpus=1"),
    ("qemu:queues=2,vcpus=2,disk=ide,nic=e1000", "queues=2 needs disk=virtio-blk or "
                                                 "nic=virtio-net"),
    ("qemu:backing=nbd,aio=native", "backing=nbd takes aio=threads"),
    ("qemu:queues=0", "at least 1"),
    ("qemu:hugepages=yes", "on"),
])
def test_bad_knob_combinations_are_one_line(spec, needle):
    with pytest.raises(VirtbenchError) as exc:
        make(spec)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_knobs_in_the_label_and_libvirt_refuses_them():
    env = make("qemu:accel=tcg,vcpus=2,hugepages=on,iothread=on,queues=2,backing=nbd")
    assert env.label == ("qemu-tcg/virtio-blk/virtio-net/vcpus=2/backing=nbd/hugepages=on/"
                         "iothread=on/queues=2")
    assert make("qemu").label == "qemu-auto/virtio-blk/virtio-net"
    for spec in ("libvirt:uri=qemu:///system,hugepages=on",
                 "libvirt:uri=qemu:///system,backing=nbd"):
        with pytest.raises(VirtbenchError):
            create(EnvSpec.parse(spec))


# -- read-back on QEMU's real replies ----------------------------------------------------
def replies(name):
    return json.loads((FIX / f"qmp-{name}.json").read_text())


def test_queries_follow_the_options():
    doc = replies("knobs-on")
    q = knobs.queries(doc["values"], "/machine/unattached/device[0]")
    assert set(q) == set(doc["replies"]) - {"query-cpus-fast"}
    assert q["hugetlb"] == ("qom-get", {"path": "/objects/mem0", "property": "hugetlb"})
    q = knobs.queries({"disk": "ahci", "nic": "e1000", "hugepages": "off"}, None)
    assert set(q) == {"iothreads", "block", "network"}


def test_read_knobs_on():
    got = knobs.read(replies("knobs-on")["replies"])
    assert got == {
        "hugepages": "on", "hugepage_bytes": 2097152, "iothreads": ["iothread0"],
        "iothread": "on", "disk_queues": 2, "nic_queues": 2, "nic_mq": True, "cpu": "max",
        "cpu_model_id": "QEMU TCG CPU version 2.5+",
        "scratch_file": "nbd+unix://?socket=WORKDIR/nbd.sock", "backing_protocol": "nbd+unix"}
    doc = replies("knobs-on")
    values = dict(doc["values"], backing="nbd")
    assert knobs.mismatches(values, got) == []


def test_read_defaults_and_what_did_not_take():
    got = knobs.read(replies("defaults")["replies"])
    assert got["iothread"] == "off" and got["iothreads"] == []
    assert got["nic_queues"] == 1 and got["nic_mq"] is False
    assert got["disk_queues"] == 2          # QEMU 7.2's virtio-blk: one queue per vCPU
    assert got["backing_protocol"] == "file"
    assert got["scratch_file"] == "WORKDIR/scratch.raw"
    assert "hugepages" not in got
    asked = {"disk": "virtio-blk", "nic": "virtio-net", "hugepages": "on", "iothread": "on",
             "queues": 4, "cpu": "host", "backing": "nbd"}
    bad = knobs.mismatches(asked, dict(got, hugepages="off"))
    assert bad == [
        "hugepages=on did not take: guest RAM is not on hugetlb pages",
        "iothread=on did not take: the scratch disk has no iothread (QEMU's iothreads: none)",
        "queues=4 did not take: the scratch disk has 2",
        "queues=4 did not take: the NIC has 1",
        "cpu=host did not take: QEMU's vCPU is max",
        "backing=nbd did not take: the scratch drive is WORKDIR/scratch.raw"]


def test_read_scsi_iothread_and_a_named_cpu_model():
    got = knobs.read(replies("scsi-iothread-e1000")["replies"])
    assert got["iothread"] == "on" and got["cpu"] == "Skylake-Client"
    assert got["cpu_model_id"] == "Intel Core Processor (Skylake)"
    assert "nic_mq" not in got and "disk_queues" not in got
    assert knobs.mismatches({"disk": "virtio-scsi", "nic": "e1000", "iothread": "on",
                             "cpu": "Skylake-Client", "queues": "auto"}, got) == []


def test_a_qmp_error_reads_as_not_taken():
    r = dict(replies("knobs-on")["replies"], hugetlb="error: QMP qom-get: no such object")
    assert knobs.read(r)["hugepages"] == "off"


def test_guest_queue_counts():
    assert knobs.parse_guest_queues("disk 2\nnic 2\n") == {"guest_disk_queues": 2,
                                                           "guest_nic_queues": 2}
    assert knobs.parse_guest_queues("disk 0\nnic 1\n") == {"guest_nic_queues": 1}
    out = subprocess.run(["sh", "-c", knobs.GUEST_SCRIPT, "sh", "", ""], capture_output=True,
                         text=True).stdout
    assert out == "disk 0\nnic 0\n"


# -- huge pages: arithmetic, a fake pool, the guardian -----------------------------------
def test_pages_and_shortfall():
    assert hugepages.pages_for(2**30) == 512 and hugepages.pages_for(2**21 + 1) == 2
    assert hugepages.shortfall(512, 0, 0) == 512
    assert hugepages.shortfall(512, 600, 100) == 12        # 100 free pages are promised
    assert hugepages.shortfall(512, 1000, 0) == 0


def test_parse_meminfo_real():
    info = hugepages.parse_meminfo(Path("/proc/meminfo").read_text())
    assert info["Hugepagesize"] == 2048 and "HugePages_Free" in info


def pool(tmp_path, nr, free, resv=0):
    p = tmp_path / "hugepages-2048kB"
    p.mkdir(exist_ok=True)
    for name, v in (("nr_hugepages", nr), ("free_hugepages", free), ("resv_hugepages", resv)):
        (p / name).write_text(f"{v}\n")
    return p


def test_reserve_adds_only_what_is_missing_and_release_gives_it_back(tmp_path):
    p = pool(tmp_path, nr=100, free=100)
    assert hugepages.reserve(2**30, p) == 412
    assert (p / "nr_hugepages").read_text() == "512"
    hugepages.release(412, p)
    assert (p / "nr_hugepages").read_text() == "100"
    p = pool(tmp_path, nr=600, free=600)
    assert hugepages.reserve(2**30, p) == 0


def test_check_names_a_missing_pool(tmp_path):
    with pytest.raises(EnvironmentUnusable, match="no .* \\(no hugetlbfs\\); use hugepages=off"):
        hugepages.check(2**30, tmp_path / "none")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemAvailable:     524288 kB\n")
    with pytest.raises(EnvironmentUnusable, match="only 512 MiB of memory is available"):
        hugepages.check(2**30, pool(tmp_path, 0, 0), meminfo)


def test_guardian_validates_and_releases_hugepages(tmp_path):
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    work = root / "vbqemu-abc"
    work.mkdir(mode=0o700)
    m = {"workdir": str(work), "hugepages_added": 412, "nbd_pid": 12345}
    ok, warnings = guardian.validate(m, str(root))
    assert ok["hugepages_added"] == 412 and ok["nbd_pid"] == 12345 and not warnings
    for bad in (-1, "412; rm -rf /", True, 2**30):
        ok, warnings = guardian.validate(dict(m, hugepages_added=bad), str(root))
        assert "hugepages_added" not in ok and warnings
    nr = tmp_path / "nr"
    nr.write_text("512\n")
    guardian.release_hugepages(412, str(nr))
    assert nr.read_text() == "100"


def test_guardian_kills_only_our_qemu_nbd(tmp_path):
    work = str(tmp_path)
    # a process that is not qemu-nbd, with the work directory in its command line
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)",
                             f"--socket={work}/nbd.sock"])
    try:
        assert not guardian.is_our_server(proc.pid, work, None)
    finally:
        proc.kill()
        proc.wait()
    if not os.path.exists("/usr/bin/qemu-nbd"):
        pytest.skip("no qemu-nbd")
    img = tmp_path / "s.raw"
    img.write_bytes(b"\0" * 2**20)
    proc = subprocess.Popen(["qemu-nbd", "--format=raw", f"--socket={work}/nbd.sock",
                             "--persistent", str(img)])
    try:
        for _ in range(200):                   # exec'd and listening
            if (tmp_path / "nbd.sock").exists():
                break
            time.sleep(0.05)
        assert guardian.is_our_server(proc.pid, work, None)
        assert not guardian.is_our_server(proc.pid, "/var/tmp/elsewhere", None)
        guardian.kill_ours(proc.pid, work, None, guardian.is_our_server)
        assert proc.poll() is not None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


# -- the NFS server's configuration and command line -------------------------------------
def test_ganesha_config_exports_the_image_directory_only():
    from virtbench.measure.environments.qemu import netdisk
    conf = netdisk.ganesha_config("/var/tmp/virtbench/vbqemu-ab/nfs",
                                  "/var/tmp/virtbench/vbqemu-ab/recovery")
    assert "Path = /var/tmp/virtbench/vbqemu-ab/nfs;" in conf
    assert "RecoveryRoot = /var/tmp/virtbench/vbqemu-ab/recovery;" in conf
    assert "Protocols = 3;" in conf and "Enable_NLM = false;" in conf
    assert "Squash = No_Root_Squash;" in conf and "Name = VFS;" in conf
    for bad in ("relative/dir", "/a;b", "/a}\nEXPORT {", '/a"b'):
        with pytest.raises(ValueError):
            netdisk.ganesha_config(bad, "/r")


def test_nfs_server_argv_and_url():
    from virtbench.measure.environments.qemu import netdisk
    argv = netdisk.nfs_argv(["ip", "netns", "exec", "vb-abcdef"], Path("/w"))
    assert argv[:9] == ["ip", "netns", "exec", "vb-abcdef", "unshare", "--mount",
                        "--propagation", "private", "--"]
    assert argv[-3:] == ["/w/ganesha.conf", "/w/ganesha.log", "/w/ganesha.pid"]
    script = argv[argv.index("-c") + 1]
    assert script.startswith("mount -t tmpfs vbnfs /run") and "exec ganesha.nfsd -F" in script
    assert netdisk.nfs_url("/w/nfs/scratch.raw") == "nfs://127.0.0.1/w/nfs/scratch.raw"
    line = s(build_argv(cfg(nfs_url="nfs://127.0.0.1/w/nfs/scratch.raw")))
    assert ("-drive file=nfs://127.0.0.1/w/nfs/scratch.raw,format=raw,if=none,id=scratch,"
            "cache=none,discard=unmap") in line


def test_guardian_kills_no_group_whose_leader_is_not_our_ganesha(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)",
                             f"-f {tmp_path}/ganesha.conf"], start_new_session=True)
    try:
        time.sleep(0.2)
        guardian.kill_nfs_group(proc.pid, str(tmp_path), None)
        time.sleep(0.2)
        assert proc.poll() is None            # not Ganesha: left alone
    finally:
        proc.kill()
        proc.wait()


def test_hugepages_beyond_memory_is_one_line_exit_2_and_nothing_written(tmp_path):
    if not (hugepages.POOL / "nr_hugepages").exists():
        pytest.skip("no 2 MiB huge page pool here")
    store = tmp_path / "store.db"
    out = subprocess.run(
        [sys.executable, "-m", "virtbench.interface.cli.commands", "run", "--env",
         "qemu:accel=tcg,hugepages=on,mem=100000G", "--bench", "pi", "--quick",
         "--store", f"sqlite:///{store}", "--no-progress"],
        capture_output=True, text=True, timeout=120,
        cwd=str(Path(__file__).resolve().parents[3]))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "hugepages=on needs 51200000 free 2 MiB pages" in lines[0]
    assert not store.exists()


def test_missing_nfs_server_is_named(monkeypatch):
    from virtbench.measure.environments.qemu import netdisk
    monkeypatch.setattr(netdisk.shutil, "which", lambda name: None)
    monkeypatch.setattr(netdisk, "NFS_BLOCK_MODULE", Path("/nonexistent/block-nfs.so"))
    with pytest.raises(EnvironmentUnusable, match="backing=nfs needs ganesha.nfsd, rpcbind, "
                                                  "unshare, QEMU's nfs block driver; install "
                                                  "them with: apt-get install nfs-ganesha "
                                                  "nfs-ganesha-vfs rpcbind qemu-block-extra$"):
        netdisk.check_nfs()
    with pytest.raises(EnvironmentUnusable, match="apt-get install qemu-utils"):
        netdisk.check_nbd()


def test_host_thp_mode(tmp_path):
    f = tmp_path / "enabled"
    f.write_text("always [madvise] never\n")
    assert hugepages.host_thp(f) == "madvise"
    assert hugepages.host_thp(tmp_path / "none") is None
    real = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if real.exists():
        assert hugepages.host_thp(real) in ("always", "madvise", "never")
