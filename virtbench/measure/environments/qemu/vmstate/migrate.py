"""A live migration between two QEMUs on this host, under a memory-dirtying workload in the
guest (vmlife/ticker.py) whose every tick the host stamps as it arrives.

A twin of the environment boots (its root disk in an overlay both QEMUs open; a second
virtio-serial port for the ticker's lines); the ticker runs; after `before_s` a destination
QEMU starts (`-incoming defer`, its own tap in the guest's namespace and its own tick port)
and the source migrates to it over a unix socket (`migrate-set-parameters` for the bandwidth
and downtime limits, `postcopy-ram` and `migrate-start-postcopy` for post-copy). QEMU's own
figures come from `query-migrate`; the guest-observed downtime and the work lost from the
ticks (vmlife/migration.py). The destination's agent must answer afterwards. Both QEMUs, the
sockets and the twin are gone after, whatever happened; the environment is paused meanwhile."""
from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

from .....core.errors import AgentError, VirtbenchError
from .....machinery.host import watch
from .....machinery.vmlife import ticker
from .....machinery.vmlife.migration import disruption, migration_figures, parse_ticks, split_lines
from ..booted.boot import wait_for_agent
from .incoming import launch_second, migration_done, query_migrate, wait_for
from ..twin import state_twin, twin_running

TICK_PORT = "org.virtbench.tick"
SETTLE_S = 1.0            # the window runs this long past the migration's end


class TickReader:
    """Reads a QEMU chardev socket (QEMU is the server) in a thread, stamping each chunk."""

    def __init__(self, path: Path, timeout: float = 30.0):
        self.chunks: list[tuple[float, bytes]] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock.connect(str(path))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise VirtbenchError(f"the tick port {path.name} did not open") from None
                time.sleep(0.05)
        self.sock.settimeout(0.5)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True, name="ticks")
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            self.chunks.append((time.monotonic(), data))

    def wait_first(self, timeout: float) -> None:
        """Until the first line has arrived (the ticker runs)."""
        deadline = time.monotonic() + timeout
        while not any(b"\n" in data for _, data in self.chunks):
            if time.monotonic() > deadline:
                raise VirtbenchError(f"the guest's ticker wrote nothing in {timeout:.0f} s")
            time.sleep(0.05)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        try:
            self.sock.close()
        except OSError:
            pass


def tick_argv(path: Path) -> list[str]:
    return ["-chardev", f"socket,id=vbtick,path={path},server=on,wait=off",
            "-device", f"virtserialport,bus=vser0.0,chardev=vbtick,name={TICK_PORT}"]


def start_ticker(agent, params: dict, duration: float) -> None:
    """The ticker in the guest, detached from the agent (its lines go to the tick port)."""
    source = Path(ticker.__file__).read_text()
    res = agent.exec(["sh", "-c", 'setsid -f python3 -c "$0" "$@" </dev/null >/dev/null 2>&1',
                      source, TICK_PORT, str(params["dirty_mb_s"]), str(params["buffer_mib"]),
                      str(params["tick_ms"]), f"{duration:.1f}"], timeout=30)
    if res.exit != 0:
        raise VirtbenchError(f"the guest's ticker did not start: {res.stderr.strip()}")


def set_limits(vmm, params: dict, postcopy: bool) -> None:
    args = {}
    if params["bandwidth_mib_s"] > 0:
        args["max-bandwidth"] = int(params["bandwidth_mib_s"] * 2**20)
    if params["downtime_ms"] > 0:
        args["downtime-limit"] = int(params["downtime_ms"])
    if args:
        vmm.qmp.command("migrate-set-parameters", **args)
    if postcopy:
        vmm.qmp.command("migrate-set-capabilities", capabilities=[
            {"capability": "postcopy-ram", "state": True}])


def migrate_cycle(env, params: dict, make_twin) -> dict:
    """Migrate a twin of `env` between two QEMUs while its ticker runs; the figures (values)
    and what was seen (detail)."""
    ticks_dir = watch.private_dir("vbtmp-")
    readers: list[TickReader] = []
    try:
        twin = state_twin(make_twin, params, tick_argv(ticks_dir / "source.sock"))
        with twin_running(env, twin):
            try:
                return _migrate_ticking(env, twin, params, ticks_dir, readers)
            finally:
                for r in readers:
                    r.close()
    finally:
        shutil.rmtree(ticks_dir, ignore_errors=True)


