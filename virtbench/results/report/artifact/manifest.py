"""An artifact's manifest and checksums, and the check of an artifact read back. Pure.

An artifact is its files, relative POSIX path -> bytes. SHA256SUMS holds the SHA-256 of
every other file, in sha256sum's format (`sha256sum -c SHA256SUMS` checks it); artifact.json
(the manifest) says what the artifact is: its format version, the virtbench that made it,
the run, the store's schema revision, the report's schema version, and each file with its
size and SHA-256. `verified(files)` refuses, in one line, an artifact whose files are not
exactly those SHA256SUMS names, any whose bytes differ from its checksum there or in the
manifest (whose own SHA-256 thus seals the artifact), or one of a format or report schema
version this virtbench does not read."""
from __future__ import annotations

import hashlib
import json
import re

from ....core.errors import VirtbenchError

FORMAT_VERSION = 1
SUMS, MANIFEST, RUN_ROWS, STUDY = "SHA256SUMS", "artifact.json", "run.json", "study.json"
SUM_LINE = re.compile(r"([0-9a-f]{64})  (\S(?:.*\S)?)")
MAX_FILES = 1000
MAX_BYTES = 1 << 30            # an artifact's files, all together: 1 GiB at most


class TamperedArtifact(VirtbenchError):
    """An artifact that is not what `virtbench export` wrote: one line, nothing imported."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checksums(files: dict[str, bytes]) -> str:
    """SHA256SUMS's text: one `HASH  NAME` line per file but itself, sorted by name."""
    return "".join(f"{sha256(files[n])}  {n}\n" for n in sorted(files) if n != SUMS)


def manifest(files: dict[str, bytes], facts: dict) -> dict:
    """artifact.json: `facts` (virtbench, run, store_revision, report_schema_version, ...)
    with the format version and every file (but itself and SHA256SUMS) with size and hash."""
    return {"artifact_format": FORMAT_VERSION, **facts,
            "files": [{"name": n, "bytes": len(files[n]), "sha256": sha256(files[n])}
                      for n in sorted(files) if n not in (SUMS, MANIFEST)]}


def sealed(files: dict[str, bytes], facts: dict) -> dict[str, bytes]:
    """`files` with artifact.json and SHA256SUMS added."""
    out = dict(files)
    out[MANIFEST] = (json.dumps(manifest(files, facts), indent=2) + "\n").encode()
    out[SUMS] = checksums(out).encode()
    return out


def _sums(files: dict[str, bytes]) -> dict[str, str]:
    """SHA256SUMS read: name -> hash; one line when it is missing or not in that format."""
    if SUMS not in files:
        raise TamperedArtifact(f"artifact: {SUMS} is missing; an artifact `virtbench export` "
                               "wrote holds it (export the run again)")
    out: dict[str, str] = {}
    for i, line in enumerate(files[SUMS].decode("utf-8", "replace").splitlines(), 1):
        m = SUM_LINE.fullmatch(line)
        if not m or m[2] in out or m[2] == SUMS:
            raise TamperedArtifact(f"artifact: {SUMS} line {i} is not `SHA256  NAME` of a "
                                   "file named once; export the run again")
        out[m[2]] = m[1]
    return out


def verified(files: dict[str, bytes], report_schema: str) -> dict:
    """The manifest of an artifact whose every file is the one its checksum names, and of
    a format and report schema this virtbench reads; else TamperedArtifact (one line)."""
    sums = _sums(files)
    missing = sorted(set(sums) - set(files))
    extra = sorted(set(files) - set(sums) - {SUMS})
    if missing:
        raise TamperedArtifact(f"artifact: {missing[0]} is missing (SHA256SUMS names it); "
                               "nothing was imported")
    if extra:
        raise TamperedArtifact(f"artifact: {extra[0]} is not one of its files (SHA256SUMS "
                               "does not name it); remove it, nothing was imported")
    for name in sorted(sums):
        if sha256(files[name]) != sums[name]:
            raise TamperedArtifact(f"artifact: {name} does not match its SHA-256 in "
                                   "SHA256SUMS (changed since it was exported); nothing was "
                                   "imported")
    for name in (MANIFEST, RUN_ROWS, STUDY):
        if name not in files:
            raise TamperedArtifact(f"artifact: {name} is missing; nothing was imported")
    return _read_manifest(files, report_schema)


def _read_manifest(files: dict[str, bytes], report_schema: str) -> dict:
    try:
        facts = json.loads(files[MANIFEST])
    except ValueError:
        facts = None
    if not isinstance(facts, dict):
        raise TamperedArtifact(f"artifact: {MANIFEST} is not a JSON object; nothing was "
                               "imported")
    if facts.get("artifact_format") != FORMAT_VERSION:
        raise TamperedArtifact(f"artifact: format version {facts.get('artifact_format')!r} "
                               f"is not one this virtbench reads ({FORMAT_VERSION}); import "
                               "it with the virtbench that exported it")
    schema = facts.get("report_schema_version")
    if not isinstance(schema, str) or schema.split(".")[0] != report_schema.split(".")[0]:
        raise TamperedArtifact(f"artifact: report schema version {schema!r} is not one this "
                               f"virtbench reads ({report_schema}); import it with the "
                               "virtbench that exported it")
    _check_listed(files, facts)
    return facts


def _check_listed(files: dict[str, bytes], facts: dict) -> None:
    """The manifest's `files` are every file but itself and SHA256SUMS, each with its
    SHA-256: so the manifest's own SHA-256 seals the whole artifact (a file changed with
    SHA256SUMS rewritten to match is still refused)."""
    listed = facts.get("files")
    try:
        hashes = {f["name"]: f["sha256"] for f in listed}
    except (TypeError, KeyError):
        raise TamperedArtifact(f"artifact: {MANIFEST}'s files are not a list of name and "
                               "sha256; nothing was imported") from None
    for name in sorted(set(files) - {SUMS, MANIFEST}):
        if hashes.get(name) != sha256(files[name]):
            raise TamperedArtifact(f"artifact: {name} does not match its SHA-256 in "
                                   f"{MANIFEST} (changed since it was exported); nothing "
                                   "was imported")
    extra = sorted(set(hashes) - set(files))
    if extra:
        raise TamperedArtifact(f"artifact: {extra[0]} is missing ({MANIFEST} names it); "
                               "nothing was imported")


def json_of(files: dict[str, bytes], name: str):
    """A JSON file of a verified artifact, parsed; one line when it is not JSON."""
    try:
        return json.loads(files[name])
    except ValueError:
        raise TamperedArtifact(f"artifact: {name} is not JSON; nothing was imported") from None
