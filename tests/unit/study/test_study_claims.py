"""[[claim]] tables and `versus`: checked strictly like the rest of a study file (one line
naming the table and the key), `holds_if` parsed, the published studies carry their papers' claims."""
from pathlib import Path

import pytest

from virtbench.study import design as study
from virtbench.core.errors import VirtbenchError
from virtbench.study.claims import parse_relation

ROOT = Path(__file__).resolve().parents[3]
HEAD = '''[[environment]]
spec = "native"
[[environment]]
spec = "qemu:disk=ide"
[[environment]]
spec = "qemu:disk=ahci"
[[benchmark]]
name = "cdm"
'''
CLAIM = '''[[claim]]
text = "AHCI beats IDE"
source = "the post"
benchmark = "cdm"
metric = "seq1m_read_mb_s"
environments = { ahci = "qemu:disk=ahci", ide = "qemu: disk=ide" }
holds_if = "ahci / ide >= 1.5"
'''


def _load(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return study.load(p)


@pytest.mark.parametrize("text, form", [
    ("a / b >= 1.5", {"kind": "ratio", "left": "a", "right": "b", "op": ">=", "bound": 1.5}),
    ("a/b<0.667", {"kind": "ratio", "left": "a", "right": "b", "op": "<=", "bound": 0.667}),
    ("virtio-net > e1000 > rtl8139", {"kind": "order", "op": ">",
                                      "names": ["virtio-net", "e1000", "rtl8139"]}),
    ("kvm < xen", {"kind": "order", "op": "<", "names": ["kvm", "xen"]}),
    ("kvm == native", {"kind": "within", "left": "kvm", "right": "native"}),
])
def test_holds_if_forms(text, form):
    assert parse_relation(text) == form


@pytest.mark.parametrize("text", ["a >= b", "a / b >= x", "a > b < c", "a / b >= 0", "a ~ b",
                                  "a", "> a", "a / b / c >= 1"])
def test_what_is_not_a_relation_names_the_forms(text):
    with pytest.raises(VirtbenchError, match="is not a relation|above 0"):
        parse_relation(text)


def test_a_claim_is_parsed_with_its_environments_specs(tmp_path):
    s = _load(tmp_path, HEAD + CLAIM)
    (c,) = s.claims
    assert c["environments"] == {"ahci": "qemu:disk=ahci", "ide": "qemu:disk=ide"}
    assert c["relation"] == {"kind": "ratio", "left": "ahci", "right": "ide", "op": ">=",
                             "bound": 1.5}
    assert study.Study.from_dict(s.to_dict()).claims == s.claims      # stored and read back


@pytest.mark.parametrize("change, words", [
    (('holds_if = "ahci / ide >= 1.5"', 'holds_if = "ahci beats ide"'),
     "claim[1]: holds_if 'ahci beats ide' is not a relation; write e.g."),
    (('holds_if = "ahci / ide >= 1.5"', 'holds_if = "ahci / sata >= 1.5"'),
     "claim[1]: holds_if names 'sata', which environments does not define (it defines ahci, ide)"),
    (('ide = "qemu: disk=ide"', 'ide = "qemu:disk=scsi"'),
     "claim[1]: environments: ide = 'qemu:disk=scsi' is not the spec of any [[environment]]"),
    (('benchmark = "cdm"\nmetric', 'benchmark = "fio"\nmetric'),
     "claim[1]: benchmark 'fio' is not the label of any [[benchmark]] (labels: cdm)"),
    (('metric = "seq1m_read_mb_s"', 'metric = "iops"'),
     "claim[1]: metric 'iops' is not a metric of cdm (seq1m_read_mb_s,"),
    (('holds_if = "ahci / ide >= 1.5"', 'holds_if = "ahci / ide >= 1.5"\nwithin = 5'),
     "claim[1]: within = 5 applies to holds_if \"A == B\" only; drop it"),
    (('holds_if = "ahci / ide >= 1.5"', 'holds_if = "ahci > ahci"'),
     "names an environment twice"),
    (('holds_if = "ahci / ide >= 1.5"\n', ''), "claim[1] (AHCI beats IDE)"),
    (('source = "the post"', 'source = "the post"\ncolour = "red"'),
     "claim[1] (AHCI beats IDE): unknown key 'colour'; valid keys: benchmark, environments, "
     "holds_if, metric, "
     "note, source, text, within"),
    (('environments = { ahci', 'environments = "ahci"\nx = { ahci'),
     "environments must be a table, not 'ahci'"),
    (('environments = { ahci = "qemu:disk=ahci", ide = "qemu: disk=ide" }',
      'environments = { ahci = "qemu:disk=ahci" }'), "environments"),
])
def test_a_bad_claim_is_one_line_naming_the_table_and_key(tmp_path, change, words):
    text = HEAD + CLAIM.replace(*change)
    with pytest.raises(VirtbenchError) as err:
        _load(tmp_path, text)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("study ")


def test_a_missing_key_names_what_to_write_in_a_claim(tmp_path):
    with pytest.raises(VirtbenchError, match=r"claim\[1\] \(AHCI beats IDE\): needs holds_if: "
                                             r"add holds_if = \"ahci / ide >= 1.5\""):
        _load(tmp_path, HEAD + CLAIM.replace('holds_if = "ahci / ide >= 1.5"\n', ""))
    with pytest.raises(VirtbenchError, match=r"needs metric: add metric = \"read_mb_s\" \(one "
                                             r"of the benchmark's metrics\)"):
        _load(tmp_path, HEAD + CLAIM.replace('metric = "seq1m_read_mb_s"\n', ""))


def test_versus_names_another_environment_of_the_study(tmp_path):
    def versus(spec):
        return HEAD.replace('spec = "qemu:disk=ahci"\n',
                            f'spec = "qemu:disk=ahci"\nversus = "{spec}"\n')
    s = _load(tmp_path, versus("qemu: disk=ide"))
    assert [e.versus for e in s.environments] == [None, None, "qemu:disk=ide"]
    with pytest.raises(VirtbenchError, match=r"environment\[3\] \(qemu:disk=ahci\): versus "
                                             r"'qemu:disk=scsi' is not the name or spec of any"):
        _load(tmp_path, versus("qemu:disk=scsi"))
    with pytest.raises(VirtbenchError, match="versus names the environment itself"):
        _load(tmp_path, versus("qemu:disk=ahci"))


@pytest.mark.parametrize("name, n", [("riken-2012", 8), ("virtualbox-ahci-2010", 3),
                                     ("zhang-kvm-io", 9), ("cnaf-xen-kvm-2009", 3),
                                     ("xen-domu-io-2006", 0)])
def test_the_seed_studies_carry_their_papers_claims(name, n):
    s = study.load(ROOT / "studies" / f"{name}.toml")
    assert len(s.claims) == n
    for c in s.claims:
        assert c["text"] and c["source"]
    if name == "zhang-kvm-io":
        untuned = "qemu:disk=ide,nic=e1000,cache=writethrough,backing=raw"
        assert [e.versus for e in s.environments].count(untuned) == 4
