"""`qemu`: a Debian guest under QEMU, driven directly (full control of -device and -drive).

    qemu[:accel=auto|kvm|tcg,vcpus=1,mem=1G,machine=auto|q35|pc,cpu=auto,
         disk=virtio-blk|virtio-scsi|ahci|ide|nvme,cache=none|...,aio=threads|native|io_uring,
         backing=raw|qcow2|device,nic=virtio-net|e1000|rtl8139,vhost=auto|on|off]

The root disk is the cached image from `virtbench.guest.image` opened with snapshot=on (its
overlay lands in the environment's work directory through TMPDIR); the benchmark's scratch disk
is a fresh image per environment on the bus under test, with serial=vbscratch, found in the
guest under /dev/disk/by-id (`scratch_device()`). The agent talks over a virtio-serial port
bound to a unix-socket chardev; QMP does pause/resume/quit. The NIC's tap lives in a network
namespace `vb-<id>` (virtbench.netns) whose host-side address is the peer for network
benchmarks; QEMU runs inside that namespace.

Cleanup: stop() removes everything; a guardian process (virtbench/guest/guardian.py) does the
same if the virtbench process dies without stop() (SIGKILL, crash); QEMU also gets
PR_SET_PDEATHSIG; and start() sweeps namespaces and work directories left by dead owners.
"""
from __future__ import annotations

import atexit
import ctypes
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import fingerprint, kernels, netns
from ..errors import AgentError, EnvironmentUnusable, VirtbenchError
from ..guest import guardian
from ..guest import image as guest_image
from ..transport import SocketAgent
from .base import Environment, NetPath, Option, SshTarget, Usability

QEMU = "qemu-system-x86_64"
AGENT_PORT = "org.virtbench.agent"
GUEST_KERNEL_DIR = "/opt/virtbench/kernels"
SCRATCH_SERIAL = "vbscratch"
SCRATCH_MOUNT = "/mnt/vbscratch"
KVM_PROBE_TIMEOUT = 20.0
WORK_ROOT = Path(os.environ.get("VIRTBENCH_TMP", "/var/tmp")) / "virtbench"

DISKS = ("virtio-blk", "virtio-scsi", "ahci", "ide", "nvme")
NICS = ("virtio-net", "e1000", "rtl8139")
CACHES = ("none", "writeback", "writethrough", "directsync", "unsafe")

# the driver the guest binds for each model (any one of the listed names is a match)
DISK_DRIVERS = {"virtio-blk": ("virtio_blk",), "virtio-scsi": ("virtio_scsi",),
                "ahci": ("ahci",), "ide": ("ata_piix",), "nvme": ("nvme",)}
NIC_DRIVERS = {"virtio-net": ("virtio_net",), "e1000": ("e1000",),
               "rtl8139": ("8139cp", "8139too")}


class GuestBootError(EnvironmentUnusable):
    """The guest never answered; `console_log` is the kept serial console."""

    def __init__(self, message: str, console_log: Path | None = None):
        super().__init__(message)
        self.console_log = console_log


def _size(text: str) -> str:
    if not re.fullmatch(r"\d+[MGmg]?", text):
        raise ValueError("write a size such as 512M or 2G")
    return text.upper()


def size_bytes(size: str) -> int:
    """A size as _size() keeps it (512M, 2G, or plain MiB as QEMU's -m reads it) in bytes."""
    unit = {"M": 2**20, "G": 2**30}.get(size[-1:].upper())
    return int(size[:-1]) * unit if unit else int(size) * 2**20


def _vcpus(text: str) -> int:
    n = int(text)
    if n < 1:
        raise ValueError("at least 1")
    return n


def _timeout(text: str) -> float:
    v = float(text)
    if v <= 0:
        raise ValueError("must be positive")
    return v


