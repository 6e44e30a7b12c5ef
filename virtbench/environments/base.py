"""What every environment kind shares: its spec, its options, its label, its life cycle."""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

from ..capabilities import Capabilities
from ..errors import VirtbenchError
from ..hostexec import LOCAL, HostExecutor
from ..netpath_types import NetPath, SshTarget
from ..outcome import TrialOutcome
from ..stats.aggregate import ClockOffset, best_offset, offset_from_ping
from ..transport import AgentClient, ExecResult


@dataclass(frozen=True)
class Option:
    """One option of an environment kind: its default and what values it takes."""

    default: Any
    choices: tuple[str, ...] | None = None      # the valid values, when they are a fixed set
    convert: Callable[[str], Any] | None = None  # a parser for free-form values (int, size)
    help: str = ""
    in_label: bool = True                        # does a non-default value appear in the label?

    def parse(self, kind: str, name: str, raw: str) -> Any:
        if self.choices is not None and raw not in self.choices:
            raise VirtbenchError(
                f"environment {kind}: {name}={raw} is not valid; use one of: {', '.join(self.choices)}")
        if self.convert is not None:
            try:
                return self.convert(raw)
            except ValueError as exc:
                raise VirtbenchError(f"environment {kind}: {name}={raw} is not valid ({exc})") from exc
        return raw


@dataclass(frozen=True)
class EnvSpec:
    """`KIND[:key=value,...]` as the user wrote it, split into its parts."""

    kind: str
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> "EnvSpec":
        text = text.strip()
        if not text:
            raise VirtbenchError("empty environment spec; write KIND[:key=value,...], e.g. native")
        kind, _, rest = text.partition(":")
        options: dict[str, str] = {}
        for item in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = item.partition("=")
            if not eq or not key or not value:
                raise VirtbenchError(
                    f"environment spec {text!r}: {item!r} is not key=value; "
                    "write e.g. qemu:disk=ide,nic=e1000")
            if key in options:
                raise VirtbenchError(f"environment spec {text!r}: option {key} given twice")
            options[key] = value
        return cls(kind.strip(), options)

    def __str__(self) -> str:
        if not self.options:
            return self.kind
        return self.kind + ":" + ",".join(f"{k}={v}" for k, v in self.options.items())


@dataclass
class Usability:
    """Whether an environment kind can run here, and why not."""

    usable: bool
    reason: str = ""
    details: dict = field(default_factory=dict)


