"""Podman as virtbench drives it: its global flags, the `podman run` command line of an
environment's container, version parsing and the runtime probe.

Pure functions build and parse; `run_podman` and `probe_runtime` are the only ones that run
anything. No daemon: every call is a plain `podman` process (cgroupfs manager where there is
no systemd), and the rootfs is virtbench's own debootstrap tree (`--rootfs TREE:O`, an
overlay whose upper layer is the container's own, so the cached tree is never written).
"""
from __future__ import annotations

import os
import re
import resource
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ....core.errors import VirtbenchError

INSTALL = "apt-get install podman runc"
AGENT_IN = "/opt/virtbench/agent.py"
KERNELS_IN = "/opt/virtbench/kernels"
SCRATCH_IN = "/mnt/vbscratch"             # bind and volume storage mount here
OVERLAY_SCRATCH_IN = "/var/tmp/vbscratch"  # overlay storage: a directory in the root overlay
OWNER_LABEL = "org.virtbench.owner"       # "<pid> <starttime>" of the virtbench process
NAME_PREFIX = "vbctr-"
NPROC = 4096   # RLIMIT_NPROC in the container: podman's default (1048576) is above what a
               # process without CAP_SYS_RESOURCE may set, and root is exempt from it anyway


def podman_binary() -> str:
    path = shutil.which("podman")
    if not path:
        raise VirtbenchError(f"podman not found; install it with: {INSTALL}")
    return path


def global_flags(systemd: bool | None = None) -> list[str]:
    """Flags before the subcommand: without systemd, cgroups are managed through cgroupfs
    and events go to a file (nothing tries to reach a journal or a D-Bus)."""
    if systemd is None:
        systemd = os.path.isdir("/run/systemd/system")
    return [] if systemd else ["--cgroup-manager=cgroupfs", "--events-backend=file"]


