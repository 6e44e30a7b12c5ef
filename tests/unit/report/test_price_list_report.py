"""The price list in every report format, on real runs (tests/fixtures/reports/primitives-0004.sql,
store revision 0004: issue 24's done-when run on native, a QEMU/TCG guest, a podman container
and gVisor, and a native + TCG run with its exit profile; see the file's header).

Each format shows the table (a row per primitive with each environment's figure and ratio),
one sentence per family, and, where the run has exit profiles, the exits each primitive is
linked to; the price-list parts of Markdown, CSV and JSON stay what they were rendered as on purpose
(primitives.N.golden.price.*: render again with `VIRTBENCH_GOLDEN=write`)."""
from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
from pathlib import Path

import pytest

from virtbench.results.report.view import View
from virtbench.results import analysis, report
from virtbench.results.report import pricelist
from virtbench.foundations.store import Store

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reports"
TEXT_FORMATS = ("markdown", "csv", "json")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The saved store as a new SQLite file: {index: analysed run}, oldest first."""
    path = tmp_path_factory.mktemp("prim") / "primitives.db"
    con = sqlite3.connect(path)
    con.executescript((FIXTURES / "primitives-0004.sql").read_text())
    con.close()
    store = Store(f"sqlite:///{path}")
    ids = [r["id"] for r in reversed(store.list_runs())]
    return [analysis.analyze_run(store, i) for i in ids]


def test_the_done_when_run_has_a_price_list_of_four_environments(runs):
    done = runs[0]
    (pl,) = done.price_lists
    assert pl.baseline == "native"
    assert pl.environments == ["native", "qemu-tcg/virtio-blk/virtio-net",
                               "container-podman/runc", "gvisor-ptrace/host"]
    means = {(r.environment, r.metric): r for r in done.results}
    for row in pl.rows:                      # every cell is its result's trimmed mean and ratio
        for c in row.cells:
            r = means.get((c.environment, row.metric))
            assert c.value == (r.trimmed_mean if r else None)
            assert c.ratio == (r.vs_baseline.ratio if r and r.vs_baseline else None)
    assert len(pl.rows) == 23 and [s.family for s in pl.sentences] == [
        "syscall", "pagefault", "ctxsw", "timer", "memlat", "ioport"]


def test_under_tcg_the_sentences_say_what_is_orders_above_native_and_what_is_not(runs):
    said = {s.family: s.sentence for s in runs[0].price_lists[0].sentences}
    tcg = "qemu-tcg/virtio-blk/virtio-net"
    # TCG emulates page tables and TLB flushes slowly: faults and switches an order above
    assert said["pagefault"].startswith(f"pagefault: an order of magnitude or more above "
                                        f"native: {tcg} (pagefault_4k_ns")
    assert f"{tcg} (ctxsw_same_cpu_ns" in said["ctxsw"]
    assert f"{tcg} (timer_p50_us" in said["timer"]
    # dependent loads are not: TCG turns a guest load into a host load
    assert said["memlat"].startswith("memlat: nothing an order of magnitude above native")
    # cpuid: this native is itself a KVM guest (cpuid exits there), TCG answers it in QEMU
    assert f"an order of magnitude below: cpuid_ns in {tcg}" in said["syscall"]
    assert said["ioport"] == f"ioport: no figure of native to compare with ({tcg} measured it)"


def test_the_profiled_run_links_primitives_to_its_would_be_exits(runs):
    (pl,) = runs[1].price_lists
    cells = {(r.metric, c.environment): c for r in pl.rows for c in r.cells}
    tcg = "qemu-tcg/virtio-blk/virtio-net"
    (profile,) = [p for p in runs[1].profiles if p.environment == tcg]
    counts = {r.reason: r.count for r in profile.by_reason}
    assert cells[("ioport_out_ns", tcg)].profiled
    assert [(e.reason, e.count) for e in cells[("ioport_out_ns", tcg)].exits] == [
        ("pio", counts["pio"])]
    assert counts["pio"] > 0
    assert [e.reason for e in cells[("mmio_read_ns", tcg)].exits] == ["mmio"]
    assert [e.reason for e in cells[("timer_p99_us", tcg)].exits] == ["apic"]
    assert cells[("cpuid_ns", tcg)].exits == []            # TCG has no cpuid exit
    assert not cells[("cpuid_ns", "native")].profiled


def _sections(run):
    return pricelist.sections(run)


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_every_text_format_shows_the_table_the_sentences_and_the_exits(runs, fmt):
    for run in runs:
        # the terminal's rows on one line each: at 200 columns (at 100 a row of four
        # environments folds inside its cells)
        text = report.render(run, fmt, View(wide=True, width=200))
        if fmt == "html":
            import html
            text = html.unescape(text)
        if fmt == "markdown":
            text = text.replace("\\", "")          # its escapes: cpuid\_ns
        (part,) = _sections(run)
        for name in part.header[1:]:
            assert name in text
        for row in part.rows:
            line = next(ln for ln in text.splitlines() if row[0] in ln and
                        all(c in ln for c in row[1:]))
            assert line
        for sentence in part.sentences:
            # the terminal wraps long lines: compare without the line breaks
            assert sentence.replace(" ", "") in text.replace("\n", "").replace(" ", "")
        for line in part.exits + part.missing:
            assert line.replace(" ", "") in text.replace("\n", "").replace(" ", "")
    assert _sections(runs[1])[0].exits and not _sections(runs[0])[0].exits
    assert ("gvisor-ptrace/host: pagefault_thp_ns, memlat_l1_2m_ns, memlat_l2_2m_ns, "
            "memlat_llc_2m_ns, memlat_llc4x_2m_ns: cannot tell whether huge pages were "
            "granted: getrusage counts no page faults here") in _sections(runs[0])[0].missing


def test_a_real_figure_of_the_done_when_run_in_each_format(runs):
    (part,) = _sections(runs[0])
    cpuid = next(r for r in part.rows if r[0] == "cpuid_ns")
    assert cpuid[2].endswith("x)")                  # the TCG cell: figure and ratio
    md = report.render(runs[0], "markdown")
    assert f"| cpuid_ns | {' | '.join(cpuid[1:])} |" in md
    assert "## Price list · primitives" in md


def test_csv_has_a_price_record_per_cell_and_a_sentence_per_family(runs):
    rows = list(csv.DictReader(io.StringIO(report.render(runs[1], "csv"))))
    price = [r for r in rows if r["record"] == "price"]
    (pl,) = runs[1].price_lists
    assert len(price) == sum(len(r.cells) for r in pl.rows)
    io_row = next(r for r in price if r["metric"] == "ioport_out_ns"
                  and r["environment"].startswith("qemu"))
    assert io_row["claim"].startswith("pio ") and io_row["holds_if"] == "ioport"
    assert float(io_row["trimmed_mean"]) > 0 and io_row["ratio"] == ""
    fam = [r for r in rows if r["record"] == "price_family"]
    assert [r["metric"] for r in fam] == [s.family for s in pl.sentences]
    assert [r["claim"] for r in fam] == [s.sentence for s in pl.sentences]


def test_json_carries_the_price_list(runs):
    doc = json.loads(report.render(runs[1], "json"))
    (pl,) = doc["price_lists"]
    assert pl["rows"][0]["metric"] == "syscall_ns" and pl["sentences"]
    assert any(c["exits"] for r in pl["rows"] for c in r["cells"])


def _price_part(run, fmt: str) -> str:
    """The price list's part of a format: JSON's price_lists, Markdown's section, CSV's price
    records (the rest of each report is the other tests' business)."""
    text = report.render(run, fmt)
    if fmt == "json":
        return json.dumps(json.loads(text)["price_lists"], indent=1) + "\n"
    if fmt == "markdown":
        part = text[text.index("## Price list"):]
        return part[:part.index("\n## ", 1) + 1]
    lines = text.splitlines(keepends=True)
    return lines[0] + "".join(ln for ln in lines[1:] if ",price," in ln or ",price_family," in ln)


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_the_price_lists_of_the_saved_runs_are_unchanged(runs, fmt):
    for i, run in enumerate(runs):
        path = FIXTURES / f"primitives.{i}.golden.price.{fmt}"
        now = _price_part(run, fmt)
        if os.environ.get("VIRTBENCH_GOLDEN") == "write":
            path.write_text(now)
        assert now == path.read_text()
