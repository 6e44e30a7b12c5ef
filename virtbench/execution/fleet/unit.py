"""The unit: one host's share of a fleet run. It runs the study on this host exactly as
`virtbench run` does (prepare, then the Runner, with this host's name and the fleet id in
the run), or resumes the host's run when the unit is delivered again.

A unit can be delivered twice (a dead worker's unit comes back; with Redis an unacknowledged
one also comes back after the visibility timeout while the first still runs). Two things
keep that to one run: the unit's lease in Redis (lease.py), which a second delivery waits
for while the first lives, and the host's run row of the fleet in the store, which says
whether to start, resume or only acknowledge (complete)."""
from __future__ import annotations

import os
import signal
import time

from rich.console import Console
from rich.markup import escape

from ..run import warmup
from ...core.errors import VirtbenchError
from ..run.runner import Runner, prepare
from ...foundations.store import Store, StoreUnavailable
from ...study.design import Study
from . import lease as lease_mod, state
from .app import TASK


class FleetRunner(Runner):
    """The Runner, with one progress line per trial (a worker's stderr is a log, not a
    terminal) and the unit's progress in the broker for `fleet status`."""

    def __init__(self, *args, client=None, **kwargs):
        super().__init__(*args, show_progress=False, **kwargs)
        self.client = client

    def _execute(self, run_id, prepared):
        study = prepared.study
        total = warmup.planned_trials(study, len(prepared.envs), len(prepared.cases),
                                      len(prepared.skipped_cases))
        state.set_state(self.client, self.fleet, self.host, "running", run=run_id,
                        done=len(self.store.done_slots(run_id)), total=total,
                        started=time.time())
        return super()._execute(run_id, prepared)

    def slot_ran(self, session, slot, ok):
        """One progress line per trial and the unit's progress in the broker, both read off
        the session's progress (the stored trials counted done)."""
        super().slot_ran(session, slot, ok)
        done, total = session.bar.counts
        state.set_state(self.client, self.fleet, self.host, "running", run=session.run_id,
                        done=done, total=total)
        trial = f"warm-up {-slot.trial}" if slot.trial < 0 else f"#{slot.trial + 1}"
        self.console.print(escape(f"{self.host}: {done}/{total} {slot.environment} · "
                                  f"{slot.benchmark} {trial} " + ("ok" if ok else "failed")),
                           highlight=False)


class StoreAway(Exception):
    """The store cannot be reached now: the unit goes back to its queue, to try again."""


def store_retry_s() -> float:
    return float(os.environ.get("VIRTBENCH_STORE_RETRY_S", 30))


def host_run(store: Store, fleet_id: str, host: str) -> dict | None:
    """This host's run of the fleet (the latest, should there be more)."""
    runs = [r for r in store.fleet_runs(fleet_id) if r["host"] == host]
    return runs[-1] if runs else None


def _stop_worker() -> None:
    """Ask the Celery worker to shut down once this unit is handed back."""
    from celery.worker import state as worker_state
    worker_state.should_stop = 0


def run_unit(client, store_url: str, fleet_id: str, host: str, console: Console) -> str:
    """Run, resume or acknowledge the unit; returns what became of it. KeyboardInterrupt
    (Ctrl-C, SIGTERM) interrupts the run cleanly and is raised again for the caller."""
    say = lambda text: console.print(escape(text), highlight=False)   # noqa: E731
    state.set_state(client, fleet_id, host, "received", received=time.time())
    lease = lease_mod.unit_lease(client, fleet_id, host)
    lease.wait_acquire(on_wait=lambda holder: say(
        f"{host}: unit {fleet_id} is held by {holder!r}: waiting for it (lease)"))
    try:
        try:
            store = Store(store_url)
        except VirtbenchError as exc:
            raise StoreAway(str(exc)) from None
        fleet = store.get_fleet(fleet_id)
        run = host_run(store, fleet_id, host)
        runner = FleetRunner(store, console=console, host=host, fleet=fleet_id, client=client)
        if run is not None and run["status"] == "complete":
            say(f"{host}: unit {fleet_id} delivered again; run {run['id']} is complete: nothing to do")
            state.set_state(client, fleet_id, host, "complete", run=run["id"])
            return "complete"
        if run is not None:
            say(f"{host}: unit {fleet_id} delivered again: resuming run {run['id']}")
            outcome = runner.resume(run["id"])
        else:
            say(f"{host}: unit {fleet_id}: starting study {fleet['study_name']}")
            outcome = runner.start(prepare(Study.from_dict(fleet["study"])))
        if outcome.status == "interrupted":
            state.set_state(client, fleet_id, host, "interrupted", run=outcome.run_id)
            raise KeyboardInterrupt
        final = "complete" if not outcome.failed else "complete-with-failures"
        state.set_state(client, fleet_id, host, "complete", run=outcome.run_id,
                        failed_trials=outcome.failed, finished=time.time())
        say(f"{host}: unit {fleet_id}: run {outcome.run_id} complete"
            + (f", {outcome.failed} trial(s) failed" if outcome.failed else ""))
        return final
    except StoreUnavailable as exc:
        raise StoreAway(str(exc)) from None
    except VirtbenchError as exc:
        # this host cannot run the study (an environment not usable here, a missing tool):
        # the unit ends failed, with why; a new delivery would fail the same way
        state.set_state(client, fleet_id, host, "failed", error=str(exc))
        say(f"{host}: unit {fleet_id} failed: {exc}")
        return "failed"
    finally:
        lease.release()


def register(app) -> None:
    """The unit task on `app`; the worker puts its host name and store URL in app.conf."""
    from celery.exceptions import Reject

    @app.task(name=TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
    def unit(self, fleet_id: str, host: str) -> str:
        conf = self.app.conf
        me = conf.get("virtbench_host")
        if host != me:     # only a misrouted message: give it back for its own host
            raise Reject(f"unit for host {host} reached worker {me}", requeue=True)
        client = conf.get("virtbench_redis")
        console = conf.get("virtbench_console") or Console(stderr=True)
        # Ctrl-C while a unit runs interrupts it (Celery's own handler would only stop the
        # worker once the unit ends, hours later); the Runner does the same for SIGTERM
        old = signal.signal(signal.SIGINT, _interrupt)
        try:
            return run_unit(client, conf.get("virtbench_store"), fleet_id, host, console)
        except StoreAway as exc:
            # every stored trial is kept; the run resumes when the store is back
            pause = store_retry_s()
            state.set_state(client, fleet_id, host, "waiting-for-store", error=str(exc))
            console.print(f"{host}: unit {fleet_id}: {exc}; handing the unit back, "
                          f"next try in {pause:g} s", highlight=False)
            try:
                time.sleep(pause)
            except KeyboardInterrupt:
                _stop_worker()
            raise Reject("store away", requeue=True) from None
        except KeyboardInterrupt:
            console.print(f"{host}: unit {fleet_id} interrupted: handed back to the queue; "
                          "the next worker start resumes its run", highlight=False)
            _stop_worker()
            raise Reject("interrupted", requeue=True) from None
        finally:
            signal.signal(signal.SIGINT, old)


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")
