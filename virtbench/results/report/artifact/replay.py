"""`virtbench run --replay PATH` (docs/papers.md, "The artifact"): an artifact's study run
again here as a new run, compared with the artifact's run.

The study is the one the artifact's run stored (study.json: every flag applied, its
baseline and seed), checked as `run --resume` checks a stored study (a key this virtbench
does not know is refused, not dropped). The artifact's run is imported first when the store
lacks it (the same check and one transaction as `virtbench import`), so that the new run is
compared with it as `virtbench compare A B` compares two stored runs. The new run's detail
says what it replays (`replays`: the artifact as given, its manifest's SHA-256, the run)."""
from __future__ import annotations

from dataclasses import dataclass

from ....core.errors import VirtbenchError
from .archive import read_artifact
from .build import opened
from .load import import_dump, provenance
from ....study.design import Study, study_to_resume


@dataclass(frozen=True)
class ReplaySource:
    """An artifact opened to be replayed: where it was read, its files, its run's rows
    (checked by build.opened), the run's id and its study."""
    path: str
    files: dict
    dump: dict
    run_id: str
    study: Study

    def detail(self) -> dict:
        """What the replay's run records of what it replays."""
        return {"replays": {**provenance(self.files, self.path), "run": self.run_id}}


def open_replay(path: str) -> ReplaySource:
    """The artifact at `path`, whole (every checksum), and its run's study, checked; one
    line when either is not (nothing is run or stored)."""
    files = read_artifact(path)
    _, dump = opened(files, path)
    run = dump["runs"][0]
    return ReplaySource(path, files, dump, run["id"], study_to_resume(run))


def refuse_flags(study_file: str | None, resume: str | None, flags: list[str]) -> None:
    """--replay runs the stored study as it is: a study file, --resume or a study flag
    beside it is one line."""
    if study_file:
        raise VirtbenchError(f"run --replay runs the artifact's own study; drop the study "
                             f"file {study_file}")
    if resume:
        raise VirtbenchError("run: give --replay PATH or --resume RUN_ID, not both")
    if flags:
        raise VirtbenchError(f"run --replay runs the study as the artifact's run stored it "
                             f"(every flag included); drop {flags[0]}")


def ensure_imported(store, source: ReplaySource) -> bool:
    """Import the artifact's run unless the store holds it; True when it was imported."""
    try:
        if store.resolve_run_id(source.run_id) == source.run_id:
            return False
    except VirtbenchError:
        pass
    import_dump(store, source.dump, source.files, source.path)
    return True
