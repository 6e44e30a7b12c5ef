"""Published figures: from a study file's [[published]] to every report format."""
from __future__ import annotations

import json

import pytest
from reportkit import fill_store

from virtbench.results import analysis
from virtbench.study import design as study, flags as study_flags
from virtbench.core.errors import VirtbenchError
from virtbench.results.report import render
from virtbench.results.report.view import View
from virtbench.foundations.store import Store

REPO = __import__("pathlib").Path(__file__).resolve().parents[3]
KVM = "qemu:vcpus=4,mem=10G"

# A RIKEN-like run: native and the KVM stand-in, himeno and pi, at the paper's ratios.
RIKEN_ENVS = [("native", "native", "native", 1.0, {"cpu_model": "Xeon E5506"}),
              ("qemu-tcg/virtio-blk/virtio-net/vcpus=4/mem=10G", "qemu", KVM, 0.9,
               {"accel": "tcg"})]
RIKEN_BATTERY = [("himeno", "himeno", "mflops", "MFLOPS", True, 1962.0),
                 ("pi", "pi", "seconds", "s", False, 16.5)]


@pytest.fixture
def riken_run(tmp_path):
    s = study.load(REPO / "studies" / "riken-2012.toml")
    store = Store(f"sqlite:///{tmp_path / 'riken.db'}")
    run_id = fill_store(store, s.to_dict(), envs=RIKEN_ENVS, battery=RIKEN_BATTERY, trials=12)
    return analysis.analyze_run(store, run_id)


def test_riken_results_carry_the_published_ratio(riken_run):
    by = {(r["environment"], r["benchmark"], r["metric"]): r for r in riken_run["results"]}
    kvm = RIKEN_ENVS[1][0]
    himeno = by[(kvm, "himeno", "mflops")]["published"]
    assert himeno["source"] == "Table 4"
    assert himeno["ratio"] == pytest.approx(1850.256810 / 1962.766657)
    assert himeno["ratio_derived"] is True
    # the measured ratio is against the same reference, here the baseline, by the published studies'
    # method (trimmed means), as the row's seed column; the verdict's ratio is the paired
    # estimate (geometric mean of the blocks' ratios)
    vs = by[(kvm, "himeno", "mflops")]["vs_baseline"]
    assert himeno["measured_ratio"] == pytest.approx(vs["published_rule"]["ratio"])
    assert himeno["measured_ratio"] == pytest.approx(0.9, abs=0.03)
    pi = by[(kvm, "pi", "seconds")]["published"]
    assert pi["ratio"] == pytest.approx(17.5139 / 16.482)
    assert by[("native", "himeno", "mflops")]["published"] is None
    # Xen could not run, and the benchmarks not in this run: still listed, not lost
    only = riken_run["published_only"]
    assert any(p["environment"] == "xen:vcpus=4,mem=10G" and p["benchmark"] == "himeno"
               for p in only)
    assert any(p["benchmark"] == "hdparm-read" and p["verdict"] == "pass" for p in only)


def test_every_format_shows_published_beside_measured(riken_run):
    md = render(riken_run, "markdown")
    assert "| measured ratio | published | source |" in md
    row = next(line for line in md.splitlines()
               if line.startswith("| qemu-tcg") and "mflops" in line)
    assert "0.943" in row and "Table 4" in row
    assert "## Published figures not measured in this run" in md
    assert "xen:vcpus=4,mem=10G · hdparm-read · read_mb_s: 0.958 ✓" in md
    table = render(riken_run, "table", View(wide=True))     # the published columns: --wide
    assert "published" in table and "Table 4" in table and "0.943" in table
    compact = render(riken_run, "table")
    assert "published figures not measured in this run" in compact
    assert "0.943" not in compact                  # the published ratio column is --wide's
    data = json.loads(render(riken_run, "json"))
    pub = [r["published"] for r in data["results"] if r["published"]]
    assert {p["source"] for p in pub} == {"Table 4", "Table 5"}
    assert data["published_only"]
    html = render(riken_run, "html")
    assert "Table 4" in html and "published ratio" in html and "0.943" in html


def test_no_published_columns_without_published_figures(filled):
    store, run_id = filled
    result = analysis.analyze_run(store, run_id)
    assert result["results"] and all(r["published"] is None for r in result["results"])
    assert "measured ratio" not in render(result, "markdown")
    assert "measured ratio" not in render(result, "table")


def test_versus_compares_against_the_sources_reference(tmp_path):
    """VirtualBox 2010 reports AHCI against IDE, not against bare metal."""
    s = study.load(REPO / "studies" / "virtualbox-ahci-2010.toml")
    envs = [("native", "native", "native", 1.0, {}),
            ("qemu-tcg/ide/virtio-net/cache=writeback", "qemu", "qemu:disk=ide,cache=writeback",
             0.1, {}),
            ("qemu-tcg/ahci/virtio-net/cache=writeback", "qemu",
             "qemu:disk=ahci,cache=writeback", 0.5, {})]
    battery = [("cdm", "cdm", "seq1m_read_mb_s", "MB/s", True, 1000.0)]
    store = Store(f"sqlite:///{tmp_path / 'vbox.db'}")
    result = analysis.analyze_run(store, fill_store(store, s.to_dict(), envs=envs,
                                                    battery=battery))
    ahci = next(r for r in result["results"] if r["environment"].startswith("qemu-tcg/ahci"))
    pub = ahci["published"]
    assert pub["versus"] == envs[1][0]
    assert pub["ratio"] == pytest.approx(578.894 / 32.052)
    assert pub["measured_ratio"] == pytest.approx(5.0, rel=0.05)       # 0.5 / 0.1
    assert ahci["vs_baseline"]["ratio"] == pytest.approx(0.5, rel=0.05)  # still vs native
    assert f"vs {envs[1][0]}" in render(result, "markdown")


