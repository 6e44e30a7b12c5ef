"""One run's rows out of a store and into another: what `virtbench export --artifact` keeps
(run.json) and `virtbench import` loads (docs/papers.md, "The artifact").

`run_rows(store, run_id)` reads every row of the run (its row of runs, its environments,
trials with their samples, superseded trials, boots, profiles, warnings), each checked as
every reader checks it (rows.py), as JSON-safe values: dates as ISO text, the store's own
row ids left out but a trial's, which its samples name. `load_rows(store, dump)` checks a
dump against the tables of this revision (every column, no other; the types every reader
checks; every row the run's) and writes it in ONE transaction: the run keeps its id, its
trials get new ids and their samples follow them. A run id the store holds already is one
line, and nothing is written. Pure but for the store."""
from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ...core.errors import VirtbenchError
from .rows import DamagedRow, Shape, checked
from .schema import (boots, environments, profiles, runs, samples, superseded_trials,
                     trials, warnings)
from .upgrade import HEAD

# the tables of a run, in the order they are written; samples hang off trials
RUN_TABLES = (runs, environments, trials, samples, superseded_trials, boots, profiles,
              warnings)
KEPT_IDS = {"runs", "trials"}   # the run keeps its id; a trial's, its samples name it


class BadDump(VirtbenchError):
    """A run dump that is not one this store can load: one line naming the table and row."""


def _columns(table: sa.Table) -> list[str]:
    return [c.name for c in table.columns if c.name != "id" or table.name in KEPT_IDS]


def _shape(table: sa.Table) -> Shape:
    return Shape(*[table.c[name] for name in _columns(table)])


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def run_rows(store, run_id: str) -> dict:
    """Every row of run `run_id` (resolved as any command resolves it), JSON-safe:
    {"revision": HEAD, "run": id, table name: [row, ...]}."""
    run_id = store.resolve_run_id(run_id)
    dump: dict[str, Any] = {"revision": HEAD, "run": run_id}
    trial_ids = sa.select(trials.c.id).where(trials.c.run_id == run_id)
    with store.engine.connect() as c:
        for table in RUN_TABLES:
            shape = _shape(table)
            where = (table.c.trial_id.in_(trial_ids) if table is samples
                     else table.c.run_id == run_id if table is not runs
                     else table.c.id == run_id)
            order = table.c.id
            rows = checked(shape, c.execute(sa.select(*shape.columns()).where(where)
                                            .order_by(order)), run_id, table.name)
            dump[table.name] = [{k: _plain(v) for k, v in r.items()} for r in rows]
    return dump


def _dated(table: sa.Table, row: dict) -> dict:
    """ISO text of the date columns back as datetimes (anything else: left for the check)."""
    out = dict(row)
    for col in table.columns:
        value = out.get(col.name)
        if isinstance(col.type, sa.DateTime) and isinstance(value, str):
            try:
                out[col.name] = datetime.fromisoformat(value)
            except ValueError:
                pass
    return out


def checked_dump(dump: Any) -> tuple[str, dict[str, list[dict]]]:
    """The run id and the rows of `dump` checked against this revision's tables: one line
    (BadDump) naming the first table and row that is not right. Pure."""
    if not isinstance(dump, dict) or not isinstance(dump.get("run"), str):
        raise BadDump("run.json is not a run's rows (no run id); export the run again")
    if dump.get("revision") != HEAD:
        raise BadDump(f"run.json holds rows of store revision {dump.get('revision')!r}; this "
                      f"virtbench loads revision {HEAD}: import it with the virtbench that "
                      "exported it")
    run_id, out = dump["run"], {}
    for table in RUN_TABLES:
        rows = dump.get(table.name)
        if not isinstance(rows, list):
            raise BadDump(f"run.json has no list of {table.name}; export the run again")
        shape, want = _shape(table), set(_columns(table))
        out[table.name] = []
        for i, row in enumerate(rows):
            what = f"run.json's {table.name} row {i + 1}"
            if not isinstance(row, dict) or set(row) != want:
                raise BadDump(f"{what} does not have the columns of {table.name} (store "
                              f"revision {HEAD}); export the run again")
            try:
                good = shape.check(_dated(table, row), run_id, what)
            except DamagedRow as exc:
                raise BadDump(f"{what}: {exc.problem}; export the run again") from None
            if good.get("run_id", good.get("id") if table is runs else run_id) != run_id:
                raise BadDump(f"{what} is of another run than {run_id}; export the run again")
            out[table.name].append(good)
    if len(out["runs"]) != 1:
        raise BadDump(f"run.json holds {len(out['runs'])} rows of runs, not one; export the "
                      "run again")
    ids = {t["id"] for t in out["trials"]}
    if any(s["trial_id"] not in ids for s in out["samples"]):
        raise BadDump("run.json has a sample of a trial it does not hold; export the run again")
    return run_id, out


def already_there(store, run_id: str) -> VirtbenchError:
    return VirtbenchError(f"run {run_id} is in {store.shown} already; nothing was imported "
                          "(import it into another store with --store URL)")


def load_rows(store, dump: Any, detail: dict | None = None) -> str:
    """Write the run of `dump` into `store` in one transaction; its id. `detail` is merged
    into the run's detail (where it was imported from)."""
    run_id, rows = checked_dump(dump)
    with store.engine.begin() as c:
        if c.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first():
            raise already_there(store, run_id)
        run = dict(rows["runs"][0])
        run["detail"] = {**(run["detail"] or {}), **(detail or {})}
        c.execute(runs.insert().values(run))
        new_ids = {}
        for t in rows["trials"]:
            new_ids[t["id"]] = c.execute(trials.insert().values(
                {k: v for k, v in t.items() if k != "id"})).inserted_primary_key[0]
        for table in (environments, superseded_trials, boots, profiles, warnings):
            if rows[table.name]:
                c.execute(table.insert(), rows[table.name])
        if rows["samples"]:
            c.execute(samples.insert(), [{**s, "trial_id": new_ids[s["trial_id"]]}
                                         for s in rows["samples"]])
    return run_id