class Environment(ABC):
    """One place benchmarks run. Subclasses set `kind` and `options` and talk to an agent.

    Life cycle: resolve() (cheap, decides things like the accelerator) -> start() -> exec()...
    -> stop(). stop() must leave nothing behind, whatever state start() reached.
    """

    kind: ClassVar[str]
    options: ClassVar[dict[str, Option]] = {}
    summary: ClassVar[str] = ""
    net_index: int = 0      # instance i of a group: its network path uses subnet i
    stands_for: str | None = None   # a study environment's spec this one is measured as
                                    # (a user's target for `xen:...`), or None
    instance_of: "Environment | None" = None   # the group this is an instance of, if any
    host: HostExecutor = LOCAL     # runs benchmarks' host-side commands (a test's fake here)

    def __init__(self, spec: EnvSpec):
        unknown = sorted(set(spec.options) - set(self.options))
        if unknown:
            valid = ", ".join(sorted(self.options)) or "none"
            raise VirtbenchError(
                f"environment {spec.kind}: unknown option {unknown[0]}; valid options: {valid}")
        self.spec = spec
        self.values: dict[str, Any] = {name: opt.default for name, opt in self.options.items()}
        for name, raw in spec.options.items():
            self.values[name] = self.options[name].parse(spec.kind, name, raw)
        self.agent: AgentClient | None = None
        self.boot_s: float | None = None   # start-to-agent-ready, when it means something
        self.notes: list[str] = []          # things the report should say (e.g. why TCG)

    # -- identity ------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """Stable label: the kind, then every option that differs from its default."""
        parts = [self.kind]
        for name, opt in self.options.items():
            if opt.in_label and self.values[name] != opt.default:
                parts.append(f"{self.values[name]}" if opt.choices else f"{name}={self.values[name]}")
        return "/".join(parts)

    @classmethod
    def options_text(cls, options: dict[str, Option] | None = None) -> str:
        """The options with their choices or defaults, for `virtbench envs`."""
        return ", ".join(f"{n}={'|'.join(o.choices) if o.choices else o.default}"
                         for n, o in (cls.options if options is None else options).items())

    @classmethod
    def probe(cls) -> Usability:
        """Can this kind run on this host at all? Cheap and side-effect free."""
        return Usability(True)

    def resolve(self) -> None:
        """Settle choices that depend on the host (accelerator...) before the label is used."""

    def capabilities(self) -> Capabilities:
        """What this environment can offer benchmarks (scratch, network path, sshd, pausing,
        cache dropping, memory size, pairing), each "cannot" with a reason naming the fix.
        Answered from the kind and its options alone (no I/O): the runner asks at plan time,
        before anything starts. The base offers nothing; each kind says what it has."""
        return Capabilities.none(f"environment {self.kind}")

    # -- life cycle ----------------------------------------------------------------------
    @abstractmethod
    def start(self) -> None:
        """Bring the environment up and connect `self.agent`."""

    @abstractmethod
    def stop(self) -> None:
        """Tear everything down; safe to call more than once and after a failed start."""

    def pause(self) -> None:
        """Quiesce while another environment measures (a guest is stopped, say)."""

    def resume(self) -> None:
        """Undo pause()."""

    def is_alive(self) -> bool:
        """Is what start() brought up still there (a guest's QEMU, the agent process)?"""
        return True

    def lost_reason(self) -> str:
        """Why the environment went away, in one line (once is_alive() is False)."""
        return "the agent stopped answering"

    def pin_targets(self, bench, params: dict) -> list[tuple[int, int]] | None:
        """What pinning pins for a trial of `bench`: (thread or process id, host CPUs it
        needs; 0 = any CPU) pairs; None where this kind cannot be pinned."""
        return None

    # -- running things ------------------------------------------------------------------
    def exec(self, argv: list[str], timeout: float, env: dict | None = None) -> ExecResult:
        if self.agent is None:
            raise RuntimeError(f"{self.label}: exec before start")
        return self.agent.exec(argv, timeout=timeout, env=env)

    def clock_offset(self, rounds: int = 3) -> ClockOffset | None:
        """This environment's CLOCK_MONOTONIC minus the host's, from `rounds` pings of its
        agent (the one with the shortest round trip: the offset is known to within half of
        it); None without an agent or with one too old to say its clock. Raises AgentError."""
        if self.agent is None:
            return None
        samples = []
        for _ in range(rounds):
            sent = time.monotonic()
            mono = self.agent.ping().get("mono")
            received = time.monotonic()
            if not isinstance(mono, (int, float)):
                return None
            samples.append(offset_from_ping(sent, float(mono), received))
        return best_offset(samples)

    # -- what disk and network benchmarks need -------------------------------------------
    def scratch_dir(self) -> str:
        """A directory on the file system under test, where file-based disk benchmarks
        (dd, fio, bonnie++) write. Guests put it on their separate scratch disk."""
        raise VirtbenchError(f"environment {self.label} has no scratch disk")

    def scratch_device(self) -> str | None:
        """The block device under test, as seen inside the environment (read by hdparm):
        here, the one findmnt finds under the scratch directory; None where there is none
        (tmpfs, overlay)."""
        res = self.exec(["findmnt", "-n", "-o", "SOURCE", "-T", self.scratch_dir()], timeout=30)
        source = res.stdout.strip()
        return source if res.exit == 0 and source.startswith("/dev/") else None

    def net_path(self) -> NetPath:
        """Set up (once) and return the network path under test; stop() removes it."""
        raise VirtbenchError(f"environment {self.label} has no network path for network benchmarks")

    def ssh_target(self) -> SshTarget:
        """Start (once) the environment's sshd on its network path and say how to reach it."""
        raise VirtbenchError(f"environment {self.label} has no sshd for transfer benchmarks")

    def owns_scratch_filesystem(self) -> bool:
        """May a benchmark remount the scratch file system (e.g. -o sync for the trial)?
        Only where virtbench made it (a guest's scratch disk); never the host's."""
        return False

    def scratch_backing(self) -> str | None:
        """The host file or device behind the scratch disk (a guest's image file or loop
        device); None where the scratch directory is on the host itself or unknown."""
        return None

    def scratch_cache_mode(self) -> str | None:
        """The host cache mode of the scratch disk actually in use (QEMU's cache=...);
        None where there is no virtual disk between the benchmark and the host."""
        return None

    # -- memory and instances ------------------------------------------------------------
    def memory_bytes(self) -> int | None:
        """Memory a benchmark running here may use, in bytes; None when unknown."""
        return None

    def host_memory_reserved(self) -> int:
        """Host memory this environment holds for itself while it runs (a guest's RAM);
        0 where benchmarks share the host's memory directly (native)."""
        return 0

    def as_instance(self, i: int) -> None:
        """Make this environment instance i of a group: anything two instances would share
        (network subnet, scratch directory) becomes instance i's own."""
        self.net_index = i

    def drop_caches(self) -> None:
        """Drop the environment's page cache (a guest also drops the host's)."""
        self.exec(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], timeout=300)

    @abstractmethod
    def kernel_path(self, name: str) -> str:
        """Where our kernel binary `name` (himeno, stream, pi) is inside the environment."""

    def metrics_for(self, bench) -> tuple:
        """The metrics a trial of `bench` yields here (a group of instances adds its own)."""
        return bench.metrics

    def memory_refusal(self, bench, params: dict) -> str | None:
        """Why `bench` with `params` cannot fit in this environment's memory, or None."""
        from .capacity import memory_refusal
        known = self.memory_bytes() if self.capabilities().memory_size else None
        return memory_refusal(str(self.spec), 1, bench.memory_need(params), known,
                              self.host_memory_reserved() == 0, bench.name)

    def run_trial(self, bench, params: dict):
        """One trial of `bench` here; a group of instances runs it in all of them at once.
        A benchmark that cannot fit in memory is a failed trial saying so, not an OOM kill."""
        refusal = self.memory_refusal(bench, params)
        if refusal:
            return TrialOutcome(error=refusal)
        return bench.run_trial(self, params)

    # -- exit profiles (--profile exits) -------------------------------------------------
    def profiled_trial(self, bench, params: dict):
        """One extra trial of `bench`, profiled, never a measured one: (TrialOutcome, Profile).
        Only where capabilities().exit_profile says it can."""
        raise VirtbenchError(self.capabilities().exit_profile.reason
                             or f"environment {self.label} cannot profile")

    def end_profiling(self) -> None:
        """Let go of what profiling needed (a profiling twin of a guest); idempotent."""

    def metadata(self) -> dict:
        """The fingerprint stored with the run (CPU, kernel, versions, device models...)."""
        return {}

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
