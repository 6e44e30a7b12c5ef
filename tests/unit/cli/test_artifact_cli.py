"""`virtbench export RUN --artifact PATH` and `virtbench import PATH` end to end
(interface/cli/artifact.py, results/report/artifact/, docs/papers.md "The artifact"): a run
exported to a directory and to a .tar.gz, imported into a fresh store where `report` reads
the same results; a tampered artifact (a byte changed, a file missing or extra, a link or a
`..` member in the tar, an unknown format version) and a run the store holds already are
refused in one line, exit 2, nothing imported; a PATH that exists is refused, nothing
written."""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile

import shutil
import sys

import pytest

from clikit import refused, run_cli
from storekit import guest_and_native
from virtbench.foundations.store import Store
from virtbench.interface.cli import commands as cli


@pytest.fixture
def stored(tmp_path):
    """A store at tmp_path/S.db with one run (native, and a guest against it); (URL, run)."""
    return guest_and_native(tmp_path)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One run exported once to art/ (tampered tests change a copy): (its store's URL, the
    run, the directory)."""
    where = tmp_path_factory.mktemp("made")
    url, run = guest_and_native(where)
    assert cli.main(["export", run, "--artifact", str(where / "art"), "--store", url]) == 0
    return url, run, where / "art"


def copied(made, tmp_path):
    """A copy of the exported art/ in tmp_path."""
    shutil.copytree(made[2], tmp_path / "art")
    return tmp_path / "art"




def exported(capsys, stored, path) -> str:
    url, run = stored
    code, out, err = run_cli(capsys, "export", run, "--artifact", str(path), "--store", url)
    assert code == 0, err
    return out


def runs_in(path) -> list[str]:
    store = Store(f"sqlite:///{path}", read_only=True)
    try:
        return [r["id"] for r in store.list_runs()]
    finally:
        store.engine.dispose()


def test_a_run_is_exported_to_a_directory_with_every_file_and_their_checksums(
        capsys, stored, tmp_path):
    out = exported(capsys, stored, tmp_path / "art")
    _, run = stored
    art = tmp_path / "art"
    names = sorted(str(p.relative_to(art)) for p in art.rglob("*") if p.is_file())
    for want in ("README.md", "SHA256SUMS", "artifact.json", "study.json", "run.json",
                 "samples.csv", "samples.json", "fingerprints.json", "report/report.txt",
                 "report/report.md", "report/report.json", "report/report.csv",
                 "report/report.html", "report/report.tex"):
        assert want in names
    sums = dict(reversed(line.split("  ", 1)) for line in
                (art / "SHA256SUMS").read_text().splitlines())
    assert sorted(sums) == [n for n in names if n != "SHA256SUMS"]
    for name, digest in sums.items():
        assert hashlib.sha256((art / name).read_bytes()).hexdigest() == digest
    manifest = json.loads((art / "artifact.json").read_text())
    assert manifest["artifact_format"] == 1 and manifest["run"] == run
    assert manifest["store_revision"] and manifest["report_schema_version"].startswith("3.")
    readme = (art / "README.md").read_text()
    assert f"virtbench import {art}" in readme and f"virtbench run --replay {art}" in readme
    rows = (art / "samples.csv").read_text().splitlines()
    assert len(rows) == 1 + 8 and rows[0].startswith("run,environment,benchmark")
    fps = json.loads((art / "fingerprints.json").read_text())
    assert fps["environments"]["native"]["metadata"] == {"cpu": "x86"}
    assert f"wrote {art}: run {run}" in out


def test_a_tar_gz_holds_the_same_files_under_one_directory(capsys, stored, tmp_path):
    exported(capsys, stored, tmp_path / "art.tar.gz")
    with tarfile.open(tmp_path / "art.tar.gz") as tar:
        names = tar.getnames()
    assert "art/SHA256SUMS" in names and "art/run.json" in names
    assert all(n == "art" or n.startswith("art/") for n in names)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


@pytest.mark.parametrize("name", ["art", "art.tar.gz"])
def test_an_import_into_a_fresh_store_reads_the_same_report(capsys, stored, tmp_path, name):
    url, run = stored
    exported(capsys, stored, tmp_path / name)
    fresh = f"sqlite:///{tmp_path / 'new' / 'T.db'}"
    code, out, err = run_cli(capsys, "import", str(tmp_path / name), "--store", fresh)
    assert code == 0, err
    assert f"imported run {run} (t: 8 trials, 8 samples)" in out
    reports = []
    for store in (url, fresh):
        code, out, err = run_cli(capsys, "report", run, "--format", "csv", "--store", store)
        assert code == 0, err
        reports.append(out)
    assert reports[0] == reports[1] and "triad" in reports[0]
    detail = Store(fresh, read_only=True).get_run(run)["detail"]
    assert detail["imported"]["artifact"] == str(tmp_path / name)


def _tampered_dir(made, tmp_path, change) -> str:
    art = copied(made, tmp_path)
    change(art)
    return str(art)


def _resealed(art, edit) -> None:
    """Change artifact.json by `edit` and write SHA256SUMS anew: only the content is wrong."""
    manifest = json.loads((art / "artifact.json").read_text())
    edit(manifest)
    (art / "artifact.json").write_text(json.dumps(manifest))
    lines = (art / "SHA256SUMS").read_text().splitlines()
    digest = hashlib.sha256((art / "artifact.json").read_bytes()).hexdigest()
    (art / "SHA256SUMS").write_text("".join(
        (f"{digest}  artifact.json" if line.endswith("  artifact.json") else line) + "\n"
        for line in lines))


def _byte_changed(art):
    data = bytearray((art / "samples.csv").read_bytes())
    data[-3] = ord("7") if data[-3] != ord("7") else ord("8")
    (art / "samples.csv").write_bytes(bytes(data))


def _resummed(art):
    """A byte of samples.csv changed and SHA256SUMS rewritten to match: the manifest, whose
    own digest a paper cites, still names the file's first SHA-256."""
    _byte_changed(art)
    lines = (art / "SHA256SUMS").read_text().splitlines()
    digest = hashlib.sha256((art / "samples.csv").read_bytes()).hexdigest()
    (art / "SHA256SUMS").write_text("".join(
        (f"{digest}  samples.csv" if line.endswith("  samples.csv") else line) + "\n"
        for line in lines))


