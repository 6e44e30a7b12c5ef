"""CITATION.cff (docs/papers.md, "How to cite") names the version this tree is: the same as
pyproject.toml's and virtbench.__version__, so a paper citing it cites what it ran. (Its
schema was checked with `cffconvert --validate`; the test reads the two keys it must keep.)"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

from virtbench import __version__

ROOT = Path(__file__).resolve().parents[3]


def _key(text: str, key: str) -> str:
    (value,) = re.findall(rf'^{key}: "?([^"\n]+)"?$', text, re.M)
    return value


def test_the_citation_names_this_version_and_license():
    cff = (ROOT / "CITATION.cff").read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert _key(cff, "cff-version") == "1.2.0"
    assert _key(cff, "version") == project["version"] == __version__
    assert _key(cff, "license") == project["license"]["text"]
