"""`name=LABEL` for every environment kind: one option, taken by the base, shown in the
label, kept in the store; two environments alike but for their names are two environments."""
from __future__ import annotations
import pytest
from virtbench.cli import commands as cli
from virtbench import environments
from virtbench.environments import KINDS
from virtbench.core.errors import VirtbenchError

# a spec of each kind that can be made without starting anything
SPECS = {"native": "native", "qemu": "qemu", "container": "container", "gvisor": "gvisor",
         "nested": "nested",
         "ssh": "ssh:host=192.0.2.1", "libvirt": "libvirt:uri=qemu:///system",
         "libvirt-domain": "libvirt:uri=test:///default,domain=test"}


def test_every_kind_is_covered():
    assert {k.split("-")[0] for k in SPECS} == set(KINDS)


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


def test_two_environments_with_one_label_are_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    code = cli.main(["run", "--env", "native:name=twin", "--env", "native:name=twin",
                     "--bench", "pi:k=10", "--store", url])
    assert code == 2