TAMPERED = {
    "byte changed": (_byte_changed, ["samples.csv does not match its SHA-256"]),
    "sums rewritten": (_resummed, ["samples.csv does not match its SHA-256 in artifact.json"]),
    "file removed": (lambda art: (art / "samples.json").unlink(),
                     ["samples.json is missing"]),
    "extra file": (lambda art: (art / "notes.txt").write_text("hi"),
                   ["notes.txt is not one of its files"]),
    "unknown format": (lambda art: _resealed(art, lambda m: m.update(artifact_format=2)),
                       ["format version 2"]),
    "unknown report schema": (
        lambda art: _resealed(art, lambda m: m.update(report_schema_version="9.0")),
        ["report schema version '9.0'"]),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_tampered_artifact_is_refused_in_one_line_and_nothing_imported(
        capsys, made, tmp_path, case):
    change, words = TAMPERED[case]
    art = _tampered_dir(made, tmp_path, change)
    target = tmp_path / "new" / "T.db"
    refused(capsys, ["import", art, "--store", f"sqlite:///{target}"], *words)
    assert not target.exists()                     # no store made, nothing imported


def _tar_with(tmp_path, extra: tarfile.TarInfo, data: bytes = b"") -> str:
    """A .tar.gz of the exported directory art/ with `extra` added."""
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(tmp_path / "art", arcname="evil")
        tar.addfile(extra, io.BytesIO(data) if data else None)
    return str(path)


@pytest.mark.parametrize("member, words", [
    (dict(name="evil/link", type=tarfile.SYMTYPE, linkname="/etc/passwd"), ["evil/link"]),
    (dict(name="evil/../../escape", size=2), [".."]),
    (dict(name="/abs", size=2), ["/abs"]),
    (dict(name="evil/dev", type=tarfile.CHRTYPE), ["evil/dev"]),
])
def test_a_tar_member_that_is_a_link_device_or_leads_out_is_refused(
        capsys, made, tmp_path, member, words):
    copied(made, tmp_path)
    info = tarfile.TarInfo(member["name"])
    info.type = member.get("type", tarfile.REGTYPE)
    info.linkname = member.get("linkname", "")
    info.size = member.get("size", 0)
    evil = _tar_with(tmp_path, info, b"hi" if info.size else b"")
    target = tmp_path / "new" / "T.db"
    refused(capsys, ["import", evil, "--store", f"sqlite:///{target}"], "member", *words)
    assert not target.exists()


def test_a_run_already_in_the_store_is_refused_and_nothing_changes(capsys, made):
    url, run, art = made
    refused(capsys, ["import", str(art), "--store", url],
            f"run {run} is in", "already", "nothing was imported")
    assert runs_in(art.parent / "S.db") == [run]


@pytest.mark.parametrize("make", ["file", "tar", "full dir"])
def test_an_artifact_path_that_exists_is_refused_and_nothing_written(
        capsys, stored, tmp_path, make):
    url, run = stored
    path = tmp_path / ("a.tar.gz" if make == "tar" else "a")
    if make == "full dir":
        path.mkdir()
        (path / "x").write_text("mine")
    else:
        path.write_text("mine")
    refused(capsys, ["export", run, "--artifact", str(path), "--store", url], str(path))
    if make == "full dir":
        assert os.listdir(path) == ["x"]
    else:
        assert path.read_text() == "mine"


def test_an_empty_directory_is_filled(capsys, stored, tmp_path):
    (tmp_path / "art").mkdir(mode=0o755)
    exported(capsys, stored, tmp_path / "art")
    assert (tmp_path / "art" / "SHA256SUMS").is_file()


def test_an_artifact_path_in_a_missing_directory_is_refused(capsys, stored, tmp_path):
    url, run = stored
    refused(capsys, ["export", run, "--artifact", str(tmp_path / "no" / "a.tar.gz"),
                     "--store", url], "does not exist")
    assert not (tmp_path / "no").exists()


def test_without_matplotlib_the_artifact_has_no_figures_and_says_why(
        capsys, stored, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    exported(capsys, stored, tmp_path / "art")
    art = tmp_path / "art"
    assert not (art / "figures").exists()
    assert "No figures: matplotlib is not installed here" in (art / "README.md").read_text()
    assert json.loads((art / "artifact.json").read_text())["figures"].startswith(
        "matplotlib is not installed")


@pytest.mark.parametrize("limit, value, words", [("MAX_FILES", 5, "more than 5 files"),
                                                 ("MAX_BYTES", 4096, "past 0 MiB")])
def test_an_artifact_past_the_limits_is_refused(capsys, made, tmp_path, monkeypatch, limit,
                                                value, words):
    from virtbench.results.report.artifact import archive
    monkeypatch.setattr(archive, limit, value)
    art = copied(made, tmp_path)
    target = tmp_path / "new" / "T.db"
    refused(capsys, ["import", str(art), "--store", f"sqlite:///{target}"], words)
    assert not target.exists()


def test_a_tar_past_the_limits_is_refused(capsys, made, tmp_path, monkeypatch):
    from virtbench.results.report.artifact import archive
    copied(made, tmp_path)
    path = tmp_path / "big.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(tmp_path / "art", arcname="big")
    monkeypatch.setattr(archive, "MAX_BYTES", 4096)
    target = tmp_path / "new" / "T.db"
    refused(capsys, ["import", str(path), "--store", f"sqlite:///{target}"],
            "members take more than")
    assert not target.exists()
