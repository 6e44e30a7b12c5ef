"""A run's rows out of one store and into another (foundations/store/transfer.py, what an
artifact's run.json holds): every row comes back the same, with the run's id; a dump of
another revision, with a column missing or extra, a value of the wrong type, a row of
another run or a sample of no trial is one line and nothing is written; the manifest's
SHA256SUMS reading (results/report/artifact/manifest.py) refuses a line not in its format."""
from __future__ import annotations

import copy
import json

import pytest

from storekit import filled_run
from virtbench.foundations.store import Store
from virtbench.foundations.store.transfer import BadDump, load_rows, run_rows
from virtbench.results.report.artifact.manifest import (SUMS, TamperedArtifact, checksums,
                                                        verified)


@pytest.fixture
def dumped(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'S.db'}")
    run = filled_run(store, {"native": {"cpu": "x86"}, "guest": {}},
                     {"native": {"triad": [100, 101, 99]}, "guest": {"triad": [80, 82, 79]}})
    store.add_warning(run, "note", "a warning", environment="guest")
    return store, run, json.loads(json.dumps(run_rows(store, run)))


def test_a_dump_loads_into_another_store_row_for_row(tmp_path, dumped):
    store, run, dump = dumped
    other = Store(f"sqlite:///{tmp_path / 'T.db'}")
    assert load_rows(other, dump, {"imported": {"artifact": "x"}}) == run
    again = run_rows(other, run)
    assert again["runs"][0]["detail"].pop("imported") == {"artifact": "x"}
    assert [t["trial"] for t in again["trials"]] == [t["trial"] for t in dump["trials"]]
    for table in ("environments", "samples", "warnings", "boots", "profiles"):
        assert again[table] == dump[table], table
    assert other.samples(run) == store.samples(run)
    assert other.warnings(run) == store.warnings(run)


def _broken(dump, how):
    d = copy.deepcopy(dump)
    how(d)
    return d


BROKEN = {
    "revision": (lambda d: d.update(revision="0099"), "store revision '0099'"),
    "column missing": (lambda d: d["trials"][0].pop("seq"), "trials row 1 does not have"),
    "column extra": (lambda d: d["samples"][1].update(colour="red"),
                     "samples row 2 does not have"),
    "wrong type": (lambda d: d["samples"][0].update(value="abc"), "value must be a number"),
    "other run": (lambda d: d["environments"][0].update(run_id="someone-else"),
                  "is of another run"),
    "orphan sample": (lambda d: d["samples"][0].update(trial_id=99999),
                      "a sample of a trial it does not hold"),
    "no run id": (lambda d: d.pop("run"), "no run id"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_dump_is_one_line_and_nothing_is_written(tmp_path, dumped, case):
    _, run, dump = dumped
    how, words = BROKEN[case]
    other = Store(f"sqlite:///{tmp_path / 'T.db'}")
    with pytest.raises(BadDump) as caught:
        load_rows(other, _broken(dump, how))
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert other.list_runs() == []


def test_a_run_the_store_holds_is_refused_and_nothing_is_written(dumped):
    store, run, dump = dumped
    before = store.samples(run)
    with pytest.raises(Exception, match=f"run {run} is in .* already; nothing was imported"):
        load_rows(store, dump)
    assert store.samples(run) == before and len(store.list_runs()) == 1


@pytest.mark.parametrize("line", ["not a checksum", "0" * 64 + " one-space",
                                  "0" * 64 + "  SHA256SUMS"])
def test_a_sums_line_not_in_sha256sums_format_is_refused(line):
    files = {"a.txt": b"a"}
    files[SUMS] = (checksums(files) + line + "\n").encode()
    with pytest.raises(TamperedArtifact, match="SHA256SUMS line 2 is not"):
        verified(files, "3.3")
