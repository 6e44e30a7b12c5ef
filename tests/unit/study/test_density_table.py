"""A study file's [density] table (study/densityfile.py): `virtbench density STUDY.toml`
sweeps it, a flag given overriding its key; a bad table is one line naming the file and the
key (exit 2, nothing written). The sweep's steps are the real reports of a real sweep
(tests/fixtures/density/README.md), the runner faked."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.execution.run import density as sw
from virtbench.foundations.model import RunReport
from virtbench.interface.cli.commands import main
from virtbench.interface.cli.density import request_values
from virtbench.study import design
from virtbench.study.densityfile import load_density

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "density"
TABLE = """name = "sweep-it"
[density]
env = "native"
bench = ["cyclepi:steps=200000000"]
max = 3
trials = 2
schedule = "doubling"
floor = 0.4
metric = { cyclepi = "seconds" }
"""


def flags(study=None, **given) -> SimpleNamespace:
    names = ("env", "bench", "max_count", "trials", "quick", "schedule", "floor",
             "min_gain", "max_time", "metric")
    return SimpleNamespace(study=study, no_reference=False,
                           **{n: given.get(n) for n in names})


def test_a_density_table_gives_the_sweeps_request(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text(TABLE)
    table = load_density(path)
    assert (table.env, table.bench, table.max, table.schedule) == \
        ("native", ["cyclepi:steps=200000000"], 3, "doubling")
    req = sw.DensityRequest(**request_values(flags(str(path))))
    assert (req.spec, req.max_count, req.trials, req.floor, req.metrics) == \
        ("native", 3, 2, 0.4, {"cyclepi": "seconds"})
    # a flag given overrides its key; the others stay the table's
    req = sw.DensityRequest(**request_values(flags(str(path), max_count=2, floor=0.6,
                                                   bench=["cyclepi"])))
    assert (req.max_count, req.floor, req.benches, req.schedule) == \
        (2, 0.6, ["cyclepi"], "doubling")
    # one bench as a string
    path.write_text('[density]\nenv = "native"\nbench = "cyclepi"\n')
    assert load_density(path).bench == ["cyclepi"]


@pytest.mark.parametrize("text, says", [
    ('[density]\nbench = ["cyclepi"]\n', "[density]: needs env"),
    ('[density]\nenv = "native"\nbench = []\n', "bench"),
    ('[density]\nenv = "native"\nbench = ["cyclepi"]\nmax = 100\n', "max"),
    ('[density]\nenv = "native"\nbench = ["cyclepi"]\nschedule = "cubic"\n', "schedule"),
    ('[density]\nenv = "native"\nbench = ["cyclepi"]\nfloor = 0\n', "floor"),
    ('[density]\nenv = "native"\nbench = ["cyclepi"]\ncolour = "blue"\n',
     "unknown key 'colour'"),
    ('name = "x"\n', "has no [density] table"),
    ('[density\n', "not valid TOML")])
def test_a_bad_density_table_is_one_line(tmp_path, text, says):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(VirtbenchError) as err:
        load_density(path)
    line = str(err.value)
    assert line.startswith(f"study {path}: ") and says in line and "\n" not in line


def test_a_density_only_study_is_not_a_run(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text(TABLE)
    with pytest.raises(VirtbenchError, match="virtbench density"):
        design.load(path)


def test_cli_sweeps_a_study_file_and_stores_it(tmp_path, monkeypatch, capsys):
    path, url = tmp_path / "d.toml", f"sqlite:///{tmp_path / 's.db'}"
    path.write_text(TABLE)
    counts: dict[str, int] = {}

    def step(self, study):
        run_id = self.store.create_run({"name": "step"}, seed=1, quick=False,
                                       version="test", host="here")
        counts[run_id] = len(counts) + 1
        return run_id

    def report(store, run_id):
        got = RunReport.of(json.loads(
            (FIX / f"native-cyclepi-x{counts[run_id]}.json").read_text()))
        got.run.id = run_id
        return got
    monkeypatch.setattr(sw.Sweep, "_runner_step", step)
    monkeypatch.setattr(sw, "analyze_run", report)
    assert main(["density", str(path), "--max", "2", "--no-progress", "--store", url]) == 0
    out, err = capsys.readouterr()
    sweep_id = err.split("density sweep ", 1)[1].split(":", 1)[0]
    assert f"density sweep {sweep_id} (`virtbench report {sweep_id}` reads it)" in out
    assert "doubling up to 2 guests" in out          # the table's schedule, --max's count
    assert main(["report", sweep_id, "--format", "json", "--store", url]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["density"]["max_count"] == 2 and data["density"]["rule"]["per_guest_floor"] == 0.4
    assert [s["count"] for s in data["density"]["curves"][0]["steps"]] == [1, 2]


def test_cli_bad_density_table_exits_2_and_writes_nothing(tmp_path, capsys):
    path, store = tmp_path / "bad.toml", tmp_path / "s.db"
    path.write_text('[density]\nenv = "native"\nbench = ["cyclepi"]\nmax = 0\n')
    assert main(["density", str(path), "--store", f"sqlite:///{store}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"virtbench: study {path}: [density]: max") and "\n" not in err
    assert main(["density", "--bench", "cyclepi", "--store", f"sqlite:///{store}"]) == 2
    assert "give --env SPEC" in capsys.readouterr().err
    assert not store.exists()
