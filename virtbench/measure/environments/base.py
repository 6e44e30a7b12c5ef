"""What every environment kind shares: its spec and options, its label, and its life cycle.

The life cycle is one template (start() and stop() here; a kind writes neither):

    start():  prepare   resolve(), then what must exist before anything runs (an image,
                        our kernels, a work directory, stale leftovers swept)
              start     launch(): bring it up (a QEMU process, a container, an ssh agent)
              ready     ready(): wait until its agent answers, then what a benchmark needs
                        set up first (kernels staged, tunings applied)
    ... trials (the runner) ...
    stop():   release   everything the steps registered in `resources`, last made first

Each step's time lands in `step_s` ({"prepare_s", "start_s", "ready_s", then "stop_s"}),
stored with the environment's metadata under "lifecycle". A kind registers each thing it
makes the moment it makes it (`self.resources.add(name, release)`, `self.attach(agent)`):
stop() releases whatever a start reached, and is safe to call twice or after a failed start.

What an environment offers benchmarks is declared once, in its capabilities record
(capabilities.py): a benchmark names what it needs and the runner matches the two before
anything starts. ABILITIES maps each capability to the methods that use it; where a kind
declares `cannot`, those methods here refuse with the record's own reason, and a kind that
declares `can` implements them (tests/unit/environments/test_capabilities.py checks both directions).
"""
from __future__ import annotations

import sys
import time
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Iterable

from ...core.capabilities import Capabilities
from ...core.errors import AgentError, VirtbenchError
from ...core.suggest import did_you_mean
from ...machinery.host.executor import LOCAL, HostExecutor
from ...machinery.host.net.netpath_types import NetPath, SshTarget
from ...core.outcome import TrialOutcome
from ...foundations.stats.aggregate import ClockOffset, best_offset, offset_from_ping
from ...machinery.agent.transport import AgentClient, ExecResult
from . import live
from .resources import Resources
from .spec import NAME_OPTION, EnvSpec, Option, Usability, check_name, options_text as _options_text

# capability -> the environment methods that use it (the rest of the record are properties
# of the path, such as direct_io and remote_peer, or of a group: pairing, pair_path)
ABILITIES: dict[str, tuple[str, ...]] = {
    "scratch": ("scratch_dir",),
    "scratch_device": ("scratch_device",),
    "net_path": ("net_path",),
    "ssh_target": ("ssh_target",),
    "pause": ("pause", "resume"),
    "drop_caches": ("drop_caches",),
    "memory_size": ("memory_bytes",),
    "exit_profile": ("profiled_trial",),
    "boot_phases": ("measure_boot",),
    "footprint": ("footprint",),
    "snapshot": ("snapshot_cycle",),
    "migrate": ("migrate_cycle",),
    "packages": ("add_packages",),
}

STEPS: tuple[str, ...] = ("prepare", "start", "ready")


