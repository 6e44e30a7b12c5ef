"""An artifact's run loaded into a store (`virtbench import`, and `run --replay` when the
store lacks the run it replays): its files checked first, once, by the caller
(build.opened, before a store is opened), then the run's rows written in one transaction
(foundations/store/transfer.py), keeping its id; its detail says where it came from
(`imported`: the artifact as given, its manifest's SHA-256)."""
from __future__ import annotations

from ....foundations.store.transfer import load_rows
from ....foundations.store.values import now
from .manifest import MANIFEST, sha256


def import_dump(store, dump: dict, files: dict[str, bytes], source: str) -> str:
    """Load the run rows `dump` of the artifact `files` (read from `source` and opened by
    build.opened) into `store`; the run's id. One line, and nothing written, when the store
    holds the run."""
    return load_rows(store, dump, {"imported": provenance(files, source)})


def provenance(files: dict[str, bytes], source: str) -> dict:
    """Where a run came from: the artifact's path as given, its manifest's SHA-256, when."""
    return {"artifact": source, "manifest_sha256": sha256(files[MANIFEST]),
            "at": now().isoformat()}
