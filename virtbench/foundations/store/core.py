"""Where runs live: a SQLAlchemy schema over SQLite (default) or PostgreSQL (a team store).

A trial and its samples are written in one transaction the moment the trial ends, so an
interrupted run holds exactly the trials that finished: nothing half-written, nothing twice.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from ...core.errors import VirtbenchError
from .connection import (
    guarded,
    make_engine,
    no_store,
    normalize_url,
    open_error,
    shown_url,
    sqlite_path,
)
from .upgrade import check_readable, current_revision, open_schema
from .values import jsonable, new_run_id, now
from .rows import (BOOT, DETAIL, ENVIRONMENT, EVIDENCE, FLEET, PROFILE, RUN, SAMPLE, SERVED,
                   SLOT, SUPERSEDED, TRIAL, WARNING, checked, listed_run, text_or_none)
from .record import TrialRecord
from .schema import (
    boots,
    environments,
    fleets,
    profiles,
    runs,
    samples,
    superseded_trials,
    trials,
    warnings,
)

PREFIX_SHOWN = 5     # the candidates an ambiguous run-id prefix names

class Store:
    def __init__(self, url: str | None = None, read_only: bool = False, create: bool = True):
        """Open the store at `url` (default: default_url()).

        `read_only` (the commands that only read: runs, report, compare, history, serve,
        fleet status): nothing is ever written through it (make_engine: SQLite mode=ro,
        PostgreSQL read-only transactions); a store that does not exist is one line, exit 2,
        and nothing is created (no directory, no file, no tables); a store at another
        revision than HEAD is one line (an older one names `virtbench store upgrade`),
        never upgraded. Otherwise the store is brought to HEAD (created when `create`, the
        default; `create=False`, `run --resume`: a store that does not exist is the same one
        line, nothing created)."""
        self.url = normalize_url(url)
        self.shown = shown_url(self.url)      # for messages: no password
        path = sqlite_path(self.url)
        existing = read_only or not create
        if existing and path is not None and not path.is_file():
            raise no_store(str(path))
        if path is not None and not existing:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if existing:        # looked at read-only first: a writing connection writes
                self.engine = make_engine(self.url, read_only=True)
                self._look(path, read_only)
            if not read_only:
                self.engine = make_engine(self.url)
                open_schema(self.engine, self.shown)
        except (SQLAlchemyError, ImportError) as exc:
            raise open_error(exc, self.shown) from None

    def _look(self, path, read_only: bool) -> None:
        """A store that does not exist is one line; read_only: one at another revision than
        HEAD too. Otherwise the engine stays open when read_only, is closed if not."""
        try:
            revision = current_revision(self.engine)
            if revision is None and not sa.inspect(self.engine).has_table("runs"):
                raise no_store(str(path) if path is not None else self.shown)
            if read_only:
                check_readable(revision, self.shown)
        except BaseException:
            self.engine.dispose()
            raise
        if not read_only:
            self.engine.dispose()

    # -- runs ----------------------------------------------------------------------------
    def create_run(self, study: dict, seed: int, quick: bool, version: str, host: str,
                   fleet: str | None = None, run_id: str | None = None,
                   series: str | None = None) -> str:
        """A new run, running; `series`: the named series it is tagged into (`--series`)."""
        given = run_id
        for _ in range(8):          # a made-up id taken by a run of the same second: another
            run_id = given or new_run_id()
            try:
                with self.engine.begin() as c:
                    c.execute(runs.insert().values(
                        id=run_id, study_name=study["name"], study=study, seed=seed, quick=quick,
                        status="running", started=now(), virtbench_version=version, host=host,
                        fleet=fleet, series=series))
                return run_id
            except sa.exc.IntegrityError:
                if given:
                    raise
        raise VirtbenchError(f"store {self.shown}: no free run id after 8 tries")

    def set_run_status(self, run_id: str, status: str, finished: bool = True) -> None:
        with self.engine.begin() as c:
            c.execute(runs.update().where(runs.c.id == run_id).values(
                status=status, finished=now() if finished else None))

    def update_run_detail(self, run_id: str, **parts) -> dict:
        """Merge `parts` into the run's detail (runs.detail, a JSON object); returns it."""
        with self.engine.begin() as c:
            row = c.execute(sa.select(*DETAIL.columns()).where(runs.c.id == run_id)).first()
            if row is not None:
                row = DETAIL.check(row, run_id, "its row of runs")
            detail = dict((row["detail"] if row is not None else None) or {})
            detail.update(jsonable(parts))
            c.execute(runs.update().where(runs.c.id == run_id).values(detail=detail))
        return detail

    def get_run(self, run_id: str | None = None) -> dict:
        """A run by id, or the latest when run_id is None; a one-line error if absent."""
        with self.engine.connect() as c:
            if run_id is None:
                row = c.execute(sa.select(*RUN.columns()).order_by(runs.c.started.desc())
                                .limit(1)).first()
                if row is None:
                    raise VirtbenchError(f"store {self.shown} holds no runs yet; "
                                         "start one with `virtbench run`")
            else:
                row = c.execute(sa.select(*RUN.columns()).where(
                    runs.c.id == self.resolve_run_id(run_id))).first()
        return RUN.check(row, text_or_none(row.id), "its row of runs")

    def resolve_run_id(self, text: str) -> str:
        """The run whose id is `text` or, when none is, the one run whose id starts with it;
        one line when no run does, or when several do (naming them)."""
        with self.engine.connect() as c:
            if text and c.execute(sa.select(runs.c.id).where(runs.c.id == text)).first():
                return text
            found = [r.id for r in c.execute(
                sa.select(runs.c.id).where(sa.func.substr(runs.c.id, 1, len(text)) == text)
                .order_by(runs.c.id).limit(PREFIX_SHOWN + 1))] if text else []
        if len(found) == 1:
            return found[0]
        if not found:
            raise VirtbenchError(f"no run {text!r} in {self.shown}; "
                                 "list runs with `virtbench runs`")
        more = ", ..." if len(found) > PREFIX_SHOWN else ""
        raise VirtbenchError(f"run id {text!r} is ambiguous in {self.shown}: "
                             f"{', '.join(found[:PREFIX_SHOWN])}{more}; give more of it")

    def list_runs(self, limit: int | None = 20, **where: str | None) -> list[dict]:
        """The latest runs first (`limit` of them; None: all); `where`: only those whose
        study_name, host, status or series equals the value given (None: any). A damaged
        row is listed with status "damaged" and its line under "damaged" (listed_run)."""
        q = sa.select(*RUN.columns())
        for column, value in where.items():
            if column not in ("study_name", "host", "status", "series"):
                raise ValueError(f"list_runs: no filter on {column!r}")
            if value is not None:
                q = q.where(runs.c[column] == value)
        q = q.order_by(runs.c.started.desc(), runs.c.id.desc())
        with self.engine.connect() as c:
            rows = c.execute(q if limit is None else q.limit(limit))
            return [listed_run(r) for r in rows]

    def run_facets(self) -> dict[str, list[str]]:
        """The distinct studies, hosts, statuses and series of the store's runs, sorted: what
        the web view's filters offer."""
        with self.engine.connect() as c:
            return {col: sorted(v for (v,) in c.execute(sa.select(runs.c[col]).distinct())
                                if isinstance(v, str))
                    for col in ("study_name", "host", "status", "series")}

    def complete_runs(self, series: str | None = None, host: str | None = None) -> list[dict]:
        """Every complete run, oldest first (what `virtbench history` lines up); only those
        tagged into `series`, only those of `host`, when given. A damaged row is listed as
        list_runs lists it (status "damaged", its line under "damaged")."""
        q = sa.select(*RUN.columns()).where(runs.c.status == "complete")
        if series is not None:
            q = q.where(runs.c.series == series)
        if host is not None:
            q = q.where(runs.c.host == host)
        with self.engine.connect() as c:
            return [listed_run(r) for r in c.execute(q.order_by(runs.c.started, runs.c.id))]

    def series_names(self) -> list[str]:
        """The named series the store's runs are tagged into, sorted."""
        with self.engine.connect() as c:
            return sorted(r[0] for r in c.execute(
                sa.select(runs.c.series).where(runs.c.series.is_not(None)).distinct())
                if isinstance(r[0], str))

    # -- fleets --------------------------------------------------------------------------
    def create_fleet(self, study: dict, hosts: list[str]) -> str:
        fleet_id = "fleet-" + new_run_id()
        with self.engine.begin() as c:
            c.execute(fleets.insert().values(id=fleet_id, study_name=study["name"], study=study,
                                             hosts=list(hosts), created=now()))
        return fleet_id

    def get_fleet(self, fleet_id: str) -> dict:
        with self.engine.connect() as c:
            row = c.execute(sa.select(*FLEET.columns()).where(fleets.c.id == fleet_id)).first()
        if row is None:
            raise VirtbenchError(f"no fleet run {fleet_id!r} in {self.shown}; "
                                 "list them with `virtbench fleet status`")
        return FLEET.check(row, None, f"the row of fleet {fleet_id} in fleets")

    def list_fleets(self, limit: int = 20) -> list[dict]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(*FLEET.columns()).order_by(fleets.c.created.desc())
                             .limit(limit))
            return [FLEET.check(r, None, f"the row of fleet {r.id} in fleets") for r in rows]

    def fleet_runs(self, fleet_id: str) -> list[dict]:
        """The runs of a fleet run, oldest first (a host has one, or more if it was rerun)."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(*RUN.columns()).where(runs.c.fleet == fleet_id)
                             .order_by(runs.c.started))
            return [RUN.check(r, text_or_none(r.id), "its row of runs") for r in rows]

    # -- environments --------------------------------------------------------------------
    def upsert_environment(self, run_id: str, label: str, **values) -> None:
        with self.engine.begin() as c:
            existing = c.execute(sa.select(environments.c.id).where(
                environments.c.run_id == run_id, environments.c.label == label)).first()
            if existing is None:
                c.execute(environments.insert().values(run_id=run_id, label=label, **values))
            else:
                c.execute(environments.update().where(environments.c.id == existing.id)
                          .values(**values))

    def environments(self, run_id: str) -> list[dict]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(*ENVIRONMENT.columns())
                             .where(environments.c.run_id == run_id)
                             .order_by(environments.c.id))
            return checked(ENVIRONMENT, rows, run_id, "environments")

    # -- trials and samples ----------------------------------------------------------------
    def record_trial(self, run_id: str, record: TrialRecord) -> int:
        """One trial and all its samples (record.py), atomically; its id."""
        with self.engine.begin() as c:
            trial_id = c.execute(trials.insert().values(record.row(run_id))
                                 ).inserted_primary_key[0]
            if record.samples:
                c.execute(samples.insert(), record.sample_rows(trial_id))
        return trial_id

    def done_slots(self, run_id: str) -> set[tuple[str, str, int]]:
        """(environment, benchmark, trial) of every trial already recorded (warm-ups too)."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(*SLOT.columns()).where(trials.c.run_id == run_id))
            return {(r["environment"], r["benchmark"], r["trial"])
                    for r in checked(SLOT, rows, run_id, "trials")}

    def supersede_failed(self, run_id: str) -> int:
        """Move the run's failed trials to superseded_trials (kept, out of the run's trials)
        so that they are run again; returns how many. Their evidence samples move into
        their row's detail ("samples"). One transaction."""
        cols = [c.name for c in trials.columns if c.name not in ("id", "detail")]
        with self.engine.begin() as c:
            rows = checked(TRIAL, c.execute(sa.select(*TRIAL.columns()).where(
                trials.c.run_id == run_id, trials.c.status == "failed")), run_id, "trials")
            if not rows:
                return 0
            ids = [r["id"] for r in rows]
            kept: dict[int, list[dict]] = {}
            for s in checked(EVIDENCE, c.execute(sa.select(*EVIDENCE.columns()).where(
                    samples.c.trial_id.in_(ids)).order_by(samples.c.id)), run_id, "samples"):
                kept.setdefault(s["trial_id"], []).append(
                    {"metric": s["metric"], "value": s["value"], "unit": s["unit"],
                     "higher_is_better": s["higher_is_better"]})
            stamp = now()

            def detail(r: dict) -> dict | None:
                d = dict(r["detail"] or {})
                if r["id"] in kept:
                    d["samples"] = kept[r["id"]]
                return d or None
            c.execute(superseded_trials.insert(), [
                {"trial_id": r["id"], "superseded": stamp, "detail": detail(r),
                 **{k: r[k] for k in cols}} for r in rows])
            c.execute(samples.delete().where(samples.c.trial_id.in_(ids)))
            c.execute(trials.delete().where(trials.c.id.in_(ids)))
        return len(rows)

    def superseded_trials(self, run_id: str) -> list[dict]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(*SUPERSEDED.columns())
                             .where(superseded_trials.c.run_id == run_id)
                             .order_by(superseded_trials.c.id))
            return checked(SUPERSEDED, rows, run_id, "superseded_trials")

    def trials(self, run_id: str, include_warmup: bool = False) -> list[dict]:
        """The run's trials in run order; warm-up trials only when asked for."""
        q = sa.select(*TRIAL.columns()).where(trials.c.run_id == run_id)
        if not include_warmup:
            q = q.where(trials.c.warmup == sa.false())
        with self.engine.connect() as c:
            rows = c.execute(q.order_by(trials.c.seq))
            return checked(TRIAL, rows, run_id, "trials")

    def samples(self, run_id: str, include_warmup: bool = False,
                include_failed: bool = False) -> list[dict]:
        """Every sample of a run's successful trials with its trial's environment, benchmark,
        index and status, and its metric's identity (base_metric, scope, instance). Warm-up trials' samples only when asked for, and failed trials'
        (what they measured before failing) likewise: neither is ever statistics."""
        q = (sa.select(*SAMPLE.columns())
             .select_from(trials.join(samples, samples.c.trial_id == trials.c.id))
             .where(trials.c.run_id == run_id)
             .order_by(trials.c.seq, samples.c.id))
        if not include_warmup:
            q = q.where(trials.c.warmup == sa.false())
        if not include_failed:
            q = q.where(trials.c.status == "ok")
        with self.engine.connect() as c:
            out = [SAMPLE.check(r, run_id, f"its row {r.sample_id} of samples")
                   for r in c.execute(q)]
        for row in out:
            del row["sample_id"]
        return out

    # -- boots -----------------------------------------------------------------------------
    def record_boot(self, run_id: str, environment: str, reason: str,
                    boot_s: float | None = None) -> int:
        """A new start of `environment` in this run; returns its number (1, 2, ...)."""
        with self.engine.begin() as c:
            last = c.execute(sa.select(sa.func.max(boots.c.boot)).where(
                boots.c.run_id == run_id, boots.c.environment == environment)).scalar()
            number = (last or 0) + 1
            c.execute(boots.insert().values(run_id=run_id, environment=environment, boot=number,
                                            reason=reason, started=now(), boot_s=boot_s))
        return number

    def end_boot(self, run_id: str, environment: str, boot: int, lost: str | None = None) -> None:
        with self.engine.begin() as c:
            c.execute(boots.update().where(boots.c.run_id == run_id,
                                           boots.c.environment == environment,
                                           boots.c.boot == boot)
                      .values(ended=now(), lost=lost))

    def boots(self, run_id: str) -> list[dict]:
        """Every boot of the run with the trial numbers it served."""
        with self.engine.connect() as c:
            rows = checked(BOOT, c.execute(sa.select(*BOOT.columns()).where(
                boots.c.run_id == run_id).order_by(boots.c.id)), run_id, "boots")
            served = checked(SERVED, c.execute(
                sa.select(*SERVED.columns())
                .where(trials.c.run_id == run_id, trials.c.boot.is_not(None))
                .order_by(trials.c.seq)), run_id, "trials")
        for row in rows:
            row["trials"] = [(t["benchmark"], t["trial"]) for t in served
                             if t["environment"] == row["environment"]
                             and t["boot"] == row["boot"]]
        return rows

    # -- warnings ------------------------------------------------------------------------
    # -- exit profiles -------------------------------------------------------------------
    def record_profile(self, run_id: str, environment: str, benchmark: str, *,
                       profile: dict | None, error: str | None = None,
                       wall_s: float | None = None) -> None:
        """One environment x benchmark's profile (or why there is none); a second one for
        the same pair (a resumed run) replaces the first."""
        with self.engine.begin() as c:
            c.execute(profiles.delete().where(profiles.c.run_id == run_id,
                                              profiles.c.environment == environment,
                                              profiles.c.benchmark == benchmark))
            c.execute(profiles.insert().values(
                run_id=run_id, environment=environment, benchmark=benchmark,
                status="ok" if error is None else "failed", error=error, profile=profile,
                wall_s=wall_s, recorded=now()))

    def profiles(self, run_id: str) -> list[dict]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(*PROFILE.columns()).where(profiles.c.run_id == run_id)
                             .order_by(profiles.c.id))
            return checked(PROFILE, rows, run_id, "profiles")

    def add_warning(self, run_id: str, kind: str, message: str, environment: str | None = None,
                    benchmark: str | None = None, metric: str | None = None) -> None:
        with self.engine.begin() as c:
            c.execute(warnings.insert().values(run_id=run_id, kind=kind, message=message,
                                               environment=environment, benchmark=benchmark,
                                               metric=metric))

    def warnings(self, run_id: str) -> list[dict]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(*WARNING.columns()).where(warnings.c.run_id == run_id)
                             .order_by(warnings.c.id))
            return [{k: v for k, v in r.items() if k not in ("id", "run_id")}
                    for r in checked(WARNING, rows, run_id, "warnings")]


# every public method: a lost store is one StoreUnavailable line, never a traceback
for _name, _method in list(vars(Store).items()):
    if callable(_method) and not _name.startswith("_"):
        setattr(Store, _name, guarded(_method))


