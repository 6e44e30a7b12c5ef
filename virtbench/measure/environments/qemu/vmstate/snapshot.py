"""Snapshot and restore of a qemu guest, as `virsh save`/`virsh restore` do it: the running
guest is stopped and its state migrated into a file (QMP `stop`, `getfd`, `migrate fd:`), its
QEMU ends; a new QEMU of the same configuration takes the state back (`-incoming defer`,
`migrate-incoming fd:`), continues, and its agent answers. Then: does the restored guest keep
time, and does its network work?

Done on a twin of the environment (its spec, at the memory size asked), with its root disk in
an overlay file both QEMUs open; the environment itself is paused meanwhile. The state file,
both QEMUs and everything of the twin are gone after, whatever happened."""
from __future__ import annotations

import os
import time

from .....core.errors import AgentError, VirtbenchError
from .....machinery.agent.transport import AgentClient
from .....machinery.vmlife.migration import clock_lag, clock_rate, migration_figures
from ..booted.boot import wait_for_agent
from .incoming import (
    incoming_done,
    launch_second,
    migration_done,
    query_migrate,
    send_file,
    wait_for,
)
from ..cmdline.options import size_bytes
from ..twin import state_twin, twin_running

SAVE_TIMEOUT_S = 600.0
FILE_NAME = "vbstate"


def realtime_pair(agent: AgentClient) -> tuple[float, float]:
    """(host, guest) CLOCK_REALTIME at one moment: the guest's `date`, the host's clock at
    the middle of the round trip."""
    t0 = time.time()
    res = agent.exec(["date", "+%s.%N"], timeout=30)
    t1 = time.time()
    return (t0 + t1) / 2, float(res.stdout.strip())


def monotonic_pair(agent: AgentClient) -> tuple[float, float]:
    t0 = time.monotonic()
    mono = agent.ping()["mono"]
    return (t0 + time.monotonic()) / 2, float(mono)


def fill(agent: AgentClient, mib: int) -> None:
    """Make `mib` MiB of the guest's RAM non-zero (a tmpfs file), so that the state holds
    more than the pages an idle guest touched."""
    if mib > 0:
        res = agent.exec(["sh", "-c", f"head -c {mib}M /dev/zero | tr '\\0' x > /dev/shm/vbfill"],
                         timeout=600)
        if res.exit != 0:
            raise VirtbenchError(f"filling {mib} MiB of guest memory failed: {res.stderr.strip()}")


def snapshot_cycle(env, params: dict, make_twin) -> dict:
    """Save and restore a twin of `env`; the figures (values) and what was seen (detail)."""
    twin = state_twin(make_twin, params)
    with twin_running(env, twin):
        fill(twin.agent, int(params.get("fill_mib", 0)))
        clock_before = realtime_pair(twin.agent)
        path = twin.work.path / "state"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        t0 = time.monotonic()
        try:
            twin.vmm.pause()
            send_file(twin.vmm, fd, FILE_NAME)
        finally:
            os.close(fd)
        twin.vmm.qmp.command("migrate", uri=f"fd:{FILE_NAME}")
        saved, t1 = wait_for(query_migrate(twin.vmm), migration_done, SAVE_TIMEOUT_S,
                             f"{env.label}: saving the guest's state")
        if saved.get("status") != "completed":
            raise VirtbenchError(f"{env.label}: saving the state {saved.get('status')}: "
                                 f"{saved.get('error-desc', 'no reason given')}")
        written = path.stat().st_size
        twin.vmm.end()                           # as virsh save: the saved guest is gone
        restored = launch_second(twin, "restored")
        t2 = restored.started_at
        fd = os.open(path, os.O_RDONLY)
        try:
            send_file(restored, fd, FILE_NAME)
        finally:
            os.close(fd)
        restored.qmp.command("migrate-incoming", uri=f"fd:{FILE_NAME}")
        _, t3 = wait_for(incoming_done(restored), lambda r: r.get("status") != "inmigrate",
                         SAVE_TIMEOUT_S, f"{env.label}: loading the guest's state")
        restored.resume()
        agent, _ = wait_for_agent(restored, restored.workdir / "agent.sock",
                                  f"{env.label} (restored)", twin.values["boot_timeout"])
        t4 = time.monotonic()
        twin.resources.add("the restored guest's agent", agent.close)
        checks = after_restore(agent, clock_before, twin.ns.host_ip)
        gib = size_bytes(twin.values["mem"]) / 2**30
        values = {"save_s": t1 - t0, "save_mib": written / 2**20, "restore_load_s": t3 - t2,
                  "restore_s": t4 - t2, "save_s_per_gib": (t1 - t0) / gib,
                  "restore_s_per_gib": (t4 - t2) / gib, "clock_lag_s": checks["clock_lag_s"]}
        detail = {"mem": twin.values["mem"], "fill_mib": int(params.get("fill_mib", 0)),
                  "saved": migration_figures(saved), "state_bytes": written, **checks,
                  "how": "QMP stop, migrate fd: to a file; a new QEMU -incoming defer, "
                         "migrate-incoming fd:, cont"}
        return {"values": values, "detail": detail}


def after_restore(agent: AgentClient, clock_before: tuple[float, float], host_ip: str) -> dict:
    """Does the restored guest keep time (its clock's rate over a second, and how far its
    wall clock fell behind: no NTP brings it back), and does its network answer a ping of
    the host side?"""
    first = monotonic_pair(agent)
    time.sleep(1.0)
    second = monotonic_pair(agent)
    rate = clock_rate(first, second)
    lag = clock_lag(clock_before, realtime_pair(agent))
    try:
        res = agent.exec(["ping", "-c", "3", "-i", "0.2", "-W", "2", host_ip], timeout=30)
        net_ok, net = res.exit == 0, (res.stdout.strip().splitlines() or [""])[-1]
    except AgentError as exc:
        net_ok, net = False, str(exc)
    return {"clock_rate": rate, "clock_ok": rate is not None and abs(rate - 1.0) < 0.05,
            "clock_lag_s": lag, "net_ok": net_ok, "net": net}
