"""The live part of tests/unit/model/test_report_schema.py: its tests that need root and this host.

The JSON report's schema: generated from the model (virtbench/foundations/model), checked in under docs/
with its version, and real reports validate against it: a run of the real runner with fake
environments (a group of instances, failed trials, an exit profile), a fleet's report, a
comparison, and a real native run of a quick kernel.
"""
from __future__ import annotations
import json
import pytest
from virtbench.interface.cli import commands as cli
from schemakit import errors, validator  # noqa: F401
jsonschema = pytest.importorskip("jsonschema")   # the test extras install it


def test_a_real_native_run_of_a_quick_kernel_validates(capsys, store_url):
    assert cli.main(["run", "--env", "native", "--bench", "pi", "--trials", "2", "--quick",
                     "--no-progress", "--seed", "1"]) == 0
    capsys.readouterr()
    assert cli.main(["report", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(r["environment"], r["metric"], r["n"] + len(r["disturbed"]))
            for r in doc["results"]] == [("native", "seconds", 2)]
    assert errors(doc) == []
