"""`virtbench figures RUN_ID -o DIR` end to end (interface/cli/figures.py, docs/papers.md): a
stored run's figures written into DIR, one file per figure and format; a bad -o (a file, a
directory others can write, one reached through a link planted where others can write, a
missing parent), a bad --format, an unknown run or matplotlib missing is one line, exit 2,
nothing written."""
from __future__ import annotations

import os
import sys

import pytest

from clikit import refused, run_cli
from storekit import guest_and_native
from virtbench.machinery.host.writes import SQLITE_HEADER

NAMES = ["ratio-stream-triad", "values-stream-triad", "samples-stream-triad"]


@pytest.fixture
def stored(tmp_path):
    """A store at tmp_path/S.db with one run (native, and a guest against it); (URL, run)."""
    return guest_and_native(tmp_path)




def test_the_figures_are_written_one_file_per_figure_and_format(capsys, stored, tmp_path):
    url, run = stored
    out_dir = tmp_path / "figs"
    code, out, err = run_cli(capsys, "figures", run, "-o", str(out_dir), "--format",
                             "pdf,svg", "--width", "double", "--store", url)
    assert code == 0, err
    assert sorted(os.listdir(out_dir)) == sorted(f"{n}.{f}" for n in NAMES
                                                 for f in ("pdf", "svg"))
    assert (out_dir / f"{NAMES[0]}.pdf").read_bytes().startswith(b"%PDF")
    assert f"/Subject (virtbench run {run};".encode() in (out_dir / f"{NAMES[0]}.pdf").read_bytes()
    assert f"wrote 6 files (3 figures × pdf, svg) into {out_dir}" in out
    assert os.stat(out_dir).st_mode & 0o022 == 0


def test_the_latest_run_by_default_into_a_directory_that_exists(capsys, stored, tmp_path):
    url, _ = stored
    (tmp_path / "figs").mkdir(mode=0o755)
    code, _, err = run_cli(capsys, "figures", "-o", str(tmp_path / "figs"), "--store", url)
    assert code == 0, err
    assert sorted(os.listdir(tmp_path / "figs")) == sorted(f"{n}.pdf" for n in NAMES)


def test_o_a_file_is_refused(capsys, stored, tmp_path):
    url, run = stored
    target = tmp_path / "figs"
    target.write_text("mine")
    refused(capsys, ["figures", run, "-o", str(target), "--store", url],
            "is not a directory", "give a directory")
    assert target.read_text() == "mine"


def test_o_a_directory_others_can_write_is_refused(capsys, stored, tmp_path):
    url, run = stored
    target = tmp_path / "figs"
    target.mkdir()
    target.chmod(0o777)
    refused(capsys, ["figures", run, "-o", str(target), "--store", url],
            "writable by other users")
    assert os.listdir(target) == []


def test_o_through_a_link_where_others_can_write_is_refused(capsys, stored, tmp_path):
    url, run = stored
    shared, real = tmp_path / "shared", tmp_path / "real"
    shared.mkdir()
    shared.chmod(0o1777)
    real.mkdir()
    (shared / "figs").symlink_to(real)
    refused(capsys, ["figures", run, "-o", str(shared / "figs"), "--store", url], "-o ")
    assert os.listdir(real) == []


def test_o_with_a_missing_parent_is_refused_and_nothing_made(capsys, stored, tmp_path):
    url, run = stored
    refused(capsys, ["figures", run, "-o", str(tmp_path / "no" / "figs"), "--store", url],
            "does not exist")
    assert not (tmp_path / "no").exists()


def test_a_database_where_a_figure_goes_stops_every_write(capsys, stored, tmp_path):
    url, run = stored
    target = tmp_path / "figs"
    target.mkdir(mode=0o755)
    (target / f"{NAMES[2]}.pdf").write_bytes(SQLITE_HEADER + b"rest")
    refused(capsys, ["figures", run, "-o", str(target), "--store", url], "SQLite database")
    assert os.listdir(target) == [f"{NAMES[2]}.pdf"]


@pytest.mark.parametrize("argv, words", [
    (["--format", "eps"], ["--format eps", "pdf,svg,png"]),
    (["--format", "pdf", "no-such-run"], []),
])
def test_bad_input_writes_nothing(capsys, stored, tmp_path, argv, words):
    url, _ = stored
    refused(capsys, ["figures", *argv, "-o", str(tmp_path / "figs"), "--store", url], *words)
    assert not (tmp_path / "figs").exists()


def test_without_matplotlib_one_line(capsys, stored, tmp_path, monkeypatch):
    url, run = stored
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    refused(capsys, ["figures", run, "-o", str(tmp_path / "figs"), "--store", url],
            "virtbench[paper]")
    assert not (tmp_path / "figs").exists()
