"""Read a fixture of tests/fixtures/kvm: its source header (lines "## ...", ended by "## ----") and the
captured output after it, verbatim."""
from __future__ import annotations

import gzip
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "kvm"
_END = "## ----\n"


def _text(name: str) -> str:
    path = ROOT / name
    return gzip.decompress(path.read_bytes()).decode() if name.endswith(".gz") else path.read_text()


def fixture(name: str) -> str:
    """The captured output of tests/fixtures/kvm/<name> (gunzipped for .gz), without its header."""
    text = _text(name)
    assert _END in text, f"{name}: no source header ending in '## ----'"
    return text.split(_END, 1)[1]


def header(name: str) -> str:
    return _text(name).split(_END, 1)[0]


def reparse_profile(report: str, script: str, kallsyms: str):
    """The Profile virtbench assembles from a KVM trial's raw outputs (perf kvm stat report, perf
    script of kvm_exit/kvm_pio, the guest's kallsyms), without KVM's counters."""
    from virtbench.machinery.exits import kvm, symbols
    table = symbols.parse_kallsyms(kallsyms)
    prof = kvm.KvmProfiler(executor=None, workdir=Path("/nonexistent"),
                           symbolise=lambda a: symbols.function_or_user_space(table, a))
    return prof.assemble(0.0, kvm.read_perf_kvm_stat_report(report),
                         kvm.parse_kvm_exit_lines(script), pio=kvm.parse_kvm_pio_lines(script))
