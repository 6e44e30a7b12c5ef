"""The KVM probe: does a real guest kernel boot under -accel kvm here? Cached per process and
on disk, keyed by the host kernel, QEMU's version and /dev/kvm; for another QEMU (qemu:binary=)
asked of that QEMU, cached per binary."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .....machinery.kernels import build as kernels
from .....core.errors import VirtbenchError
from .....machinery.image import guest_image
from .....machinery.host import watch
from .....machinery.host.executor import die_with_parent
from . import version

# A KVM host boots the probe kernel in well under a second; KVM nested in a TCG guest took
# 7.6-19 s here (the kernel read from the guest's disk, 2 shared cores). A hang (the PVM module
# here) costs the whole wait, once: the answer is cached on disk.
KVM_PROBE_TIMEOUT = 60.0


@dataclass
class KvmProbe:
    usable: bool
    reason: str
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


_kvm_probe: KvmProbe | None = None              # the system QEMU's answer
_other_probes: dict[str, KvmProbe] = {}         # another QEMU's, by its binary


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
    if info is not None and info.linux.exists():
        return info.linux
    for p in sorted(Path("/boot").glob("vmlinuz-*"), reverse=True):
        if os.access(p, os.R_OK):
            return p
    return None


def _probe_key(qemu=None) -> str:
    """What the probe's answer depends on: the host kernel (and its KVM module) and QEMU
    (`qemu`: another QEMU's QemuBinary, its path in the key too)."""
    ver = version.qemu_version()[0] if qemu is None else f"{qemu.version()[0]} {qemu.path}"
    try:
        kvm = os.stat("/dev/kvm")
        node = f"{os.major(kvm.st_rdev)}:{os.minor(kvm.st_rdev)}"
    except OSError:
        node = "none"
    return f"{os.uname().release}|{os.uname().version}|qemu {ver}|/dev/kvm {node}"


def kvm_probe(force: bool = False, timeout: float = KVM_PROBE_TIMEOUT,
              build: bool = False, qemu=None) -> KvmProbe:
    """Does a real guest kernel boot under -accel kvm here? Cached per process and on disk.
    `build`: build the guest image first when no kernel is at hand (what a run does; listing
    environment kinds does not). `qemu`: another QEMU (a QemuBinary not the system's)."""
    if qemu is not None and not qemu.system:
        return _other_probe(qemu, force, timeout, build)
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


def _other_probe(qemu, force: bool, timeout: float, build: bool) -> KvmProbe:
    """kvm_probe() for another QEMU: its own answer, cached per binary and on disk."""
    path = qemu.path
    if path in _other_probes and not force:
        return _other_probes[path]
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return kvm_probe(force, timeout, build)     # the same answer as the system's
    kernel = _probe_kernel(build=build)
    if kernel is None:
        return KvmProbe(False, "kvm probe: no kernel to boot (build the guest image first)")
    key = _probe_key(qemu)
    cache_file = kernels.cache_dir() / "kvm-probe-other.json"
    try:
        saved = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        saved = {}
    saved = saved if isinstance(saved, dict) else {}
    try:
        if not force and key in saved:
            _other_probes[path] = KvmProbe(**saved[key])
            return _other_probes[path]
    except TypeError:
        pass
    result = _run_kvm_probe(kernel, timeout, qemu)
    _other_probes[path] = result
    try:
        cache_file.write_text(json.dumps({**saved, key: result.to_json()}))
    except OSError:
        pass
    return result


def probe_argv(qemu: str, kernel: Path, console_log: Path,
               data_argv: list[str] | tuple = ()) -> list[str]:
    """QEMU booting `kernel` under KVM with no root disk: the kernel panics at once and
    -no-reboot ends QEMU; the serial console goes to `console_log`. `data_argv`: another
    QEMU's -L arguments."""
    return [qemu, *data_argv, "-accel", "kvm", "-machine", "q35", "-cpu", "host",
            "-m", "256M", "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none",
            "-no-reboot", "-serial", f"file:{console_log}", "-kernel", str(kernel),
            "-append", "console=ttyS0 panic=-1 loglevel=4"]


def probe_verdict(console: str, stderr: str, seconds: float) -> KvmProbe:
    """What a finished probe boot says (pure): a kernel that got as far as mounting its root
    (and panicking for want of one) ran under KVM."""
    if "Kernel panic" in console or "VFS:" in console:
        return KvmProbe(True, f"kvm probe: a guest kernel booted in {seconds:.1f} s", seconds)
    last = (stderr.strip() or "no output").splitlines()[-1]
    return KvmProbe(False, f"kvm probe: QEMU failed: {last}", seconds)


def _run_kvm_probe(kernel: Path, timeout: float, qemu=None) -> KvmProbe:
    """Boot the kernel with no root: it panics at once, -no-reboot ends QEMU. Did it get there?
    `qemu`: another QEMU's QemuBinary (default: the system's)."""
    with watch.temporary_dir() as tmp:
        log = Path(tmp, "console.log")
        if qemu is None:
            argv, env = probe_argv(version.qemu_binary(), kernel, log), None
        else:
            argv = probe_argv(qemu.path, kernel, log, qemu.data_argv())
            env = qemu.process_env()
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=die_with_parent, start_new_session=True, env=env)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return KvmProbe(False, f"kvm probe: guest did not boot in {timeout:.0f} s",
                            time.monotonic() - t0)
        seconds = time.monotonic() - t0
        console = log.read_text(errors="replace") if log.exists() else ""
        return probe_verdict(console, err.decode(errors="replace"), seconds)
