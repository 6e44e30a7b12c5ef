"""gVisor's platforms (ptrace, systrap, kvm): which start a sandbox here, and why the others
do not, in one line each, as the QEMU KVM probe says. A probe is a real container (`true`)
with runsc as podman's runtime; the answers are cached per process and on disk, keyed by
runsc's version, the host kernel and /dev/kvm (a hung kvm probe costs its whole timeout)."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from ....machinery.kernels import build as kernels
from ..container import podman

PLATFORMS = ("ptrace", "systrap", "kvm")
PROBE_TIMEOUT = {"ptrace": 60.0, "systrap": 60.0, "kvm": 20.0}
INSTALL = "apt-get install runsc podman"


def runsc_binary() -> str | None:
    return shutil.which("runsc") or (shutil.which("runsc", path="/usr/bin:/usr/sbin"))


def explain(platform: str, usable: bool, reason: str, kvm_node: bool = True,
            kvm_modules: str = "") -> str:
    """One line for a platform's probe result (pure): runsc's own error made readable."""
    if usable:
        return f"{platform}: works (a probe sandbox ran)"
    m = re.search(r"unknown platform: (\S+)", reason)
    if m:
        return (f"{platform}: this runsc build predates the {m[1]} platform (runsc says "
                f"`unknown platform: {m[1]}`); a newer runsc has it")
    if "root network namespace" in reason:
        return (f"{platform}: runsc takes every namespace for the host's own (`cannot run "
                "with network enabled in root network namespace`: this 2022 runsc tests for "
                "/proc/sys/net/core/rmem_default, which newer kernels show in every "
                "namespace); use network=host")
    if platform == "kvm" and not kvm_node:
        return "kvm: /dev/kvm does not exist; load kvm_intel or kvm_amd"
    if platform == "kvm" and "did not start" in reason:
        mods = f" ({kvm_modules})" if kvm_modules else ""
        return (f"kvm: {reason}; /dev/kvm is there{mods} but runsc's KVM platform hangs on it "
                "as QEMU's -accel kvm does; use platform=ptrace")
    return f"{platform}: {reason}"


def _key() -> str:
    from ..container.podman import tool_version
    try:
        st = os.stat("/dev/kvm")
        node = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    except OSError:
        node = "none"
    modules = _kvm_modules()
    return f"{tool_version([runsc_binary() or 'runsc'])}|{os.uname().release}|{node}|{modules}"


def _kvm_modules() -> list[str]:
    try:
        return sorted(m for m in os.listdir("/sys/module") if m.startswith("kvm"))
    except OSError:
        return []


def _cache_file() -> Path:
    return kernels.cache_dir() / "gvisor-probe.json"


_memo: dict[str, tuple[bool, str]] = {}


def probe(platform: str, rootfs=None, network: str = "none") -> tuple[bool, str]:
    """(usable, one line) for `platform` (with `network`: sandbox is probed in a namespace of
    its own); probes (a real sandbox) when nothing is cached."""
    key = f"{_key()}|{platform}" + ("" if network == "none" else f"|network={network}")
    if key in _memo:
        return _memo[key]
    cache = _cache_file()
    try:
        stored = json.loads(cache.read_text())
    except (OSError, ValueError):
        stored = {}
    if key in stored:
        _memo[key] = tuple(stored[key])
        return _memo[key]
    if rootfs is None:
        from ..container.rootfs import rootfs as base_rootfs
        rootfs = base_rootfs()
    runsc = runsc_binary()
    if runsc is None:
        return False, f"runsc not found; install it with: {INSTALL}"
    flags = (f"platform={platform}", f"network={network}")
    if network == "none":
        result = podman.probe_runtime(runsc, rootfs, flags, timeout=PROBE_TIMEOUT[platform])
    else:
        from ....machinery.host.net import netns
        from ....machinery.host.net.netpath import Topology
        topo = Topology()
        try:
            ns = topo.add(netns.PREFIX + "probe-" + os.urandom(3).hex())
            result = podman.probe_runtime(runsc, rootfs, flags, timeout=PROBE_TIMEOUT[platform],
                                          network=f"ns:/run/netns/{ns}")
        finally:
            topo.delete()
    what = platform if network == "none" else f"network={network}"
    answer = (result.usable, explain(what, result.usable, result.reason,
                                     os.path.exists("/dev/kvm"), ", ".join(_kvm_modules())))
    _memo[key] = answer
    stored[key] = list(answer)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(stored, indent=1))
    except OSError:
        pass
    return answer


def forget() -> None:
    """Drop every cached answer (memory and disk): the next probe() runs a sandbox again
    (`virtbench envs --probe`)."""
    _memo.clear()
    try:
        _cache_file().unlink()
    except FileNotFoundError:
        pass


def cached(platform: str, network: str = "none") -> tuple[bool, str] | None:
    """The cached answer for `platform`, or None (no probe run)."""
    key = f"{_key()}|{platform}" + ("" if network == "none" else f"|network={network}")
    if key in _memo:
        return _memo[key]
    try:
        stored = json.loads(_cache_file().read_text())
    except (OSError, ValueError):
        return None
    return tuple(stored[key]) if key in stored else None
