"""Where runs live: a SQLAlchemy schema over SQLite (default) or PostgreSQL (a team store), with
a schema revision (Alembic) so that an older store is upgraded (by the commands that write,
and `virtbench store upgrade`, which backs a SQLite file up first) and a newer one refused;
the commands that only read open it read-only and never upgrade it.

A trial and its samples are written in one transaction the moment the trial ends, so an
interrupted run holds exactly the trials that finished: nothing half-written, nothing twice.

schema.py: the tables; core.py: the Store; record.py and sample.py: a trial and its samples
as they are recorded; connection.py: its URL, its engine (read-write or read-only), SQLite
settings, the store going away and its disk full; upgrade.py: opening a store at the head
revision, and `store upgrade`; backup.py: the backup of a SQLite store before that;
values.py: JSON-safe values, run ids, output tails; revisions/: the Alembic revisions.
"""
from .connection import StoreFull, StoreUnavailable, default_url, normalize_url
from .rows import DamagedRow
from .core import Store
from .record import TrialRecord
from .sample import Sample
from .values import OUTPUT_TAIL_BYTES, jsonable, new_run_id, now, output_tail
from .upgrade import (
    HEAD,
    REVISIONS,
    StoreTooNew,
    StoreTooOld,
    Upgraded,
    add_legacy_columns as upgrade,
    upgrade_store,
)

__all__ = ["Store", "Sample", "TrialRecord", "StoreUnavailable", "StoreFull", "StoreTooNew", "StoreTooOld",
           "DamagedRow", "default_url", "normalize_url", "jsonable", "now", "new_run_id",
           "upgrade", "upgrade_store", "Upgraded", "HEAD", "REVISIONS", "OUTPUT_TAIL_BYTES",
           "output_tail"]
