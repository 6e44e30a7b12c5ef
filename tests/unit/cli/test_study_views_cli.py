"""A stored run's study declares a [[figure]] and a [[table]]: `virtbench figures` writes
the figure beside the default ones, `virtbench report --format latex` and `markdown` render
the table (the run's ○/× by the published rule), from the study the run stored."""
from __future__ import annotations

import os

from storekit import filled_run
from virtbench.foundations.store import Store
from virtbench.interface.cli import commands as cli

VIEWS = {"figures": [{"name": "t15-bars", "kind": "bars", "benchmarks": ["stream"],
                      "metrics": [], "title": "Table 15 bars", "published": True}],
         "tables": [{"name": "t15", "kind": "verdicts", "benchmarks": ["stream"],
                     "metrics": [], "title": "Table 15", "source": "Table 15", "hot": {}}]}


def _stored(tmp_path, extra):
    url = f"sqlite:///{tmp_path / 'S.db'}"
    store = Store(url)
    run = filled_run(store, {"native": {"cpu": "x86"}, "qemu-tcg": {}},
                     {"native": {"triad": [100, 101, 99, 100]},
                      "qemu-tcg": {"triad": [80, 82, 79, 81]}}, study_extra=extra)
    store.engine.dispose()
    return url, run


def test_the_declared_figure_and_table_come_out_of_a_stored_run(capsys, tmp_path):
    url, run = _stored(tmp_path, VIEWS)
    out_dir = tmp_path / "figs"
    assert cli.main(["figures", run, "-o", str(out_dir), "--format", "png", "--store", url]) == 0
    assert {"study-t15-bars.png", "study-t15.png"} <= set(os.listdir(out_dir))  # bars, matrix
    assert "wrote 5 files (5 figures × png)" in capsys.readouterr().out
    assert cli.main(["report", run, "--format", "latex", "--store", url]) == 0
    tex = capsys.readouterr().out
    assert r"\caption{Table 15}" in tex and r"\label{tab:study-t15}" in tex
    # 80 against 100: 20 % slower, × at 10 %
    assert r"stream \ensuremath{\cdot} triad & --- & \ensuremath{\times} \\" in tex
    assert cli.main(["report", run, "--format", "markdown", "--store", url]) == 0
    assert "| stream · triad | — | × |" in capsys.readouterr().out


def test_a_run_whose_study_declares_nothing_draws_only_the_defaults(capsys, tmp_path):
    url, run = _stored(tmp_path, None)
    out_dir = tmp_path / "figs"
    assert cli.main(["figures", run, "-o", str(out_dir), "--format", "png", "--store", url]) == 0
    assert not [n for n in os.listdir(out_dir) if n.startswith("study-")]
    assert cli.main(["report", run, "--format", "latex", "--store", url]) == 0
    assert "tab:study-" not in capsys.readouterr().out