def run_podman(args: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([podman_binary(), *global_flags(), *args], capture_output=True,
                          text=True, timeout=timeout)


def last_line(text: str, default: str = "no output") -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else default


# -- versions ------------------------------------------------------------------------------
_VERSION = re.compile(r"^(?P<name>[\w-]+) version (?P<version>\d\S*)", re.M)


def parse_version(text: str) -> tuple[str, str] | None:
    """("podman", "4.3.1") from `podman --version`; ("crun", "1.8.1"), ("runc", "1.1.5+ds1"),
    ("runsc", "0.0~20221219.0") from a runtime's `--version` (its first line)."""
    m = _VERSION.search(text or "")
    return (m["name"], m["version"]) if m else None


def tool_version(argv: list[str]) -> str | None:
    try:
        proc = subprocess.run(argv + ["--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = parse_version(proc.stdout)
    return found[1] if found else None


def ulimits(nofile: int | None = None) -> list[str]:
    """podman's default rlimits (1048576) are above what a process without
    CAP_SYS_RESOURCE may set: keep our own open-files limit, and a modest NPROC."""
    nofile = nofile or resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return ["--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", f"nproc={NPROC}:{NPROC}"]


# -- the run command line ------------------------------------------------------------------
@dataclass
class RunConfig:
    name: str
    rootfs: str
    runtime: str                       # a name podman knows (crun, runc) or a path (runsc)
    runtime_flags: list[str] = field(default_factory=list)
    network: str = "none"              # "none", "bridge" or "ns:/run/netns/NAME"
    cpus: float | None = None
    mem: str | None = None             # 512M, 2G
    agent: str = ""                    # the host's agent.py
    kernels: str | None = None         # the host's kernel binaries directory
    scratch_mount: str | None = None   # a host directory or a volume name, at SCRATCH_IN
    owner: str = ""
    nofile: int | None = None


def run_argv(cfg: RunConfig) -> list[str]:
    """`podman run` of the agent on stdio in a container over the rootfs (pure)."""
    argv = ["run", "--rm", "-i", "--name", cfg.name, "--label", f"{OWNER_LABEL}={cfg.owner}",
            "--runtime", cfg.runtime]
    for flag in cfg.runtime_flags:
        argv += ["--runtime-flag", flag]
    argv += ["--log-driver", "none", "--cap-add", "NET_RAW", *ulimits(cfg.nofile),
             "--network", cfg.network]
    if cfg.cpus is not None:
        argv += ["--cpus", f"{cfg.cpus:g}"]
    if cfg.mem is not None:
        argv += ["--memory", cfg.mem.lower(), "--memory-swap", cfg.mem.lower()]
    argv += ["-v", f"{cfg.agent}:{AGENT_IN}:ro"]
    if cfg.kernels:
        argv += ["-v", f"{cfg.kernels}:{KERNELS_IN}:ro"]
    if cfg.scratch_mount:
        argv += ["-v", f"{cfg.scratch_mount}:{SCRATCH_IN}"]
    argv += ["--rootfs", f"{cfg.rootfs}:O", "python3", AGENT_IN, "--stdio"]
    return argv


# -- the runtime probe ---------------------------------------------------------------------
@dataclass(frozen=True)
class RuntimeProbe:
    usable: bool
    reason: str      # one line: why not (the runtime's own error), or what worked


_probed: dict[tuple, RuntimeProbe] = {}


def probe_runtime(runtime: str, rootfs: str | Path, flags: tuple[str, ...] = (),
                  timeout: float = 60, network: str = "none") -> RuntimeProbe:
    """Start a real container (`true`) with `runtime` over the rootfs: the only honest test
    (crun 1.8 refuses a hybrid cgroup host whose v2 hierarchy has any controller; runsc
    platforms fail in ways no file shows). Cached per process."""
    key = (runtime, str(rootfs), flags, network if network == "none" else "ns")
    if key not in _probed:
        _probed[key] = _probe(runtime, rootfs, flags, timeout, network)
    return _probed[key]


def _probe(runtime: str, rootfs, flags: tuple[str, ...], timeout: float,
           network: str) -> RuntimeProbe:
    from ....machinery.host import guardian
    from ....machinery.host.net import netns
    name = f"{NAME_PREFIX}probe-{secrets.token_hex(4)}"
    me = os.getpid()
    args = ["run", "--rm", "--name", name, "--label",
            f"{OWNER_LABEL}={me} {netns.process_start_time(me)}", "--runtime", runtime,
            "--network", network, "--log-driver", "none", *ulimits()]
    for flag in flags:
        args += ["--runtime-flag", flag]
    args += ["--rootfs", f"{rootfs}:O", "true"]
    try:
        proc = run_podman(args, timeout=timeout)
    except subprocess.TimeoutExpired:
        guardian.remove_container([podman_binary(), *global_flags()], name)
        return RuntimeProbe(False, f"a probe container did not start in {timeout:.0f} s "
                                   "(the runtime hung; killed)")
    except (OSError, VirtbenchError) as exc:
        return RuntimeProbe(False, str(exc))
    if proc.returncode == 0:
        return RuntimeProbe(True, "a probe container ran")
    return RuntimeProbe(False, runtime_error(proc.stderr))


_LOG_LINE = re.compile(r'^(time="|[IWEDF]\d{4} \d\d:)')       # logrus and glog lines
_WRAPPER = re.compile(r"^`[^`]*` failed: exit status \d+$")  # says nothing of why


def runtime_error(stderr: str) -> str:
    """The one line that says why a container did not start (pure): the OCI runtime's own
    message without podman's `Error: ` and `OCI runtime error: ` wrappers, log lines
    skipped, and the cause before a bare "`runsc ... start ...` failed: exit status N"."""
    lines = []
    for line in (stderr or "").splitlines():
        line = line.strip()
        if not line or _LOG_LINE.match(line):
            continue
        for prefix in ("Error: ", "OCI runtime error: "):
            line = line.removeprefix(prefix)
        lines.append(line)
    if not lines:
        return "no output"
    if _WRAPPER.match(lines[-1]) and len(lines) > 1:
        return lines[-2]
    return lines[-1]