def _migrate_ticking(env, twin, params: dict, ticks_dir: Path,
                     readers: list[TickReader]) -> dict:
    """The ticker started in the running twin, a destination QEMU, the migration, the
    migrated guest's agent; the ticks read on both sides."""
    postcopy = params["mode"] == "postcopy"
    readers.append(TickReader(ticks_dir / "source.sock"))
    budget = params["before_s"] + params["max_s"] + SETTLE_S + params["after_s"] + 30
    start_ticker(twin.agent, params, budget)
    readers[0].wait_first(60.0)        # python starts slowly in a TCG guest
    dest = _destination(env, twin, ticks_dir, readers)
    for vmm in (twin.vmm, dest):
        set_limits(vmm, params, postcopy)
    uri = f"unix:{ticks_dir / 'migration.sock'}"
    dest.qmp.command("migrate-incoming", uri=uri)
    t_ticker = time.monotonic()
    time.sleep(params["before_s"])
    t0 = time.monotonic()
    reply, seen = _migrate(env.label, twin.vmm, uri, params, postcopy)
    if seen is None:
        return {"values": {}, "detail": {"converged": False, "status": reply.get("status"),
                                         "qemu": migration_figures(reply),
                                         "max_s": params["max_s"]}}
    if reply.get("status") != "completed":
        raise VirtbenchError(f"{env.label}: the migration {reply.get('status')}: "
                             f"{reply.get('error-desc', 'no reason given')}")
    twin.vmm.paused = True          # the source stays stopped (postmigrate) until the end
    figures = migration_figures(reply)
    t1 = t0 + figures.get("total_s", seen - t0)
    time.sleep(SETTLE_S + params["after_s"])
    agent, _ = wait_for_agent(dest, dest.workdir / "agent.sock", f"{env.label} (migrated)",
                              60.0)
    twin.resources.add("the migrated guest's agent", agent.close)
    for r in readers:
        r.close()
    ticks = parse_ticks([x for r in readers for x in split_lines(r.chunks)])
    cost = disruption(ticks, (t_ticker + 0.5, t0), (t0, t1 + SETTLE_S))
    return migration_result(params, twin.values["mem"], reply, figures, ticks, cost, t0)


def _destination(env, twin, ticks_dir: Path, readers: list[TickReader]):
    """The destination QEMU, on a tap of its own in the twin's namespace, with its own tick
    port (read from now on), waiting for the state."""
    made = twin.ns.run(["ip", "tuntap", "add", "dev", "tap1", "mode", "tap"],
                       capture_output=True, text=True)   # goes with the namespace
    if made.returncode != 0:
        raise VirtbenchError(f"{env.label}: the destination's tap: {made.stderr.strip()}")
    dest = launch_second(twin, "destination", tap="tap1",
                         extra_argv=tick_argv(ticks_dir / "destination.sock"))
    readers.append(TickReader(ticks_dir / "destination.sock"))
    return dest


def _migrate(label: str, vmm, uri: str, params: dict,
             postcopy: bool) -> tuple[dict, float | None]:
    """Migrate `vmm` to `uri` (post-copy once pre-copy's first pass is done, if asked):
    (query-migrate's last reply, when it was seen); (the reply, None) when it did not end
    within max_s, after it was cancelled."""
    vmm.qmp.command("migrate", uri=uri)
    if postcopy:
        wait_for(query_migrate(vmm),
                 lambda r: (r.get("ram") or {}).get("dirty-sync-count", 0) >= 2
                 or migration_done(r), params["max_s"], f"{label}: pre-copy's first pass")
        vmm.qmp.command("migrate-start-postcopy")
    try:
        return wait_for(query_migrate(vmm), migration_done, params["max_s"],
                        f"{label}: the migration", every=0.05)
    except VirtbenchError:
        reply = vmm.qmp.command("query-migrate")
        vmm.qmp.command("migrate_cancel")
        return reply, None


def migration_result(params: dict, mem: str, reply: dict, figures: dict, ticks, cost,
                     t0: float) -> dict:
    """A converged migration's figures (values) and what was seen (detail), from QEMU's
    reply and the ticks (pure)."""
    values = {k: figures[k] for k in ("total_s", "downtime_s", "setup_s", "transferred_mib",
                                      "dirty_rate_mib_s") if k in figures}
    values["downtime_guest_s"] = cost.downtime_guest_s
    if cost.work_lost_s is not None:
        values["work_lost_s"] = cost.work_lost_s
    detail = {"converged": True, "mode": params["mode"], "mem": mem,
              "qemu": figures, "status": reply.get("status"),
              "ticks": len(ticks), "baseline_gap_s": cost.baseline_gap_s,
              "gap_at_s": None if cost.gap_at_s is None else cost.gap_at_s - t0,
              "rate_pages_s": cost.rate_pages_s, "expected_pages": cost.expected_pages,
              "done_pages": cost.done_pages,
              "timeline": timeline(ticks, t0), "limits": {
                  k: params[k] for k in ("bandwidth_mib_s", "downtime_ms", "dirty_mb_s",
                                         "buffer_mib", "tick_ms")}}
    return {"values": values, "detail": detail}


def timeline(ticks, t0: float, points: int = 400) -> list[list[float]]:
    """(seconds from the migration's start, pages written) at most `points` ticks, evenly
    picked, for the report's timeline chart."""
    step = max(1, len(ticks) // points)
    return [[round(t.host_s - t0, 4), t.done] for t in ticks[::step]]
