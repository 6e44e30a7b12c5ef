"""A study's own figures and tables ([[figure]], [[table]]; virtbench/study/declared.py):
read and kept in the stored study, each problem one line (exit 2, nothing written), and the
five seed studies declare theirs against benchmarks they have."""
from __future__ import annotations

from pathlib import Path

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.interface.cli import commands as cli
from virtbench.results.analysis.run import declared_views
from virtbench.study import design as study

STUDIES = Path(__file__).resolve().parents[3] / "studies"
SEEDS = ["riken-2012", "virtualbox-ahci-2010", "zhang-kvm-io", "cnaf-xen-kvm-2009",
         "xen-domu-io-2006"]
HEAD = ('[[environment]]\nspec = "native"\n[[benchmark]]\nname = "dd-write"\nlabel = "dd"\n'
        '[[benchmark]]\nname = "pi"\nlabel = "pi"\n')


def write(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(HEAD + text)
    return p



def test_figures_and_tables_are_read_and_kept_in_the_stored_study(tmp_path):
    s = study.load(write(tmp_path, '[[figure]]\nname = "t15-bars"\nkind = "bars"\n'
                                   'benchmarks = ["dd", "pi"]\ntitle = "Table 15"\n'
                                   '[[table]]\nname = "t15"\nkind = "verdicts"\n'
                                   'benchmarks = ["dd"]\nsource = "Table 15"\n'
                                   '[[table]]\nname = "ex"\nkind = "exits"\n'
                                   'benchmarks = ["pi"]\nhot = { ioread16 = 7 }\n'))
    assert [(f["name"], f["kind"], f["benchmarks"], f["published"]) for f in s.figures] == \
        [("t15-bars", "bars", ["dd", "pi"], True)]
    assert [(t["name"], t["kind"], t["hot"]) for t in s.tables] == \
        [("t15", "verdicts", {}), ("ex", "exits", {"ioread16": 7})]
    back = study.Study.from_dict(s.to_dict(), "run-1")     # as `figures`/`report` read it
    assert back.figures == s.figures and back.tables == s.tables
    views = declared_views(back)
    assert [(v.what, v.name, v.kind) for v in views] == \
        [("figure", "t15-bars", "bars"), ("table", "t15", "verdicts"), ("table", "ex", "exits")]
    assert views[0].title == "Table 15" and views[1].source == "Table 15"


def test_a_run_stored_before_them_reads_as_declaring_none(tmp_path):
    d = study.load(write(tmp_path, "")).to_dict()
    del d["figures"], d["tables"]
    back = study.Study.from_dict(d, "run-1")
    assert back.figures == [] and back.tables == [] and declared_views(back) == []


@pytest.mark.parametrize("text, words", [
    ('[[figure]]\nname = "f"\nkind = "pie"\nbenchmarks = ["dd"]\n',
     "figure[1] (f): kind must be 'bars', 'values' or 'spread', not 'pie'"),
    ('[[table]]\nname = "t"\nkind = "matrix"\nbenchmarks = ["dd"]\n',
     "table[1] (t): kind must be 'verdicts', 'values' or 'exits', not 'matrix'"),
    ('[[figure]]\nname = "f"\nkind = "bars"\nbenchmarks = ["pie"]\n',
     "figure[1] (f): benchmark 'pie' is not the label of any [[benchmark]] of this study "
     "(did you mean 'pi'?); labels: dd, pi"),
    ('[[table]]\nname = "t"\nkind = "values"\nbenchmarks = ["dd", "stream"]\n',
     "table[1] (t): benchmark 'stream' is not the label of any [[benchmark]]"),
    ('[[figure]]\nname = "f"\nkind = "bars"\n', "figure[1] (f): needs benchmarks: add"),
    ('[[figure]]\nname = "f"\nkind = "bars"\nbenchmarks = []\n', "benchmarks"),
    ('[[figure]]\nname = "../f"\nkind = "bars"\nbenchmarks = ["dd"]\n',
     'write e.g. name = "table15-bars"'),
    ('[[table]]\nname = "t"\nkind = "exits"\nbenchmarks = ["pi"]\nhot = { f = -1 }\n',
     "hot"),
    ('[[figure]]\nname = "f"\nkind = "bars"\nbenchmarks = ["dd"]\ncolour = "red"\n',
     "figure[1] (f): unknown key 'colour'"),
    ('[[table]]\nname = "t"\nkind = "values"\nbenchmarks = ["dd"]\n'
     '[[table]]\nname = "t"\nkind = "verdicts"\nbenchmarks = ["dd"]\n',
     "table[2] (t): another [[table]] has this name"),
])
def test_a_bad_figure_or_table_is_one_line(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(VirtbenchError) as err:
        study.load(path)
    message = str(err.value)
    assert message.startswith(f"study {path}: ") and words in message, message
    assert "\n" not in message


def test_on_the_command_line_it_is_exit_2_and_nothing_written(tmp_path, capsys, clean_dirs):
    path = write(tmp_path, '[[table]]\nname = "t"\nkind = "verdicts"\nbenchmarks = ["ddd"]\n')
    code = cli.main(["run", str(path), "--no-progress"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().splitlines() == [err.strip()] and "did you mean 'dd'?" in err
    assert [d for d in clean_dirs if d.exists()] == []


@pytest.mark.parametrize("name", SEEDS)
def test_each_seed_study_declares_its_figures_and_tables_on_its_benchmarks(name):
    s = study.load(STUDIES / f"{name}.toml")
    labels = {c.label for c in s.benchmarks}
    declared = [*s.figures, *s.tables]
    assert declared, f"{name} declares no [[figure]] or [[table]]"
    for entry in declared:
        assert set(entry["benchmarks"]) <= labels, entry["name"]


def test_riken_declares_table15_as_the_paper_drew_it():
    s = study.load(STUDIES / "riken-2012.toml")
    t15 = next(t for t in s.tables if t["name"] == "table15")
    assert (t15["kind"], t15["benchmarks"]) == ("verdicts", ["dd-write", "hdparm-read", "ior-rw"])
    assert any(f["name"] == "table15-bars" and f["kind"] == "bars" for f in s.figures)
    # the paper's own marks are in the published figures the table shows
    marks = {(p["environment"], p["benchmark"], p["metric"]): p["verdict"]
             for p in s.published if p.get("verdict")}
    assert marks[("xen:vcpus=4,mem=10G", "hdparm-read", "read_mb_s")] == "pass"
    assert sum(v == "fail" for v in marks.values()) == 7


def test_zhang_and_cnaf_declare_the_exit_tables_and_the_spread():
    zhang = study.load(STUDIES / "zhang-kvm-io.toml")
    t2 = next(t for t in zhang.tables if t["name"] == "table2-exits")
    assert t2["kind"] == "exits" and t2["hot"]["ioread16"] == 16545487
    cnaf = study.load(STUDIES / "cnaf-xen-kvm-2009.toml")
    assert any(f["kind"] == "spread" and f["benchmarks"] == ["cyclepi"] for f in cnaf.figures)
    spread = [p for p in cnaf.published if p["metric"] == "cycles_spread_pct"]
    assert [p["value"] for p in spread] == [14]
