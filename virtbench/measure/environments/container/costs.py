"""A container's or sandbox's life-cycle costs: its start cut into phases (on a twin) and
the host memory it takes (its processes from podman's conmon down; vmlife/)."""
from __future__ import annotations

from ....core.errors import AgentError, VirtbenchError
from ....machinery.vmlife.footprint import Footprint, sandbox_footprint
from ....machinery.vmlife.phases import PhaseError, Phases, container_phases
from . import podman


def process_ids(env) -> tuple[int, int]:
    """(the container's first process, its conmon) as the host sees them."""
    if env.agent is None or env._name is None:
        raise VirtbenchError(f"{env.label}: footprint() before start()")
    proc = podman.run_podman(["inspect", "--format", "{{.State.Pid}} {{.State.ConmonPid}}",
                              env._name])
    parts = proc.stdout.split()
    if proc.returncode != 0 or len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise VirtbenchError(f"{env.label}: podman inspect gave no process ids: "
                             f"{podman.runtime_error(proc.stderr)}")
    return int(parts[0]), int(parts[1])


def footprint(env) -> Footprint:
    pid, conmon = process_ids(env)
    out = sandbox_footprint(conmon, pid, env.memory_file)
    out.detail["runtime"] = env.runtime
    return out


def twin_of(env):
    """A fresh container of `env`'s spec with its runtime (and network) already settled, so
    that starting it probes nothing."""
    twin = type(env)(env.spec)
    twin.runtime, twin.runtime_reason = env.runtime, env.runtime_reason
    if hasattr(env, "network"):
        twin.network, twin.network_reason = env.network, env.network_reason
    twin.net_index = env.net_index
    return twin


def measure_boot(env) -> Phases:
    """Start a twin, cut its start into phases from its agent's exec moment and clock (which
    for a sandbox starts with the sandbox's own kernel), stop it."""
    env.resolve()
    twin = twin_of(env)
    try:
        twin.start()
        start, ready = twin._t0, twin._t0 + twin.boot_s
        try:
            reply = twin.agent.ping()
            offset = twin.clock_offset()
        except AgentError as exc:
            raise VirtbenchError(f"{env.label}: the twin's agent: {exc}") from None
        exec_mono, mono, uptime = (reply.get(k) for k in ("exec_mono", "mono", "uptime_s"))
        if offset is None or not isinstance(exec_mono, (int, float)):
            raise VirtbenchError(f"{env.label}: the agent does not say when it started "
                                 "(an agent older than this virtbench?)")
        to_host = -offset.offset_s
        zero = None
        if isinstance(uptime, (int, float)) and isinstance(mono, (int, float)):
            zero = mono - uptime + to_host        # its kernel's clock zero, on the host's
        try:
            phases = container_phases(start, exec_mono + to_host, ready, zero)
        except PhaseError as exc:
            raise VirtbenchError(f"{env.label}: the start cannot be cut into phases: {exc}") \
                from None
        phases.detail.update(runtime=twin.runtime, clock_offset_s=offset.offset_s,
                             clock_bound_s=offset.uncertainty_s, lifecycle=dict(twin.step_s))
        return phases
    finally:
        twin.stop()
