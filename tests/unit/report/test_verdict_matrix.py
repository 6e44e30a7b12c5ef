"""Every format opens with the verdict matrix; ✗ says which way; ? says how many trials;
method notes everywhere; labels with brackets print literally."""
import csv
import io
import json
import sys
from pathlib import Path

from storekit import around, filled_run

from virtbench.results.analysis import analyze_run, compare_runs  # noqa: E402
from virtbench.results.report import matrix, render, render_compare  # noqa: E402
from virtbench.results.report.view import View  # noqa: E402
from virtbench.foundations.store import Store  # noqa: E402

NOTE = "k=17 instead of the published studies' [k=20]"


def _analysis(tmp_path, bench="pi[k=17]"):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = filled_run(store, {"native": {}, "qemu-slow": {}, "qemu-fast": {}, "qemu-few": {},
                             "qemu-kvm/x2": {"instances": 2}},
                     {"native": {"wall_s": around(10)},
                      "qemu-slow": {"wall_s": around(20)},        # lower is better: worse
                      "qemu-fast": {"wall_s": around(5)},         # better
                      # 3 blocks spread ±25 %: the paired interval straddles +10 %
                      "qemu-few": {"wall_s": around(13, 3, 0.5)},
                      "qemu-kvm/x2": {"wall_s": around(10.5), "wall_s_i0": around(10.5),
                                      "wall_s_i1": around(10.5)}},
                     hib=False, bench=bench, study_extra={"method_notes": {bench: NOTE}, "alpha": 0.005})
    return analyze_run(store, run)


def test_matrix_cells_say_direction_and_trials_needed(tmp_path):
    m = matrix.build(_analysis(tmp_path))
    assert m.columns == ["native", "qemu-slow", "qemu-fast", "qemu-few", "qemu-kvm/x2"]
    ((name, cells),) = m.rows                 # per-instance rows are folded into the group's cell
    assert name == "pi[k=17] · wall_s ↓"
    text = [c.text for c in cells]
    assert text[0] == "baseline"
    assert text[1] == "2.00× slower ✗"           # twice the time: a factor, not "+100 %"
    assert text[2] == "2.00× faster ✗"           # half the time: -50 %, said as a factor
    assert text[3] == "+18.1 % ? ≥92 blocks"     # 3 noisy blocks of around(13, 3, 0.5)
    # each instance a constant 5 % slower: a real difference, within ±10 % (issue 21's
    # vocabulary; before it, a pass)
    assert text[4] == "+5.0 % ✓ differs per instance"
    # the compact terminal table puts each row's value first
    values = [c.text for c in matrix.build(_analysis(tmp_path / "v"), values=True).rows[0][1]]
    assert values[0] == "9.996" and values[1] == "19.99 2.00× slower ✗"


def test_terminal_opens_with_the_matrix_and_prints_labels_literally(tmp_path):
    out = render(_analysis(tmp_path), "table", View(wide=True))
    assert out.index("verdicts") < out.index("trimmed mean")       # matrix before the detail
    # not eaten as a style tag: in the matrix, as a table title, in a table cell
    assert "│ pi[k=17] · wall_s ↓ │" in out
    assert "\npi[k=17]" in out
    warn = [line for line in out.splitlines() if line.startswith("  few_samples")]
    assert warn and "pi[k=17]" in warn[0]
    assert "✗ fail (better)" in out and "✗ fail (worse)" in out
    assert NOTE in out
    assert "inconclusive verdicts" in out and "about 92 blocks would decide" in out
    # a group's rows say which baseline they used
    lines = out.splitlines()
    inst = [i for i, line in enumerate(lines) if "wall_s_i0" in line]
    # the cell wraps: its words, cell by cell, over the row's lines
    cell = " ".join(line.rstrip(" │").rsplit("│", 1)[1].strip()
                    for line in lines[inst[0]:inst[0] + 3])
    assert len(inst) == 1 and "✓ differs, within threshold (worse) vs native" in cell


def test_markdown_and_html_open_with_the_matrix_and_carry_method_notes(tmp_path):
    a = _analysis(tmp_path)
    md = render(a, "markdown")
    assert md.index("## Verdicts") < md.index("| environment |")
    assert "| pi[k=17] · wall_s ↓ | baseline | 2.00× slower ✗ | 2.00× faster ✗ |" in md
    assert md.index("## Headline") < md.index("## Verdicts")
    assert "- **qemu-slow against native: 2.00× slower (geometric mean over 1 benchmark)**" in md
    assert "## Method notes" in md and "k=17 instead of the published studies' \\[k=20\\]" in md
    page = render(a, "html")
    assert page.index("<h2>Verdicts</h2>") < page.index("<h2>Run</h2>")
    assert "2.00× faster ✗" in page and "Method notes" in page
    assert "k=17 instead of the published studies&#x27; [k=20]" in page


def test_json_and_csv_carry_alpha_notes_and_direction(tmp_path):
    a = _analysis(tmp_path)
    data = json.loads(render(a, "json"))
    assert data["run"]["alpha"] == 0.005
    assert data["method_notes"] == [{"benchmark": "pi[k=17]", "note": NOTE}]
    fast = next(r for r in data["results"] if r["environment"] == "qemu-fast")["vs_baseline"]
    assert set(fast) >= {"direction", "power", "trials_needed", "message", "alpha", "reference"}
    rows = list(csv.DictReader(io.StringIO(render(a, "csv"))))
    assert {r["method_note"] for r in rows if r["record"] != "difference"} == {NOTE}
    assert {r["direction"] for r in rows if r["environment"] == "qemu-fast"
            and r["record"] != "difference"} == {"better"}


def test_compare_formats_list_only_in_rows_differences_and_trials(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    a = filled_run(store, {"native": {"accel": None}, "qemu-tcg[x]": {"accel": "tcg"}},
                   {"native": {"t": around(100, 3)}, "qemu-tcg[x]": {"t": around(50, 3)}})
    b = filled_run(store, {"native": {"accel": None}, "qemu-kvm": {}},
                   {"native": {"t": around(50, 3)}, "qemu-kvm": {"t": around(95, 3)}},
                   host="elsewhere")
    cmp = compare_runs(analyze_run(store, a), analyze_run(store, b))
    text = render_compare(cmp, "table")
    assert "inconclusive (≥ 6 trials)" in text
    assert "only in A" in text and "qemu-tcg[x] · stream · t" in text
    assert "only in B" in text and "qemu-kvm · stream · t" in text
    assert "hostname: 'testhost' → 'elsewhere'" in text and "warning" in text
    md = render_compare(cmp, "markdown")
    assert "## Only in A" in md and "## Only in B" in md and "## Metadata that differ" in md
    assert "**Warning:**" in md
    data = json.loads(render_compare(cmp, "json"))
    assert data["only_in_a"] == [["qemu-tcg[x]", "stream", "t"]]
    assert data["rows"][0]["trials_needed"] == 6
    page = render_compare(cmp, "html")
    assert "Only in A" in page and "Metadata that differ" in page and "≥ 6 trials" in page