# -- QEMU facts ------------------------------------------------------------------------------
def parse_version(text: str) -> str | None:
    """`qemu-system-x86_64 -version` output -> "7.2.22" (None if it is not QEMU's)."""
    m = re.search(r"QEMU emulator version (\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def qemu_binary() -> str | None:
    return shutil.which(QEMU)


_version_cache: dict[str, tuple[str, str]] = {}


def qemu_version() -> tuple[str, str]:
    """(version, first line of -version); VirtbenchError if QEMU is missing or broken."""
    binary = qemu_binary()
    if binary is None:
        raise EnvironmentUnusable(f"{QEMU} not found; install it with: apt-get install qemu-system-x86")
    if binary not in _version_cache:
        try:
            proc = subprocess.run([binary, "-version"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EnvironmentUnusable(f"{QEMU} -version failed: {exc}") from exc
        version = parse_version(proc.stdout)
        if proc.returncode != 0 or version is None:
            last = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
            raise EnvironmentUnusable(f"{QEMU} -version failed: {last}")
        _version_cache[binary] = (version, proc.stdout.strip().splitlines()[0])
    return _version_cache[binary]


def guest_kernel_release(uname_srm: str | None) -> str | None:
    """The fingerprint's `uname -srm` ("Linux 6.1.0-28-amd64 x86_64") -> "6.1.0-28-amd64"."""
    parts = (uname_srm or "").split()
    return parts[1] if len(parts) >= 2 else None


def describe_loss(returncode: int | None, console: str) -> str:
    """Pure: why a guest went away, from QEMU's exit status and the serial console."""
    if returncode is None:
        how = "QEMU is still running"
    elif returncode < 0:
        how = f"QEMU was killed (signal {-returncode})"
    else:
        how = f"QEMU exited (status {returncode})"
    panic = [line.strip() for line in console.splitlines() if "Kernel panic" in line]
    return f"{how}; guest {panic[-1][panic[-1].index('Kernel panic'):]}" if panic else how


# -- process hygiene -------------------------------------------------------------------------
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


_live: set["Qemu"] = set()
_live_lock = threading.Lock()


def _stop_all() -> None:
    for env in list(_live):
        try:
            env.stop()
        except Exception:
            pass


atexit.register(_stop_all)


def _on_signal(signum, frame):  # SIGTERM/SIGHUP: clean up, then die as the signal would
    _stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_signal_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _on_signal)


def sweep_stale() -> None:
    """Remove what dead virtbench processes left: vb-* namespaces and vbqemu-* work dirs."""
    netns.sweep_stale()
    if not WORK_ROOT.is_dir():
        return
    for d in WORK_ROOT.glob("vbqemu-*"):
        try:
            manifest = json.loads((d / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {"workdir": str(d)}
            if time.time() - d.stat().st_mtime < 60:
                continue  # being set up right now by someone
        if not netns.owner_alive(manifest.get("owner", "")):
            manifest["workdir"] = str(d)
            guardian.cleanup(manifest)


def _is_qemu_alive(pid: int) -> bool:
    """Is `pid` a running (not zombie) QEMU process?"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z" and b"qemu" in cmdline


# -- KVM probe -------------------------------------------------------------------------------
@dataclass
class KvmProbe:
    usable: bool
    reason: str
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


_kvm_probe: KvmProbe | None = None


def _probe_kernel(build: bool = False) -> Path | None:
    """The kernel the probe boots: the guest image's (built first when `build` and it is not
    cached yet: a fresh host's first run must probe with a kernel present), else the host's."""
    info = guest_image.cached()
    if info is None and build:
        try:
            info = guest_image.build(progress=lambda msg: print(
                f"  guest image: {msg}", file=sys.stderr, flush=True))
        except VirtbenchError:
            info = None          # the host's kernel may still answer the question
    if info is not None and info.kernel.exists():
        return info.kernel
    for p in sorted(Path("/boot").glob("vmlinuz-*"), reverse=True):
        if os.access(p, os.R_OK):
            return p
    return None


def _probe_key() -> str:
    """What the probe's answer depends on: the host kernel (and its KVM module) and QEMU."""
    version = qemu_version()[0]
    try:
        kvm = os.stat("/dev/kvm")
        node = f"{os.major(kvm.st_rdev)}:{os.minor(kvm.st_rdev)}"
    except OSError:
        node = "none"
    return f"{os.uname().release}|{os.uname().version}|qemu {version}|/dev/kvm {node}"


def kvm_probe(force: bool = False, timeout: float = KVM_PROBE_TIMEOUT,
              build: bool = False) -> KvmProbe:
    """Does a real guest kernel boot under -accel kvm here? Cached per process and on disk.
    `build`: build the guest image first when no kernel is at hand (what a run does; listing
    environment kinds does not)."""
    global _kvm_probe
    if _kvm_probe is not None and not force:
        return _kvm_probe
    if not os.path.exists("/dev/kvm"):
        _kvm_probe = KvmProbe(False, "kvm probe: /dev/kvm does not exist")
        return _kvm_probe
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        _kvm_probe = KvmProbe(False, "kvm probe: /dev/kvm is not accessible to this user")
        return _kvm_probe
    kernel = _probe_kernel(build=build)
    if kernel is None:
        return KvmProbe(False, "kvm probe: no kernel to boot (build the guest image first)")
    cache_file = kernels.cache_dir() / "kvm-probe.json"
    key = _probe_key()
    if not force:
        try:
            saved = json.loads(cache_file.read_text())
            if saved.get("key") == key:
                _kvm_probe = KvmProbe(**saved["result"])
                return _kvm_probe
        except (OSError, ValueError, TypeError, KeyError):
            pass
    _kvm_probe = _run_kvm_probe(kernel, timeout)
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps({"key": key, "result": _kvm_probe.to_json()}))
    except OSError:
        pass
    return _kvm_probe


def _run_kvm_probe(kernel: Path, timeout: float) -> KvmProbe:
    """Boot the kernel with no root: it panics at once, -no-reboot ends QEMU. Did it get there?"""
    with tempfile.TemporaryDirectory(prefix="vbkvmprobe-") as tmp:
        log = Path(tmp, "console.log")
        argv = [qemu_binary(), "-accel", "kvm", "-machine", "q35", "-cpu", "host", "-m", "256M",
                "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none",
                "-no-reboot", "-serial", f"file:{log}", "-kernel", str(kernel),
                "-append", "console=ttyS0 panic=-1 loglevel=4"]
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=_die_with_parent, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return KvmProbe(False, f"kvm probe: guest did not boot in {timeout:.0f} s",
                            time.monotonic() - t0)
        seconds = time.monotonic() - t0
        console = log.read_text(errors="replace") if log.exists() else ""
        if "Kernel panic" in console or "VFS:" in console:
            return KvmProbe(True, f"kvm probe: a guest kernel booted in {seconds:.1f} s", seconds)
        last = (err.decode(errors="replace").strip() or "no output").splitlines()[-1]
        return KvmProbe(False, f"kvm probe: QEMU failed: {last}", seconds)


# -- QMP ---------------------------------------------------------------------------------------
class Qmp:
    """A minimal QMP client: one command at a time, events skipped."""

    def __init__(self, path: Path, timeout: float = 10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.file = self.sock.makefile("rwb", buffering=0)
        self._read()  # greeting
        self.command("qmp_capabilities")

    def _read(self) -> dict:
        line = self.file.readline()
        if not line:
            raise AgentError("QMP connection closed")
        return json.loads(line)

    def command(self, name: str, **args) -> dict:
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.file.write((json.dumps(msg) + "\n").encode())
        while True:
            reply = self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise AgentError(f"QMP {name}: {reply['error'].get('desc')}")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


# -- the command line (pure) --------------------------------------------------------------------
def resolve_machine(disk: str, machine: str) -> str:
    """The machine type: IDE needs pc (on q35 `if=ide` would silently be AHCI)."""
    if machine == "auto":
        return "pc" if disk == "ide" else "q35"
    if disk == "ide" and machine != "pc":
        raise VirtbenchError("environment qemu: disk=ide needs machine=pc (q35 has no IDE "
                             "controller); drop machine= or write machine=pc")
    return machine


def check_combination(cache: str, aio: str) -> None:
    if aio == "native" and cache not in ("none", "directsync"):
        raise VirtbenchError(f"environment qemu: aio=native needs cache=none or cache=directsync "
                             f"(O_DIRECT), not cache={cache}")


def disk_devices(disk: str, drive: str, serial: str) -> list[str]:
    if disk == "virtio-blk":
        return ["-device", f"virtio-blk-pci,drive={drive},serial={serial}"]
    if disk == "virtio-scsi":
        return ["-device", "virtio-scsi-pci,id=scsi0",
                "-device", f"scsi-hd,drive={drive},bus=scsi0.0,serial={serial}"]
    if disk == "ahci":
        return ["-device", "ahci,id=ahci0",
                "-device", f"ide-hd,drive={drive},bus=ahci0.0,serial={serial}"]
    if disk == "ide":
        return ["-device", f"ide-hd,drive={drive},bus=ide.0,serial={serial}"]
    if disk == "nvme":
        return ["-device", f"nvme,drive={drive},serial={serial}"]
    raise VirtbenchError(f"unknown disk model {disk}")


NIC_DEVICE = {"virtio-net": "virtio-net-pci", "e1000": "e1000", "rtl8139": "rtl8139"}


def build_argv(cfg: dict) -> list[str]:
    """The QEMU command line for one guest.

    cfg keys: qemu, accel, machine, cpu, vcpus, mem, kernel, initrd, root_image, root_label,
    scratch, scratch_format, cache, aio, disk, nic, vhost (bool), mac, guest_addr, tap (or None
    for no NIC), console_log, agent_socket, agent_transport, qmp_socket, pidfile, name.
    """
    append = (f"console=ttyS0 quiet root=LABEL={cfg['root_label']} rw panic=-1 "
              f"vb.ip={cfg['guest_addr']} vb.mac={cfg['mac']}")
    argv = [cfg["qemu"], "-name", cfg["name"], "-nodefaults", "-no-user-config",
            "-machine", f"{cfg['machine']},accel={cfg['accel']}",
            "-cpu", cfg["cpu"], "-smp", str(cfg["vcpus"]), "-m", cfg["mem"],
            "-display", "none", "-no-reboot",
            "-kernel", str(cfg["kernel"]), "-initrd", str(cfg["initrd"]), "-append", append,
            "-serial", f"file:{cfg['console_log']}",
            "-pidfile", str(cfg["pidfile"]),
            "-qmp", f"unix:{cfg['qmp_socket']},server=on,wait=off"]
    agent_chardev = f"socket,id=agent0,path={cfg['agent_socket']},server=on,wait=off"
    if cfg.get("agent_transport", "virtio-serial") == "virtio-serial":
        argv += ["-chardev", agent_chardev,
                 "-device", "virtio-serial-pci,id=vser0",
                 "-device", f"virtserialport,bus=vser0.0,chardev=agent0,name={AGENT_PORT}"]
    else:  # the second serial port (ttyS1): works with no virtio at all
        argv += ["-chardev", agent_chardev, "-serial", "chardev:agent0"]
    # the root disk: the cached image, never written (snapshot=on), always virtio-blk so that
    # only the scratch disk's bus changes between environments
    argv += ["-drive", f"file={cfg['root_image']},format=raw,if=none,id=root,snapshot=on,"
                       f"cache=unsafe",
             "-device", "virtio-blk-pci,drive=root,serial=vbroot"]
    argv += ["-drive", f"file={cfg['scratch']},format={cfg['scratch_format']},if=none,"
                       f"id=scratch,cache={cfg['cache']},aio={cfg['aio']},discard=unmap"]
    argv += disk_devices(cfg["disk"], "scratch", SCRATCH_SERIAL)
    if cfg.get("tap"):
        netdev = f"tap,id=net0,ifname={cfg['tap']},script=no,downscript=no"
        if cfg["nic"] == "virtio-net":
            netdev += ",vhost=" + ("on" if cfg.get("vhost") else "off")
        argv += ["-netdev", netdev,
                 "-device", f"{NIC_DEVICE[cfg['nic']]},netdev=net0,mac={cfg['mac']}"]
    return argv


# -- the environment -------------------------------------------------------------------------
class Qemu(Environment):
    kind = "qemu"
    summary = "a Debian guest under QEMU (KVM when a probe boot works, TCG otherwise)"
    options = {
        "accel": Option("auto", choices=("auto", "kvm", "tcg"),
                        help="accelerator; auto = kvm when a probe boot works, else tcg"),
        "vcpus": Option(1, convert=_vcpus, help="virtual CPUs"),
        "mem": Option("1G", convert=_size, help="guest memory, e.g. 1G or 512M"),
        "machine": Option("auto", choices=("auto", "q35", "pc"),
                          help="machine type; auto = q35, or pc when disk=ide"),
        "cpu": Option("auto", help="CPU model; auto = host under kvm, max under tcg"),
        "disk": Option("virtio-blk", choices=DISKS, help="bus of the scratch disk"),
        "cache": Option("none", choices=CACHES, help="host cache mode of the scratch disk"),
        "aio": Option("threads", choices=("threads", "native", "io_uring"),
                      help="host I/O engine of the scratch disk"),
        "backing": Option("raw", choices=("raw", "qcow2", "device"),
                          help="scratch disk backing: raw file, qcow2 file, or a block device "
                               "(a loop device standing in for one)"),
        "nic": Option("virtio-net", choices=NICS, help="NIC model"),
        "vhost": Option("auto", choices=("auto", "on", "off"),
                        help="vhost-net for virtio-net; auto = on when /dev/vhost-net exists"),
        "scratch": Option("4G", convert=_size, in_label=False, help="scratch disk size"),
        "agent": Option("virtio-serial", choices=("virtio-serial", "serial"), in_label=False,
                        help="agent transport: a virtio-serial port, or the 2nd serial port"),
        "boot_timeout": Option(180.0, convert=_timeout, in_label=False,
                               help="seconds to wait for the guest agent"),
    }

    def __init__(self, spec):
        super().__init__(spec)
        self.accel: str | None = None
        self.accel_reason = ""
        self.machine = resolve_machine(self.values["disk"], self.values["machine"])
        check_combination(self.values["cache"], self.values["aio"])
        self.cpu = self.values["cpu"]
        self.vhost = False
        self.image: guest_image.ImageInfo | None = None
        self.workdir: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.ns: netns.NetNS | None = None
        self.qmp: Qmp | None = None
        self.console_log: Path | None = None
        self.kept_console_log: Path | None = None
        self._guardian: subprocess.Popen | None = None
        self._manifest: dict = {}
        self._scratch_dev: str | None = None
        self._scratch_dir: str | None = None
        self._net: NetPath | None = None
        self._topology = None
        self._kernel_names: list[str] = []
        self.guest_uptime_at_ready: float | None = None
        self.stage_s: float | None = None
        self.mac = "52:54:00:%02x:%02x:%02x" % tuple(secrets.token_bytes(3))
        self.paused = False
        self._vcpu_tids: list[int] | None = None

    # -- identity ------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """qemu-<accel>/<disk>/<nic>, then every other option that differs from its default."""
        accel = self.accel or self.values["accel"]
        parts = [f"qemu-{accel}", self.values["disk"], self.values["nic"]]
        for name, opt in self.options.items():
            if name in ("accel", "disk", "nic") or not opt.in_label:
                continue
            value = self.values[name]
            if value == opt.default:
                continue
            if name == "machine" and value == resolve_machine(self.values["disk"], "auto"):
                continue
            parts.append(f"{name}={value}")
        return "/".join(parts)

    @classmethod
    def probe(cls) -> Usability:
        try:
            version, line = qemu_version()
        except VirtbenchError as exc:
            return Usability(False, str(exc))
        kvm = kvm_probe()
        details = {"qemu_version": version, "qemu": line, "kvm": kvm.usable,
                   "kvm_reason": kvm.reason,
                   "image_cached": guest_image.cached() is not None}
        return Usability(True, "" if kvm.usable else "TCG only: " + kvm.reason, details)

    def resolve(self) -> None:
        if self.accel is not None:
            return
        qemu_version()
        wanted = self.values["accel"]
        if wanted == "tcg":
            self.accel, self.accel_reason = "tcg", "requested (accel=tcg)"
        else:
            kvm = kvm_probe(build=True)     # the kernel first, then the probe
            if kvm.usable:
                self.accel = "kvm"
                self.accel_reason = ("requested (accel=kvm); " if wanted == "kvm" else "") + kvm.reason
            elif wanted == "kvm":
                raise EnvironmentUnusable(f"environment {self.spec}: accel=kvm is not usable "
                                          f"here ({kvm.reason}); use accel=tcg or accel=auto")
            else:
                self.accel, self.accel_reason = "tcg", kvm.reason
                self.notes.append(f"TCG, not KVM: {kvm.reason}")
        if self.cpu == "auto":
            self.cpu = "host" if self.accel == "kvm" else "max"
        vh = self.values["vhost"]
        has_vhost = os.path.exists("/dev/vhost-net")
        if self.values["nic"] != "virtio-net":
            if vh == "on":
                raise VirtbenchError("environment qemu: vhost=on works only with nic=virtio-net")
            self.vhost = False
        elif vh == "on" and not has_vhost:
            raise EnvironmentUnusable("environment qemu: vhost=on but /dev/vhost-net does not "
                                      "exist; load it with: modprobe vhost_net")
        else:
            self.vhost = vh == "on" or (vh == "auto" and has_vhost)

    # -- life cycle ----------------------------------------------------------------------
    def _save_manifest(self) -> None:
        if self.workdir is not None:
            tmp = self.workdir / "manifest.json.part"
            tmp.write_text(json.dumps(self._manifest))
            os.replace(tmp, self.workdir / "manifest.json")

    def _start_guardian(self) -> None:
        r, w = os.pipe()
        try:
            self._guardian = subprocess.Popen(
                [sys.executable, guardian.__file__, str(self.workdir / "manifest.json")],
                stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        finally:
            os.close(r)
        os.set_inheritable(w, False)
        self._guardian_fd = w

    def _make_scratch(self) -> tuple[str, str]:
        size = self.values["scratch"]
        backing = self.values["backing"]
        if backing == "qcow2":
            path = self.workdir / "scratch.qcow2"
            proc = subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(path), size],
                                  capture_output=True, text=True, timeout=60)
            if proc.returncode != 0:
                raise EnvironmentUnusable(f"qemu-img create failed: {proc.stderr.strip()}")
            return str(path), "qcow2"
        path = self.workdir / "scratch.raw"
        subprocess.run(["truncate", "-s", size, str(path)], check=True, timeout=30)
        if backing == "raw":
            return str(path), "raw"
        proc = subprocess.run(["losetup", "--find", "--show", str(path)],
                              capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            raise EnvironmentUnusable(f"backing=device: losetup failed: {proc.stderr.strip()}")
        loop = proc.stdout.strip()
        self._manifest.setdefault("loops", []).append(loop)
        self._save_manifest()
        return loop, "raw"

    def start(self) -> None:
        self.resolve()
        _install_signal_handlers()
        sweep_stale()
        self.image = guest_image.build(  # minutes the first time: say what it is doing
            progress=lambda msg: print(f"  guest image: {msg}", file=sys.stderr, flush=True))
        WORK_ROOT.mkdir(parents=True, exist_ok=True)
        self.workdir = Path(tempfile.mkdtemp(prefix="vbqemu-", dir=WORK_ROOT))
        me = os.getpid()
        self._manifest = {"owner": f"{me} {netns.process_start_time(me)}",
                          "workdir": str(self.workdir), "pidfile": str(self.workdir / "qemu.pid"),
                          "owners_dir": str(netns.OWNERS)}
        self._save_manifest()
        with _live_lock:
            _live.add(self)
        try:
            self._start_guardian()
            self._boot()
        except BaseException:
            self.stop()
            raise

    def _boot(self) -> None:
        scratch, scratch_format = self._make_scratch()
        i = self.net_index   # instance i of a group gets its own subnet, 10.213.i.0/24
        self.ns = netns.NetNS(host_addr=f"10.213.{i}.1/24", guest_addr=f"10.213.{i}.2/24")
        self._manifest["netns"] = self.ns.name
        self._save_manifest()
        self.ns.create()
        self.console_log = self.workdir / "console.log"
        cfg = {
            "qemu": qemu_binary(), "accel": self.accel, "machine": self.machine,
            "cpu": self.cpu, "vcpus": self.values["vcpus"], "mem": self.values["mem"],
            "kernel": self.image.kernel, "initrd": self.image.initrd,
            "root_image": self.image.path, "root_label": self.image.root_label,
            "scratch": scratch, "scratch_format": scratch_format,
            "cache": self.values["cache"], "aio": self.values["aio"],
            "disk": self.values["disk"], "nic": self.values["nic"], "vhost": self.vhost,
            "mac": self.mac, "guest_addr": self.ns.guest_addr, "tap": self.ns.tap,
            "console_log": self.console_log, "agent_socket": self.workdir / "agent.sock",
            "agent_transport": self.values["agent"],
            "qmp_socket": self.workdir / "qmp.sock", "pidfile": self.workdir / "qemu.pid",
            "name": f"virtbench-{self.ns.name}",
        }
        self.argv = build_argv(cfg)
        stderr_path = self.workdir / "qemu.stderr"
        env = dict(os.environ, TMPDIR=str(self.workdir))  # snapshot=on's overlay lands here
        t0 = time.monotonic()
        with open(stderr_path, "wb") as err:
            # PR_SET_PDEATHSIG fires when the *thread* that forked exits, and preexec_fn is
            # unsafe in threads: use it from the main thread only (the guardian covers both)
            main = threading.current_thread() is threading.main_thread()
            self.proc = subprocess.Popen(self.ns.exec_argv(self.argv), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err, env=env,
                                         preexec_fn=_die_with_parent if main else None,
                                         start_new_session=True)
        self._manifest["qemu_pid"] = self.proc.pid  # `ip netns exec` execs QEMU: same pid
        self._save_manifest()
        self.agent = self._wait_for_agent(t0, stderr_path)
        self.boot_s = time.monotonic() - t0
        self.qmp = Qmp(cfg["qmp_socket"])
        self._stage_kernels()

    def _qemu_failed(self, stderr_path: Path) -> EnvironmentUnusable:
        text = stderr_path.read_text(errors="replace").strip() if stderr_path.exists() else ""
        last = text.splitlines()[-1] if text else f"exit status {self.proc.returncode}"
        return EnvironmentUnusable(f"{self.label}: QEMU failed to start: {last}")

    def _keep_console(self) -> Path | None:
        if self.console_log is None or not self.console_log.exists():
            return None
        logs = kernels.cache_dir() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        safe = self.label.replace("/", "_")
        dest = logs / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}-console.log"
        shutil.copy2(self.console_log, dest)
        self.kept_console_log = dest
        for old in sorted(logs.glob("*-console.log"))[:-20]:  # keep the 20 newest
            old.unlink(missing_ok=True)
        return dest

    def _wait_for_agent(self, t0: float, stderr_path: Path) -> SocketAgent:
        deadline = t0 + self.values["boot_timeout"]
        sock_path = self.workdir / "agent.sock"
        agent = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if agent is not None:
                    agent.close()
                raise self._qemu_failed(stderr_path)
            if agent is None:
                if not sock_path.exists():
                    time.sleep(0.05)
                    continue
                try:
                    agent = SocketAgent(sock_path, name=self.label, connect_timeout=2)
                except AgentError:
                    continue
            try:
                reply = agent.ping(timeout=min(1.0, max(0.05, deadline - time.monotonic())))
                self.guest_uptime_at_ready = reply.get("uptime_s")
                return agent
            except AgentError as exc:
                if "closed" in str(exc) or "lost" in str(exc):
                    agent.close()
                    agent = None
                    time.sleep(0.1)
        if agent is not None:
            agent.close()
        if self.proc.poll() is not None:
            raise self._qemu_failed(stderr_path)
        log = self._keep_console()
        raise GuestBootError(
            f"{self.label}: the guest agent did not answer within "
            f"{self.values['boot_timeout']:.0f} s; console log: {log}", log)

    def _stage_kernels(self) -> None:
        """Copy our benchmark kernels to GUEST_KERNEL_DIR with agent.put (one tar.gz)."""
        try:
            kdir = kernels.build()
        except VirtbenchError as exc:
            self.notes.append(f"benchmark kernels not staged: {exc}")
            return
        names = [n for n in kernels.KERNELS if (kdir / n).exists()]
        if not names:
            return
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=9) as tar:
            for name in names:
                tar.add(kdir / name, arcname=name)
        t0 = time.monotonic()
        staged = f"{GUEST_KERNEL_DIR}/kernels.tar.gz"
        self.agent.put(staged, buf.getvalue())
        res = self.agent.exec(["sh", "-c", 'tar -xzf "$1" -C "$2" && rm -f "$1"', "sh",
                               staged, GUEST_KERNEL_DIR], timeout=60)
        if res.exit != 0:
            raise AgentError(f"{self.label}: unpacking the kernels failed: {res.stderr.strip()}")
        self.stage_s = time.monotonic() - t0
        self._kernel_names = names

    def stop(self) -> None:
        with _live_lock:
            _live.discard(self)
        paused, self.paused = self.paused, False
        self._vcpu_tids = None
        # a paused guest's agent is frozen: do not wait on it, end QEMU by QMP (quit)
        if (not paused and self.proc is not None and self.proc.poll() is None
                and self.agent is not None):
            try:  # a clean power-off: sysrq o, and -no-reboot ends QEMU
                self.agent.exec(["sh", "-c", "(sleep 0.1; echo o > /proc/sysrq-trigger) "
                                             ">/dev/null 2>&1 </dev/null &"], timeout=5)
                self.proc.wait(timeout=5)
            except (AgentError, subprocess.TimeoutExpired, OSError):
                pass
        if self.proc is not None and self.proc.poll() is None and self.qmp is not None:
            try:
                self.qmp.command("quit")
                self.proc.wait(timeout=5)
            except (AgentError, OSError, subprocess.TimeoutExpired, ValueError):
                pass
        if self.agent is not None:
            self.agent.close()
            self.agent = None
        if self.qmp is not None:
            self.qmp.close()
            self.qmp = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.workdir is not None:
            guardian.cleanup(self._manifest)
        if self._topology is not None:
            self._topology.delete()
            self._topology = None
        if self.ns is not None:
            self.ns.delete()
        self._net = None
        self._scratch_dir = None
        self._scratch_dev = None
        if self._guardian is not None:
            try:
                os.write(self._guardian_fd, b"done")
            except OSError:
                pass
            os.close(self._guardian_fd)
            try:
                self._guardian.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._guardian.kill()
            self._guardian = None
        self.proc = None
        self.workdir = None
        self.ns = None

    def pause(self) -> None:
        if self.qmp is not None:
            self.paused = True       # before the command: a failed `stop` may still have paused
            self.qmp.command("stop")

    def resume(self) -> None:
        if self.qmp is not None:
            self.qmp.command("cont")
            self.paused = False

    def is_alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def lost_reason(self) -> str:
        if self.proc is None:
            return "QEMU is not running"
        if self.proc.poll() is None:
            return "the guest agent stopped answering (QEMU still running)"
        console = ""
        if self.console_log is not None and self.console_log.exists():
            console = self.console_log.read_text(errors="replace")
        return describe_loss(self.proc.returncode, console)

    def vcpu_threads(self) -> list[int]:
        """Host thread ids of the guest's vCPUs (QMP query-cpus-fast), once per boot."""
        if self._vcpu_tids is None:
            from ..pinning import vcpu_threads
            if self.qmp is None:
                return []
            self._vcpu_tids = vcpu_threads(self.qmp.command("query-cpus-fast"))
        return list(self._vcpu_tids)

    def pin_targets(self, bench, params: dict) -> list[tuple[int, int]] | None:
        if self.qmp is None:
            return None
        return [(tid, 1) for tid in self.vcpu_threads()]

    # -- inside the guest ----------------------------------------------------------------
    def kernel_path(self, name: str) -> str:
        return f"{GUEST_KERNEL_DIR}/{name}"

    @property
    def peer_ip(self) -> str | None:
        """The host-side address the guest reaches over its NIC (the network benchmark peer)."""
        return self.ns.host_ip if self.ns else None

    @property
    def guest_ip(self) -> str | None:
        return self.ns.guest_ip if self.ns else None

    def scratch_device(self) -> str:
        """The scratch disk's stable path in the guest (/dev/disk/by-id/...vbscratch)."""
        if self._scratch_dev is None:
            script = ("for i in $(seq 50); do for f in /dev/disk/by-id/*" + SCRATCH_SERIAL +
                      "; do [ -e \"$f\" ] && { echo \"$f\"; exit 0; }; done; sleep 0.1; done;"
                      " exit 1")
            res = self.exec(["sh", "-c", script], timeout=30)
            if res.exit != 0 or not res.stdout.strip():
                raise AgentError(f"{self.label}: no disk with serial {SCRATCH_SERIAL} "
                                 "under /dev/disk/by-id in the guest")
            self._scratch_dev = res.stdout.split()[0]
        return self._scratch_dev

    def scratch_dir(self) -> str:
        """A fresh ext4 file system on the scratch disk, mounted at SCRATCH_MOUNT (made once).

        Inode tables and journal are initialised at mkfs time, so no ext4lazyinit thread
        writes in the background while a benchmark measures."""
        if self._scratch_dir is None:
            dev = self.scratch_device()
            script = ('set -e; mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 '
                      '-L vbscratch "$1"; mkdir -p "$2"; mount "$1" "$2"')
            res = self.exec(["sh", "-c", script, "sh", dev, SCRATCH_MOUNT], timeout=600)
            if res.exit != 0:
                raise AgentError(f"{self.label}: preparing the scratch file system failed: "
                                 f"{(res.stderr.strip() or 'no output').splitlines()[-1]}")
            self._scratch_dir = SCRATCH_MOUNT
        return self._scratch_dir

    def scratch_backing(self) -> str | None:
        """The host file (raw or qcow2 image) or loop device behind the scratch disk."""
        if self.workdir is None:
            return None
        if self.values["backing"] == "device":
            loops = self._manifest.get("loops") or []
            return loops[-1] if loops else None
        name = "scratch.qcow2" if self.values["backing"] == "qcow2" else "scratch.raw"
        return str(self.workdir / name)

    def scratch_cache_mode(self) -> str | None:
        return self.values["cache"]

    def memory_bytes(self) -> int | None:
        """The guest's RAM (the mem option)."""
        return size_bytes(self.values["mem"])

    def host_memory_reserved(self) -> int:
        return size_bytes(self.values["mem"])

    def net_path(self) -> NetPath:
        """Guest NIC <-> tap in the host-side namespace, plus a remote namespace behind it."""
        if self._net is None:
            if self.ns is None or self.agent is None:
                raise VirtbenchError(f"{self.label}: net_path() before start()")
            from .. import netpath
            topo = netpath.Topology()
            self._topology = topo
            remote_ns = self.ns.name + "-r"
            self._manifest.setdefault("extra_netns", []).append(remote_ns)
            self._save_manifest()
            remote_addr, remote_prefix = netpath.add_remote(topo, self.ns.name, remote_ns)
            res = self.exec(["ip", "route", "replace", "default", "via", self.ns.host_ip],
                            timeout=30)
            if res.exit != 0:
                raise AgentError(f"{self.label}: setting the guest's default route failed: "
                                 f"{res.stderr.strip()}")
            self._net = NetPath(env_address=self.ns.guest_ip, host_address=self.ns.host_ip,
                                host_prefix=self.ns.exec_argv([]), env_prefix=[],
                                remote_address=remote_addr, remote_prefix=remote_prefix,
                                nic=self.values["nic"])
        return self._net

    def ssh_target(self) -> SshTarget:
        """The guest's own sshd (started at boot) with the image's client key."""
        if self.ns is None or self.image is None:
            raise VirtbenchError(f"{self.label}: ssh_target() before start()")
        return SshTarget(address=self.ns.guest_ip, port=22, user="root",
                         identity=str(self.image.ssh_key), prefix=self.ns.exec_argv([]))

    def owns_scratch_filesystem(self) -> bool:
        return True    # the scratch disk is one virtbench made for this guest

    def drop_caches(self) -> None:
        """Drop the guest's page cache, then the host's (the scratch image's pages)."""
        super().drop_caches()
        try:
            subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"],
                           capture_output=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            pass

    def _driver_chain(self, sysfs_path: str) -> list[str]:
        script = ('p=$(readlink -f "$1"); while [ "$p" != / ] && [ "$p" != /sys ]; do '
                  '[ -e "$p/driver" ] && basename "$(readlink "$p/driver")"; '
                  'p=$(dirname "$p"); done')
        res = self.exec(["sh", "-c", script, "sh", sysfs_path], timeout=30)
        return res.stdout.split()

    def scratch_drivers(self) -> list[str]:
        """Guest drivers bound along the scratch disk's device path, innermost first."""
        dev = self.exec(["readlink", "-f", self.scratch_device()], timeout=10).stdout.strip()
        return self._driver_chain(f"/sys/class/block/{os.path.basename(dev)}")

    def guest_nic(self) -> str | None:
        """The guest interface carrying our MAC."""
        res = self.exec(["sh", "-c", "for d in /sys/class/net/*; do "
                         f"[ \"$(cat $d/address)\" = {self.mac} ] && basename $d; done"],
                        timeout=10)
        return res.stdout.strip() or None

    def nic_drivers(self) -> list[str]:
        nic = self.guest_nic()
        return self._driver_chain(f"/sys/class/net/{nic}/device") if nic else []

    def metadata(self) -> dict:
        version, line = qemu_version()
        meta = {
            "qemu_version": version, "qemu": line,
            "accel": self.accel, "accel_reason": self.accel_reason,
            "machine": self.machine, "cpu_model": self.cpu,
            "vcpus": self.values["vcpus"], "mem": self.values["mem"],
            "disk": self.values["disk"], "nic": self.values["nic"],
            "cache": self.values["cache"], "aio": self.values["aio"],
            "backing": self.values["backing"], "vhost": self.vhost,
            "agent_transport": self.values["agent"],
            "boot_s": self.boot_s, "guest_uptime_at_ready_s": self.guest_uptime_at_ready,
            "image_recipe": self.image.recipe_hash if self.image else None,
            "guest_kernel_package": self.image.kernel_version if self.image else None,
            "kernels_staged": list(self._kernel_names), "kernels_stage_s": self.stage_s,
            "qemu_argv": list(getattr(self, "argv", [])),
        }
        if self.agent is not None:
            try:
                meta["guest_disk_drivers"] = self.scratch_drivers()
                meta["guest_nic_drivers"] = self.nic_drivers()
            except AgentError:
                pass
            meta.update(fingerprint.collect(self))
        meta["host_kernel"] = os.uname().release
        if not meta.get("guest_kernel"):
            meta["guest_kernel"] = guest_kernel_release(meta.get("kernel")) or (
                self.image.kernel_version if self.image else None)
        return meta
