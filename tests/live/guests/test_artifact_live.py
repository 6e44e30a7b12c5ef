"""The artifact's done-when (issue 41, docs/papers.md "The artifact") on this host: a run of
the quick study (its pi only, 3 trials: bare metal and a QEMU guest) exported as a .tar.gz,
imported into a fresh store where `report` reads the same results, replayed there (the
replay's report compares the two runs and says what differs in the stack), and a tampered
copy refused in one line with nothing imported. With the study's guest: two runs with a TCG
guest boot each, 181 s here (a shared 2-core VM, other work beside it), so behind
--run-slow; the same on bare metal alone (`--env native`) runs by default."""
from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from virtbench.foundations.store import Store
from virtbench.interface.cli import commands as cli

QUICK = str(Path(__file__).resolve().parents[3] / "studies" / "quick.toml")


def _cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("envs", [["--env", "native"],
                                  pytest.param([], marks=pytest.mark.slow, id="guest")],
                         ids=["native", "guest"])
def test_the_quick_study_exported_imported_replayed_and_a_tampered_copy_refused(
        tmp_path, capsys, envs):
    first = f"sqlite:///{tmp_path / 'S.db'}"
    code, _, err = _cli(capsys, "run", QUICK, *envs, "--quick", "--trials", "3", "--bench",
                        "pi", "--no-progress", "--store", first)
    assert code == 0, err
    run = Store(first, read_only=True).get_run()["id"]
    art = tmp_path / "quick.tar.gz"
    code, out, err = _cli(capsys, "export", run, "--artifact", str(art), "--store", first)
    assert code == 0, err

    fresh = f"sqlite:///{tmp_path / 'fresh' / 'F.db'}"
    code, out, err = _cli(capsys, "import", str(art), "--store", fresh)
    assert code == 0 and f"imported run {run}" in out, err
    reports = [_cli(capsys, "report", run, "--format", "json", "--store", s)[1]
               for s in (first, fresh)]
    a, b = (json.loads(r)["results"] for r in reports)
    assert [(r["environment"], r["metric"], r["samples"]) for r in a] == \
           [(r["environment"], r["metric"], r["samples"]) for r in b]

    code, out, err = _cli(capsys, "run", "--replay", str(art), "--no-progress",
                          "--store", fresh)
    assert code == 0, err
    runs = [r["id"] for r in Store(fresh, read_only=True).list_runs()]
    (new,) = [r for r in runs if r != run]
    assert f"replay: run {new} replays run {run}" in out
    assert f"A = run {run} (quick), B = run {new} (quick)" in out
    assert f"what differs in the stack (run {run} → run {new}):" in out

    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(art) as src, tarfile.open(bad, "w:gz") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isreg() else None
            if m.name.endswith("/samples.csv"):
                data = data.replace(b",ok,", b",OK,", 1)
            dst.addfile(m, None if data is None else io.BytesIO(data))
    empty = tmp_path / "none" / "N.db"
    code, out, err = _cli(capsys, "import", str(bad), "--store", f"sqlite:///{empty}")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "samples.csv does not match its SHA-256" in err and not empty.exists()
