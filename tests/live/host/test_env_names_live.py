"""The live part of tests/unit/study/test_env_names.py: its tests that need root and this host.

`name=LABEL` for every environment kind: one option, taken by the base, shown in the
label (the generated one kept as kind_label), kept in the store; two environments alike but for their names are two environments.
"""
from __future__ import annotations
import json
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.measure import environments
from virtbench.measure.environments import KINDS
from virtbench.foundations.store import Store

# a spec of each kind that can be made without starting anything
SPECS = {"native": "native", "qemu": "qemu", "container": "container", "gvisor": "gvisor",
         "nested": "nested",
         "ssh": "ssh:host=192.0.2.1", "libvirt": "libvirt:uri=qemu:///system",
         "libvirt-domain": "libvirt:uri=test:///default,domain=test"}


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_every_kind_takes_a_name_shown_in_its_label(kind):
    plain = environments.create(SPECS[kind])
    named = environments.create(SPECS[kind] + ("," if ":" in SPECS[kind] else ":") + "name=twin")
    assert named.name == "twin" and plain.name is None
    assert named.label == "twin" != plain.label      # the name is the label
    assert named.kind_label == plain.label              # the generated one stays a fact
    assert "name=LABEL" in KINDS[kind.split("-")[0]].options_text()


def test_an_aa_twin_is_a_one_liner(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    monkeypatch.setenv("VIRTBENCH_TMP", str(tmp_path / "work"))
    code = cli.main(["run", "--env", "native", "--env", "native:name=twin", "--bench",
                     "pi:k=10", "--trials", "2", "--store", url, "--no-progress"])
    assert code == 0
    store = Store(url)
    run = store.get_run()
    envs = {e["label"]: e for e in store.environments(run["id"])}
    assert set(envs) == {"native", "twin"}
    assert envs["twin"]["options"]["name"] == "twin"
    assert envs["twin"]["metadata"]["name"] == "twin"
    assert envs["twin"]["metadata"]["kind_label"] == "native"
    assert envs["twin"]["kind"] == "native" and envs["twin"]["spec"] == "native:name=twin"
    assert "name" not in envs["native"]["options"]
    trials = store.trials(run["id"])
    assert {(t["environment"], t["status"]) for t in trials} == {("native", "ok"),
                                                                  ("twin", "ok")}
    assert json.dumps(envs["twin"]["metadata"])     # stored as JSON
