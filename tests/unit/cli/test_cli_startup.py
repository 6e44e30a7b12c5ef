"""The light commands start light: building the parser (--version, --help) loads neither the
analysis (scipy, numpy), the store (SQLAlchemy), the report renderers (plotly, Jinja2) nor
the environments; `runs` adds only the store. Their times are measured by bench/startup.py."""
from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy", "numpy", "sqlalchemy", "plotly", "jinja2", "pydantic",
         "virtbench.results.analysis", "virtbench.measure.environments", "virtbench.execution.run.runner", "virtbench.foundations.store")


def loaded_after(code: str) -> set[str]:
    probe = (f"import sys; {code}; import json; "
             "sys.__stdout__.write(json.dumps(sorted(sys.modules)) + '\\n')")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def heavy(mods: set[str]) -> list[str]:
    return sorted({h for h in HEAVY for m in mods if m == h or m.startswith(h + ".")})


def test_importing_the_cli_and_building_its_parser_loads_nothing_heavy():
    mods = loaded_after("from virtbench.interface.cli.commands import build_parser; build_parser()")
    assert heavy(mods) == []


def test_the_runs_command_loads_the_store_but_not_the_analysis(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_STORE", f"sqlite:///{tmp_path / 's.db'}")
    code = ("import io, contextlib; from virtbench.interface.cli import commands as cli; "
            "contextlib.redirect_stdout(io.StringIO()).__enter__(); cli.main(['runs'])")
    mods = loaded_after(code)
    assert "sqlalchemy" in mods and "virtbench.foundations.store" in mods        # the probe sees loads
    assert heavy(mods) == ["sqlalchemy", "virtbench.foundations.store"]