def _write(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text('name = "t"\n[[environment]]\nspec = "native"\n[[environment]]\n'
                 'spec = "qemu:disk=ide"\n[[benchmark]]\nname = "himeno"\n' + text)
    return p


@pytest.mark.parametrize("entry, message", [
    ('environment = "qemu:disk=ahci"\nbenchmark = "himeno"\nmetric = "mflops"\nratio = 1\n'
     'source = "x"', "not the spec of any"),
    ('environment = "qemu:disk=ide"\nbenchmark = "stream"\nmetric = "x"\nratio = 1\n'
     'source = "x"', "not the label of any"),
    ('environment = "qemu:disk=ide"\nbenchmark = "himeno"\nmetric = "mflops"\nsource = "x"',
     "give ratio"),
    ('environment = "qemu:disk=ide"\nbenchmark = "himeno"\nmetric = "mflops"\nverdict = "ok"\n'
     'source = "x"', "verdict must be"),
    ('environment = "qemu:disk=ide"\nbenchmark = "himeno"\nmetric = "mflops"\nratio = -1\n'
     'source = "x"', "ratio must be greater than 0"),
    ('environment = "qemu:disk=ide"\nbenchmark = "himeno"\nmetric = "mflops"\nratio = 1',
     "needs source"),
    ('environment = "qemu:disk=ide"\nbenchmark = "himeno"\nmetric = "mflops"\nratio = 1\n'
     'source = "x"\nratoi = 2', "unknown key 'ratoi'"),
])
def test_bad_published_entries_are_one_line_errors(tmp_path, entry, message):
    with pytest.raises(VirtbenchError, match=message):
        study.load(_write(tmp_path, "[[published]]\n" + entry + "\n"))


def test_published_spec_matching_ignores_spacing(tmp_path):
    s = study.load(_write(tmp_path, '[[published]]\nenvironment = "qemu: disk=ide"\n'
                          'benchmark = "himeno"\nmetric = "mflops"\nratio = 0.9\nsource = "x"\n'))
    assert s.published[0]["environment"] == "qemu:disk=ide"


def test_requires_marks_an_environment_skipped(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('name = "t"\n[[environment]]\nspec = "native"\n[[environment]]\n'
                 'spec = "xen:mode=pv"\nrequires = "xen"\nnote = "Xen 3.2.1"\n'
                 '[[benchmark]]\nname = "himeno"\n')
    s = study.load(p)
    assert study.skipped_environments(s) == [
        ("xen:mode=pv", "needs xen, which virtbench cannot provide on this host yet; Xen 3.2.1")]
    # the field survives the store's round trip (resume reads the study back)
    assert study.Study.from_dict(s.to_dict()).environments[1].requires == "xen"
    p.write_text(p.read_text().replace('requires = "xen"', 'requires = 3'))
    with pytest.raises(VirtbenchError, match="requires must be a string"):
        study.load(p)


def test_html_marks_the_published_ratio_on_each_chart(riken_run, tmp_path):
    from reportkit import open_in_chromium
    path = tmp_path / "riken.html"
    path.write_text(render(riken_run, "html"))
    seen = open_in_chromium(path)
    assert seen["probe"]["errors"] == [] and seen["console_errors"] == []
    charts = seen["probe"]["charts"]
    # one ratio chart per benchmark: the KVM stand-in's bar against native, and one diamond
    # where the source's published ratio puts it
    assert [c["title"].split(" ")[0] for c in charts] == ["himeno:", "pi:"]
    for c in charts:
        assert c["bars"] == 1 and c["markers"] == 1, c


def test_a_baseline_override_keeps_the_published_figures_reference(tmp_path):
    """zhang-kvm-io run with --baseline the untuned guest (the tunings' before/after): the
    paper's untuned-guest-vs-native figure (0.5) stays beside guest/native, not guest/guest."""
    untuned = "qemu:disk=ide,nic=e1000,cache=writethrough,backing=raw"
    s = study_flags.with_flags(study.load(REPO / "studies" / "zhang-kvm-io.toml"),
                               study_flags.StudyFlags(baseline=untuned))
    guest = "qemu-tcg/ide/e1000/cache=writethrough"
    envs = [("native", "native", "native", 1.0, {}),
            (guest, "qemu", untuned, 0.25, {}),
            (guest + "/iosched=none", "qemu", untuned + ",iosched=none", 0.275, {})]
    battery = [("bonnie", "bonnie", "block_write_mb_s", "MB/s", True, 400.0)]
    store = Store(f"sqlite:///{tmp_path / 'zhang.db'}")
    d = s.to_dict()
    d["baseline"] = guest                      # as the runner stores the resolved baseline
    result = analysis.analyze_run(store, fill_store(store, d, envs=envs, battery=battery))
    by = {r["environment"]: r for r in result["results"]}
    pub = by[guest]["published"]
    assert pub["ratio"] == 0.5 and pub["versus"] == "native"
    assert pub["measured_ratio"] == pytest.approx(0.25, rel=0.05)          # not 1.0
    tuned = by[guest + "/iosched=none"]["published"]
    assert tuned["versus"] == guest and tuned["measured_ratio"] == pytest.approx(1.1, rel=0.05)
    assert by[guest + "/iosched=none"]["vs_baseline"]["ratio"] == pytest.approx(1.1, rel=0.05)
