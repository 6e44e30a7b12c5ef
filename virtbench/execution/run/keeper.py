"""The keeper: holds a run's environments between trials: start, pause/resume, loss, restart,
pinning, stop. (A VM's life-cycle *costs*, boot phases, snapshots, migration, are vmlife/'s.)

The runner asks two things per trial: `ready(env, bench, params)` (start it if needed, give it
the machine, pin it; None or why its trials fail) and `after(env, lost_error)` (was it lost
during the trial?). Every start is a numbered boot in the store with the trials it served.
A lost environment (QEMU killed, kernel panic, agent gone) is restarted at its next trial, at
most MAX_RESTARTS times; then its remaining trials fail with the reason and the run goes on.
A QMP or OS error while pausing or resuming fails that environment's trials, not the run.
"""
from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape

from ...core import defaults
from ...machinery.host import pinning
from ...measure.environments import Environment
from ...core.errors import AgentError, VirtbenchError
from ...foundations.store import Store, jsonable

MAX_RESTARTS = 2   # restarts of one environment after losses, per run session
LOSS_SETTLE_S = 3.0  # how long a lost agent's environment gets to show it is gone


class Keeper:
    """The run's environments and their state: which are up, paused, lost or dead, and each boot."""
    def __init__(self, envs: dict[str, Environment], store: Store, run_id: str,
                 console: Console, pin: str = defaults.PIN, cpus: list[int] | None = None):
        self.envs = envs
        self.store = store
        self.run_id = run_id
        self.console = console
        self.pin = pin
        self.cpus = cpus if cpus is not None else pinning.host_cpus()
        self.up: set[str] = set()
        self.paused: set[str] = set()
        self.dead: dict[str, str] = {}          # label -> why its trials fail
        self.boot: dict[str, int] = {}          # label -> current boot number
        self.restarts: dict[str, int] = {}
        self.lost_why: dict[str, str] = {}      # label -> why the last boot ended
        self.meta: dict[str, dict] = {}         # label -> metadata as stored
        self.warned: set[tuple] = set()

    # -- per trial -----------------------------------------------------------------------
    def ready(self, env: Environment, bench=None, params: dict | None = None,
              keep: tuple[Environment, ...] = ()) -> str | None:
        """Start `env` if needed, pause the others (but those in `keep`), resume it, pin it.
        None, or why its trial fails."""
        label = env.label
        why = self.dead.get(label) or self._ensure_up(env)
        if why is None:
            why = self._focus(env, {e.label for e in keep})
        if why is None and bench is not None:
            self._pin(env, bench, params or {})
        return why

    def after(self, env: Environment, error: str | None) -> str | None:
        """After a trial: if the environment was lost (QEMU gone, agent gone), record the
        loss and return the trial's error; otherwise return `error` unchanged."""
        alive = _safe(env.is_alive, False)
        agent_lost = error is not None and error.startswith("agent lost")
        if alive and not agent_lost:
            return error
        alive = alive and still_alive_after_loss(env)
        why = _safe(env.lost_reason, "the environment went away") if not alive else error
        self.lost(env, why)
        return f"environment lost: {why}"

    def lost(self, env: Environment, why: str) -> None:
        label = env.label
        self._stop(env)
        if label in self.boot:
            self.store.end_boot(self.run_id, label, self.boot.pop(label), lost=why)
        self.lost_why[label] = why
        self.restarts[label] = self.restarts.get(label, 0) + 1
        self.store.add_warning(self.run_id, "environment_lost",
                               f"{label} lost ({why}); restart {self.restarts[label]} "
                               f"of at most {MAX_RESTARTS}", environment=label)
        self.console.print(f"[red]lost[/] {escape(label)}: {escape(why)}")
        if self.restarts[label] > MAX_RESTARTS:
            self.dead[label] = (f"environment {label} lost {self.restarts[label]} times "
                                f"(last: {why}); gave up after {MAX_RESTARTS} restarts")
            self.console.print(f"[red]{escape(self.dead[label])}[/]")

    # -- start ---------------------------------------------------------------------------
    def _ensure_up(self, env: Environment) -> str | None:
        label = env.label
        if label in self.up:
            return None
        reason = (f"restart after: {self.lost_why[label]}" if label in self.lost_why
                  else "first start")
        t0 = time.monotonic()
        try:
            self.console.print(("restarting " if label in self.lost_why else "starting ")
                               + f"{escape(label)} ...")
            env.start()
            meta = env.metadata()
        except (VirtbenchError, AgentError, OSError) as exc:
            _safe(env.stop, None)
            why = f"environment {label} failed to start: {exc}"
            self.dead[label] = why
            self.store.upsert_environment(self.run_id, label, status="failed", error=str(exc))
            self.store.add_warning(self.run_id, "environment_failed", why, environment=label)
            self.console.print(f"[red]{escape(why)}[/]")
            return why
        boot_s = env.boot_s if env.boot_s is not None else time.monotonic() - t0
        self.up.add(label)
        self.boot[label] = self.store.record_boot(self.run_id, label, reason, boot_s=boot_s)
        meta = dict(meta)
        if env.name:
            meta["name"] = env.name                # name=: the label the user gave it
            meta["kind_label"] = env.kind_label    # and the one its kind and options make
        if env.stands_for:
            meta["stands_for"] = env.stands_for    # a user's target measured as a study's env
        meta["pinning"] = {"mode": self.pin, "host_cpus": list(self.cpus), "benchmarks": {}}
        meta["lifecycle"] = dict(env.step_s)        # prepare_s, start_s, ready_s (base.STEPS)
        self.meta[label] = meta
        self.store.upsert_environment(self.run_id, label, status="up", metadata=jsonable(meta),
                                      boot_s=boot_s)
        for note in env.notes:
            self.store.add_warning(self.run_id, "environment_note", note, environment=label)
        return None

    # -- who has the machine -------------------------------------------------------------
    def _focus(self, env: Environment, keep: set[str] = frozenset()) -> str | None:
        """Pause every other running environment that can be paused (its capabilities say;
        native and ssh targets keep running) but those in `keep`, resume `env`. A failure to
        pause or resume fails that environment (its remaining trials), never the run."""
        for label in sorted(self.up):
            other = self.envs[label]
            if other is env or label in keep or label in self.paused \
                    or not other.capabilities().pause:
                continue
            try:
                other.pause()
                self.paused.add(label)
            except (AgentError, OSError, VirtbenchError) as exc:
                self._give_up(other, f"pausing {label} failed: {exc}")
        label = env.label
        if label in self.paused:
            try:
                env.resume()
                self.paused.discard(label)
            except (AgentError, OSError, VirtbenchError) as exc:
                self._give_up(env, f"resuming {label} failed: {exc}")
                return self.dead[label]
        return None

    def _give_up(self, env: Environment, why: str) -> None:
        label = env.label
        self._stop(env)
        if label in self.boot:
            self.store.end_boot(self.run_id, label, self.boot.pop(label), lost=why)
        self.dead[label] = f"environment {label}: {why}"
        self.store.upsert_environment(self.run_id, label, status="failed", error=why)
        self.store.add_warning(self.run_id, "environment_failed", self.dead[label],
                               environment=label)
        self.console.print(f"[red]{escape(self.dead[label])}[/]")

    # -- pinning -------------------------------------------------------------------------
    def pin_apart(self, envs: list[Environment], bench, params: dict) -> list[list[int]] | None:
        """Duet mode: pin `envs` at once onto disjoint CPUs, the first CPUs to the first
        environment (all the host's CPUs may be used). Each environment's CPUs, or None
        (pinning off, a kind that cannot be pinned, too few CPUs: left as they are)."""
        if self.pin == "off":
            return None
        threads, owner = [], []
        for env in envs:
            try:
                mine = env.pin_threads(bench, params)
            except (AgentError, OSError):
                mine = None
            if not mine or not any(n > 0 for _, n in mine):
                return None
            threads += mine
            owner += [env.label] * len(mine)
        needs = [n for _, n in threads]
        sets = pinning.assign(self.cpus, needs) if sum(needs) <= len(self.cpus) else None
        if sets is None:
            return None
        try:
            for (tid, _), chosen in zip(threads, sets):
                pinning.set_cpus(tid, chosen)
        except OSError:
            return None
        per_env = [[c for o, cpus in zip(owner, sets) if o == env.label for c in cpus]
                   for env in envs]
        for env in envs:
            self._record_pinning(env.label, getattr(bench, "label", None) or bench.name,
                                 "duet: CPUs of its own beside its partner's, which ones "
                                 "drawn per block (trials.detail.duet)")
        return per_env

    def _pin(self, env: Environment, bench, params: dict) -> None:
        label = env.label
        if self.pin == "off":
            return
        try:
            threads = env.pin_threads(bench, params)
        except (AgentError, OSError) as exc:
            threads, why = None, f"cannot find what to pin: {exc}"
        else:
            why = "this environment kind cannot be pinned"
        sets = None
        if threads is not None:
            try:
                sets, why = pinning.apply(threads, self.cpus)
            except OSError as exc:
                sets, why = None, f"sched_setaffinity failed: {exc}"
            if sets is not None and not any(n > 0 for _, n in threads):
                sets, why = [], "not one of our kernels: runs on any CPU"
        if sets is None:
            self.warn_once("not_pinned", f"{label}: not pinned for {bench.name}: {why}", label, None,
                           key=("not_pinned", label))
        self._record_pinning(label, getattr(bench, "label", None) or bench.name,
                             sets if sets is not None else f"unpinned: {why}")

    def _record_pinning(self, label: str, bench: str, value) -> None:
        meta = self.meta.get(label)
        if meta is None or meta["pinning"]["benchmarks"].get(bench) == value:
            return
        meta["pinning"]["benchmarks"][bench] = value
        self.store.upsert_environment(self.run_id, label, metadata=jsonable(meta))

    # -- warnings and stopping -----------------------------------------------------------
    def warn_once(self, kind: str, message: str, environment: str | None,
                  benchmark: str | None, key: tuple | None = None) -> None:
        """Store a warning the first time it is seen in this session of the run."""
        key = key or (kind, message, environment, benchmark)
        if key not in self.warned:
            self.warned.add(key)
            self.store.add_warning(self.run_id, kind, message, environment=environment,
                                   benchmark=benchmark)

    def _stop(self, env: Environment) -> None:
        label = env.label
        try:
            env.stop()
        except Exception as exc:  # cleanup must go on
            self.console.print(f"[red]stopping {escape(label)} failed: {escape(str(exc))}[/]")
        meta = self.meta.get(label)
        if label in self.up and meta is not None and "stop_s" in env.step_s:
            meta["lifecycle"]["stop_s"] = env.step_s["stop_s"]     # the boot's last step
            _safe(lambda: self.store.upsert_environment(self.run_id, label,
                                                        metadata=jsonable(meta)), None)
        self.up.discard(label)
        self.paused.discard(label)

    def stop_all(self) -> None:
        for label, env in self.envs.items():
            self._stop(env)
            if label in self.boot:
                number = self.boot.pop(label)
                _safe(lambda: self.store.end_boot(self.run_id, label, number), None)
        self.up.clear()


def still_alive_after_loss(env, settle_s: float = LOSS_SETTLE_S) -> bool:
    """Is `env` still alive `settle_s` after its agent was lost? The agent's connection
    closes a moment before QEMU's exit is seen: waiting for it lets the loss say why
    (killed, panic) rather than "connection closed"."""
    deadline = time.monotonic() + settle_s
    alive = _safe(env.is_alive, False)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = _safe(env.is_alive, False)
    return alive


def _safe(fn, default):
    try:
        return fn()
    except Exception:
        return default
