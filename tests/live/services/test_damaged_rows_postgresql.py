"""Stored data is input on PostgreSQL too (tests/unit/store/test_damaged_rows.py is SQLite's):
its driver hands back parsed JSON and real dates, so what an edit can damage there is a JSON
column of the wrong shape, a value of Infinity, a stored study out of range; each is one line
naming the run, exit 2, and the other runs stay readable."""
from __future__ import annotations

import pytest
import sqlalchemy as sa
from storekit import around, filled_run

from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store

DAMAGE = [
    ("UPDATE runs SET study = '[1, 2]' WHERE id = :run",
     "its row of runs is damaged: study must be a JSON object, not [1, 2]"),
    ("UPDATE trials SET detail = '[\"disturbed\"]' WHERE id = "
     "(SELECT min(id) FROM trials WHERE run_id = :run)",
     "of trials is damaged: detail must be a JSON object, not ['disturbed']"),
    ("UPDATE samples SET value = 'Infinity' WHERE id = (SELECT min(samples.id) FROM samples "
     "JOIN trials ON trials.id = trial_id WHERE run_id = :run)",
     "of samples is damaged: value must be a finite number, not inf"),
    ("UPDATE runs SET study = jsonb_set(study::jsonb, '{alpha}', '0')::json WHERE id = :run",
     "its stored study is damaged: alpha 0 is out of range"),
]


@pytest.mark.parametrize("sql, words", DAMAGE, ids=["study", "detail", "value", "alpha"])
def test_a_damaged_row_on_postgresql_is_one_line_and_the_others_read(pg_url, capsys, sql,
                                                                      words):
    store = Store(pg_url)
    bad, good = (filled_run(store, {"native": {}, "qemu": {}},
                            {"native": {"rate": around(100, 6)},
                             "qemu": {"rate": around(90, 6)}}) for _ in range(2))
    with store.engine.begin() as c:
        assert c.execute(sa.text(sql), {"run": bad}).rowcount == 1
    store.engine.dispose()
    capsys.readouterr()
    assert cli.main(["report", bad, "--store", pg_url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"virtbench: run {bad}: ") and words in err[0]
    assert cli.main(["runs", "--store", pg_url]) == 0
    assert good in capsys.readouterr().out
    assert cli.main(["history", "--store", pg_url, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert '"runs": 1' in out and err.startswith(f"history: left out run {bad}: ")
