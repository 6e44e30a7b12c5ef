"""Read a fixture of tests/fixtures/kvm: its source header (lines "## ...", ended by "## ----") and the
captured output after it, verbatim."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent / "fixtures" / "kvm"
_END = "## ----\n"


def fixture(name: str) -> str:
    """The captured output of tests/fixtures/kvm/<name>, without its header."""
    text = (ROOT / name).read_text()
    assert _END in text, f"{name}: no source header ending in '## ----'"
    return text.split(_END, 1)[1]


def header(name: str) -> str:
    return (ROOT / name).read_text().split(_END, 1)[0]
