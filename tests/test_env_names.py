"""`name=LABEL` for every environment kind: one option, taken by the base, shown in the
label, kept in the store; two environments alike but for their names are two environments."""
from __future__ import annotations

import json

import pytest

from virtbench import cli, environments
from virtbench.environments import KINDS
from virtbench.errors import VirtbenchError
from virtbench.store import Store

# a spec of each kind that can be made without starting anything
SPECS = {"native": "native", "qemu": "qemu", "container": "container", "gvisor": "gvisor",
         "nested": "nested",
         "ssh": "ssh:host=192.0.2.1", "libvirt": "libvirt:uri=qemu:///system",
         "libvirt-domain": "libvirt:uri=test:///default,domain=test"}


def test_every_kind_is_covered():
    assert {k.split("-")[0] for k in SPECS} == set(KINDS)


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_every_kind_takes_a_name_shown_in_its_label(kind):
    plain = environments.create(SPECS[kind])
    named = environments.create(SPECS[kind] + ("," if ":" in SPECS[kind] else ":") + "name=twin")
    assert named.name == "twin" and plain.name is None
    assert named.label != plain.label
    if kind == "ssh":          # the name stands where the host would be
        assert named.label == "ssh/twin" and plain.label == "ssh/192.0.2.1"
    else:
        assert named.label == f"{plain.label}/twin"
    assert "name=LABEL" in KINDS[kind.split("-")[0]].options_text()


def test_a_group_of_named_instances_keeps_the_name_before_the_count():
    env = environments.create("native:instances=2,name=twin")
    assert env.label == "native/twin/x2"
    assert all(m.name == "twin" for m in env.members)


@pytest.mark.parametrize("bad", ["a/b", "-x", "a b", "x" * 64, "é"])
def test_a_bad_name_is_one_line_naming_the_fix(bad):
    with pytest.raises(VirtbenchError, match=r"name=.* is not valid; use letters") as info:
        environments.create(f"native:name={bad}")
    assert "\n" not in str(info.value)


def test_two_named_natives_are_two_agents():
    a, b = environments.create("native"), environments.create("native:name=twin")
    with a, b:
        assert a.agent is not b.agent
        assert a.agent.proc.pid != b.agent.proc.pid
        assert a.exec(["echo", "a"], timeout=10).stdout == "a\n"
        assert b.exec(["echo", "b"], timeout=10).stdout == "b\n"


def test_an_aa_twin_is_a_one_liner(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    monkeypatch.setenv("VIRTBENCH_TMP", str(tmp_path / "work"))
    code = cli.main(["run", "--env", "native", "--env", "native:name=twin", "--bench",
                     "pi:k=10", "--trials", "2", "--store", url, "--no-progress"])
    assert code == 0
    store = Store(url)
    run = store.get_run()
    envs = {e["label"]: e for e in store.environments(run["id"])}
    assert set(envs) == {"native", "native/twin"}
    assert envs["native/twin"]["options"]["name"] == "twin"
    assert envs["native/twin"]["metadata"]["name"] == "twin"
    assert "name" not in envs["native"]["options"]
    trials = store.trials(run["id"])
    assert {(t["environment"], t["status"]) for t in trials} == {("native", "ok"),
                                                                  ("native/twin", "ok")}
    assert json.dumps(envs["native/twin"]["metadata"])     # stored as JSON


def test_two_environments_with_one_label_are_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    code = cli.main(["run", "--env", "native:name=twin", "--env", "native:name=twin",
                     "--bench", "pi:k=10", "--store", url])
    assert code == 2
