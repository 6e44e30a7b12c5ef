"""The study's claims checked on a stored run, in a section of their own in every format."""
import csv
import io
import json

import numpy as np
from storekit import block_run

from virtbench.results import report
from virtbench.study import design as study
from virtbench.results.analysis import analyze_run
from virtbench.foundations.store import Store

STUDY = '''[[environment]]
spec = "native"
[[environment]]
spec = "qemu:disk=ide"
[[environment]]
spec = "qemu:disk=ahci"
[[environment]]
spec = "xen:mode=pv"
requires = "xen"
[[benchmark]]
name = "cdm"
[[claim]]
text = "AHCI reads at least 1.5 times as fast as IDE"
source = "the post"
benchmark = "cdm"
metric = "seq1m_read_mb_s"
environments = { ahci = "qemu:disk=ahci", ide = "qemu:disk=ide" }
holds_if = "ahci / ide >= 1.5"
[[claim]]
text = "native > AHCI > IDE"
source = "common sense"
benchmark = "cdm"
metric = "seq1m_read_mb_s"
environments = { ahci = "qemu:disk=ahci", ide = "qemu:disk=ide", native = "native" }
holds_if = "native > ahci > ide"
[[claim]]
text = "IDE is within 10 % of native"
source = "nobody"
benchmark = "cdm"
metric = "seq1m_read_mb_s"
environments = { ide = "qemu:disk=ide", native = "native" }
holds_if = "ide == native"
[[claim]]
text = "AHCI writes 1.3 times as fast as IDE"
source = "a guess"
benchmark = "cdm"
metric = "seq1m_write_mb_s"
environments = { ahci = "qemu:disk=ahci", ide = "qemu:disk=ide" }
holds_if = "ahci / ide >= 1.3"
[[claim]]
text = "Xen beats IDE"
source = "the slides"
benchmark = "cdm"
metric = "seq1m_read_mb_s"
environments = { xen = "xen:mode=pv", ide = "qemu:disk=ide" }
holds_if = "xen > ide"
'''


def _vals(mean, seed, cv=0.02, n=8):
    return [float(x) for x in mean * np.exp(np.random.default_rng(seed).normal(0, cv, n))]


def _result(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(STUDY)
    s = study.load(path).to_dict()
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = block_run(store, {
        "native": {"seq1m_read_mb_s": _vals(500, 1), "seq1m_write_mb_s": _vals(400, 2)},
        "qemu:disk=ide": {"seq1m_read_mb_s": _vals(30, 3), "seq1m_write_mb_s": _vals(30, 4)},
        "qemu:disk=ahci": {"seq1m_read_mb_s": _vals(90, 5),
                           "seq1m_write_mb_s": _vals(39, 6, cv=0.2)}},
        bench="cdm", study_extra={"environments": s["environments"], "claims": s["claims"]})
    return analyze_run(store, run)


def test_each_claim_holds_does_not_hold_is_inconclusive_or_not_measured(tmp_path):
    claims = _result(tmp_path).claims
    assert [c.status for c in claims] == ["holds", "holds", "does not hold", "inconclusive",
                                          "not measured"]
    ratio, order, within, guess, xen = claims
    (link,) = ratio.links
    assert (link.left, link.right, link.relation) == ("qemu:disk=ahci", "qemu:disk=ide", ">= 1.5")
    assert link.estimate > 2.5 and link.ci_low > 1.5 and link.analysis == "paired"
    assert link.p_holm >= link.p_value and link.blocks == 8
    assert [(x.left, x.right, x.relation) for x in order.links] == [
        ("native", "qemu:disk=ahci", "> 1"), ("qemu:disk=ahci", "qemu:disk=ide", "> 1")]
    assert within.links[0].relation == "within ±10 %"
    assert "blocks would decide" in guess.message
    assert xen.environments == {"xen": None, "ide": "qemu:disk=ide"} and xen.links == []
    assert xen.message == "not measured in this run: xen (xen:mode=pv)"


def test_every_format_has_a_claims_section(tmp_path):
    result = _result(tmp_path)
    table = report.render(result, "table")
    assert "claims of the study's source, checked on this run" in table
    assert "✓ holds: AHCI reads at least 1.5 times as fast as IDE (the post; cdm · " in table
    md = report.render(result, "markdown")
    assert "## Claims of the study's source, checked on this run" in md
    assert "✗ does not hold: IDE is within 10 % of native" in md
    page = report.render(result, "html")
    assert "<h2>Claims of the study's source, checked on this run</h2>" in page
    assert "— not measured" in page
    doc = json.loads(report.render(result, "json"))
    assert [c["status"] for c in doc["claims"]][:2] == ["holds", "holds"]
    rows = [r for r in csv.DictReader(io.StringIO(report.render(result, "csv")))
            if r["record"] == "claim"]
    assert [r["verdict"] for r in rows] == ["holds", "holds", "does not hold", "inconclusive",
                                            "not measured"]
    assert rows[0]["claim"] == "AHCI reads at least 1.5 times as fast as IDE"
    assert rows[0]["holds_if"] == "ahci / ide >= 1.5"