class Environment(ABC):
    """One place benchmarks run. A kind sets `kind`, `options` and `summary`, declares its
    capabilities, and implements the life-cycle steps: prepare() (optional), launch(),
    ready() (optional: the base pings the agent)."""

    kind: ClassVar[str]
    options: ClassVar[dict[str, Option]] = {}
    summary: ClassVar[str] = ""
    net_index: int = 0      # instance i of a group: its network path uses subnet i
    stands_for: str | None = None   # a study environment's spec this one is measured as
                                    # (a user's target for `xen:...`), or None
    instance_of: "Environment | None" = None   # the group this is an instance of, if any
    host: HostExecutor = LOCAL     # runs benchmarks' host-side commands (a test's fake here)
    name: str | None = None        # name=LABEL of the spec, if given (see `label`)

    def __init__(self, spec: EnvSpec):
        given = {k: v for k, v in spec.options.items() if k != NAME_OPTION}
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            valid = ", ".join(sorted([*self.options, NAME_OPTION]))
            raise VirtbenchError(
                f"environment {spec.kind}: unknown option {unknown[0]}"
                f"{did_you_mean(unknown[0], [*self.options, NAME_OPTION])}; valid options: {valid}")
        self.spec = spec
        self.name: str | None = None
        if NAME_OPTION in spec.options:
            self.name = check_name(spec.kind, spec.options[NAME_OPTION])
        self.values: dict[str, Any] = {name: opt.default for name, opt in self.options.items()}
        for name, raw in given.items():
            self.values[name] = self.options[name].parse(spec.kind, name, raw)
        self.agent: AgentClient | None = None
        self.boot_s: float | None = None   # start-to-agent-ready, when it means something
        self.notes: list[str] = []          # things the report should say (e.g. why TCG)
        self.resources = Resources()        # what stop() releases, last made first
        self.step_s: dict[str, float] = {}  # the life-cycle steps' times (see STEPS)

    @classmethod
    def create(cls, spec: EnvSpec) -> "Environment":
        """The kind's factory (the registry calls it): an instance of this class. A kind of
        several forms (libvirt) registers a factory that picks the form."""
        return cls(spec)

    # -- identity ------------------------------------------------------------------------
    # name=LABEL (every kind takes it, here once) IS the label: what reports show and what
    # --baseline, `versus` and compare --pair accept (an A/A twin: --env native
    # --env native:name=twin labels the second `twin`). The kind and its options stay in the
    # facts: the stored kind, spec and options, and the generated label as the metadata's
    # `kind_label`. Without a name the label is the generated one.

    @property
    def label(self) -> str:
        """name=NAME when the spec gave it, else the kind's generated label."""
        return self.name or self.kind_label

    @property
    def kind_label(self) -> str:
        """Stable label: the kind, then every option that differs from its default."""
        parts = [self.kind]
        for name, opt in self.options.items():
            if opt.in_label and self.values[name] != opt.default:
                parts.append(f"{self.values[name]}" if opt.choices else f"{name}={self.values[name]}")
        return "/".join(parts)

    @classmethod
    def options_text(cls) -> str:
        """The options with their choices or defaults, for `virtbench envs` (and name=,
        which every kind takes)."""
        return _options_text(cls.options) + (", " if cls.options else "") + "name=LABEL"

    @classmethod
    def probe(cls) -> Usability:
        """Can this kind run on this host at all? Cheap and side-effect free."""
        return Usability(True)

    def resolve(self) -> None:
        """Settle choices that depend on the host (accelerator...) before the label is used.
        Idempotent: the prepare step calls it again."""

    def capabilities(self) -> Capabilities:
        """What this environment can offer benchmarks (scratch, network path, sshd, pausing,
        cache dropping, memory size, pairing), each "cannot" with a reason naming the fix.
        Answered from the kind and its options alone (no I/O): the runner asks at plan time,
        before anything starts. The base offers nothing; each kind says what it has."""
        return Capabilities.none(f"environment {self.kind}")

    def missing_tools(self, tools: Iterable[str]) -> list[str]:
        """Which of a benchmark's programs this environment lacks, where it can tell before it
        starts (the host's own, for kinds that run on it); others say so in the trial."""
        return []

    def tools_place(self) -> str | None:
        """Where a missing program is to be installed, for the line that says so (a target's
        address); None: this host."""
        return None

    def add_packages(self, packages: Iterable[str]) -> None:
        """Give the environment these Debian packages (the union of its benchmarks'), before
        it starts: a kind whose tree virtbench builds runs a variant of it with them."""
        raise self._cannot("packages")

    def _cannot(self, capability: str) -> VirtbenchError:
        """The refusal of a capability, in the words of the record."""
        answer = getattr(self.capabilities(), capability)
        return VirtbenchError(answer.reason or f"environment {self.label} declares {capability} "
                                               "but does not implement it")

    # -- the life cycle (a template: kinds implement the steps, not start/stop) -----------
    def start(self) -> None:
        """prepare -> start -> ready, each step timed into `step_s`. A failure in any step
        releases what the steps made (stop()) and is raised as it came."""
        self.step_s = {}
        live.install_signal_handlers()
        live.track(self)
        self.resources.add("the live set", lambda: live.untrack(self))
        try:
            self._step("prepare", lambda: (self.resolve(), self.prepare()))
            self._step("start", self.launch)
            self._step("ready", self.ready)
        except BaseException:
            try:
                self.stop()
            except Exception as exc:      # the start's own error is the one to raise
                print(f"virtbench: {self.label}: {exc}", file=sys.stderr)
            raise

    def _step(self, name: str, run: Callable[[], Any]) -> None:
        t0 = time.monotonic()
        run()
        self.step_s[f"{name}_s"] = round(time.monotonic() - t0, 6)

    def prepare(self) -> None:
        """Step 1, after resolve(): what must exist before anything runs (build an image, our
        kernels; make a work directory; sweep what dead runs left). Nothing runs yet."""

    def launch(self) -> None:
        """Step 2: bring the environment up (start its VMM, container or agent process),
        registering each thing in `self.resources` as it is made. Every kind has one."""
        raise NotImplementedError(f"environment kind {self.kind} has no launch()")

    def ready(self) -> None:
        """Step 3: wait until the environment answers, then set up what benchmarks need
        first. The base: the agent answers a ping."""
        if self.agent is not None:
            self.agent.ping()

    def attach(self, agent: AgentClient) -> AgentClient:
        """Make `agent` this environment's (exec() uses it) and register its closing."""
        self.agent = agent

        def close() -> None:
            if self.agent is agent:
                self.agent = None
            try:
                agent.close()
            except (AgentError, OSError):
                pass               # an agent already gone: nothing left to close

        self.resources.add("the agent", close)
        return agent

    def stop(self) -> None:
        """Release everything the life cycle registered, last made first. Safe to call more
        than once, and after a failed or a partial start."""
        t0 = time.monotonic()
        try:
            self.resources.close()
        finally:
            self.agent = None
            self.step_s["stop_s"] = round(time.monotonic() - t0, 6)

    def is_alive(self) -> bool:
        """Is what start() brought up still there (a guest's QEMU, the agent process)?"""
        return True

    def lost_reason(self) -> str:
        """Why the environment went away, in one line (once is_alive() is False)."""
        return "the agent stopped answering"

    def pause(self) -> None:
        """Quiesce while another environment measures (a guest is stopped, say)."""
        raise self._cannot("pause")

    def resume(self) -> None:
        """Undo pause()."""
        raise self._cannot("pause")

    def vcpu_threads(self) -> list[int]:
        """Host thread ids of this environment's vCPUs (a guest's); [] where there are none
        (native, containers, machines reached over SSH)."""
        return []

    @property
    def instance_count(self) -> int:
        """How many copies of a benchmark one trial runs at once (a group's instances)."""
        return 1

    def pin_threads(self, bench, params: dict) -> list[tuple[int, int]] | None:
        """What pinning pins for a trial of `bench`: (thread or process id, host CPUs it
        needs; 0 = any CPU) pairs; None where this kind cannot be pinned."""
        return None

    # -- running things ------------------------------------------------------------------
    def exec(self, argv: list[str], timeout: float, env: dict | None = None,
             alive: float | None = None) -> ExecResult:
        """`argv` run by the environment's agent; with `alive` (s), a machine silent that long
        is an AgentSilent saying so before `timeout` runs out."""
        if self.agent is None:
            raise RuntimeError(f"{self.label}: exec before start")
        return self.agent.exec(argv, timeout=timeout, env=env, alive=alive)

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

    @abstractmethod
    def kernel_path(self, name: str) -> str:
        """Where our kernel binary `name` (himeno, stream, pi) is inside the environment."""

    # -- what disk and network benchmarks use (each: a capability, see ABILITIES) ----------
    def scratch_dir(self) -> str:
        """A directory on the file system under test, where file-based disk benchmarks
        (dd, fio, bonnie++) write. Guests put it on their separate scratch disk."""
        raise self._cannot("scratch")

    def scratch_device(self) -> str | None:
        """The block device under test, as seen inside the environment (read by hdparm);
        None where there is none (tmpfs, overlay)."""
        raise self._cannot("scratch_device")

    def net_path(self) -> NetPath:
        """Set up (once) and return the network path under test; stop() removes it."""
        raise self._cannot("net_path")

    def ssh_target(self) -> SshTarget:
        """Start (once) the environment's sshd on its network path and say how to reach it."""
        raise self._cannot("ssh_target")

    def drop_caches(self) -> None:
        """Drop the environment's page cache (a guest also drops the host's)."""
        raise self._cannot("drop_caches")

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
        """Memory a benchmark running here may use, in bytes; None when unknown (a kind
        that knows declares memory_size)."""
        return None

    def host_memory_reserved(self) -> int:
        """Host memory this environment holds for itself while it runs (a guest's RAM);
        0 where benchmarks share the host's memory directly (native)."""
        return 0

    def as_instance(self, i: int) -> None:
        """Make this environment instance i of a group: anything two instances would share
        (network subnet, scratch directory) becomes instance i's own."""
        self.net_index = i

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
        raise self._cannot("exit_profile")

    # -- the life cycle's costs (benchmarks boot, footprint, snapshot, migrate) ------------
    def measure_boot(self):
        """Start a fresh copy of this environment, cut its start into phases
        (vmlife.phases.Phases), stop it. Only where capabilities().boot_phases can."""
        raise self._cannot("boot_phases")

    def footprint(self):
        """The host memory this running environment takes (vmlife.footprint.Footprint)."""
        raise self._cannot("footprint")

    def snapshot_cycle(self, params: dict) -> dict:
        """Save a running copy of this environment to a file and restore it: the figures
        and what the restored copy could still do (vmlife.snapshot)."""
        raise self._cannot("snapshot")

    def migrate_cycle(self, params: dict) -> dict:
        """Live-migrate a running copy of this environment to a second VMM on this host
        under a memory-dirtying workload (vmlife.migration)."""
        raise self._cannot("migrate")

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


# -- shared implementations a kind may use for its abilities -----------------------------
def block_device_under(env: Environment, directory: str) -> str | None:
    """The block device findmnt finds under `directory` inside `env`; None where there is
    none (tmpfs, overlay)."""
    res = env.exec(["findmnt", "-n", "-o", "SOURCE", "-T", directory], timeout=30)
    source = res.stdout.strip()
    return source if res.exit == 0 and source.startswith("/dev/") else None


def drop_page_cache(env: Environment) -> None:
    """sync, then drop the page cache of the kernel `env` runs on (as root there)."""
    env.exec(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], timeout=300)


__all__ = ["ABILITIES", "STEPS", "Environment", "EnvSpec", "Option", "Usability",
           "block_device_under", "drop_page_cache"]
