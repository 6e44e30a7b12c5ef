"""Where runs live: a SQLAlchemy schema over SQLite (default) or PostgreSQL (a team store), with
a schema revision (Alembic) so that an older store is upgraded and a newer one refused.

A trial and its samples are written in one transaction the moment the trial ends, so an
interrupted run holds exactly the trials that finished: nothing half-written, nothing twice.

schema.py: the tables; core.py: the Store; connection.py: its URL, SQLite settings and
the store going away; upgrade.py: opening a store at the head revision;
revisions/: the Alembic revisions.
"""
from .connection import StoreUnavailable, default_url, normalize_url
from .core import (
    OUTPUT_TAIL_BYTES,
    Sample,
    Store,
    jsonable,
    new_run_id,
    now,
    output_tail,
)
from .upgrade import HEAD, REVISIONS, add_legacy_columns as upgrade

__all__ = ["Store", "Sample", "StoreUnavailable", "default_url", "normalize_url", "jsonable", "now", "new_run_id",
           "upgrade", "HEAD", "REVISIONS", "OUTPUT_TAIL_BYTES", "output_tail"]
