"""`name=LABEL` for every environment kind: one option, taken by the base, shown in the
label (the generated one kept as kind_label), kept in the store; two environments alike but for their names are two environments."""
from __future__ import annotations
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.measure import environments
from virtbench.measure.environments import KINDS
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
    assert env.label == "twin/x2" and env.kind_label == "native/x2"
    assert all(m.name == "twin" and m.label == "twin" for m in env.members)


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_the_name_is_the_label_and_the_kind_label_stays(kind):
    spec = SPECS[kind]
    plain = environments.create(spec)
    named = environments.create(spec + ("," if ":" in spec else ":") + "name=full")
    assert named.label == "full"
    assert named.kind_label == plain.kind_label == plain.label


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


def test_two_environments_with_one_label_are_refused(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    code = cli.main(["run", "--env", "native:name=twin", "--env", "qemu:name=twin",
                     "--bench", "pi:k=10", "--store", url, "--dry-run"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and "same label as another (twin)" in err \
        and "name=LABEL" in err
    assert not (tmp_path / "runs.db").exists()


def test_a_name_that_is_another_environments_label_is_refused(capsys):
    code = cli.main(["run", "--env", "native", "--env", "qemu:name=native",
                     "--bench", "pi", "--dry-run"])
    assert code == 2 and "same label as another (native)" in capsys.readouterr().err


def test_the_baseline_is_named_by_its_name(capsys):
    code = cli.main(["run", "--env", "native", "--env", "container:name=full",
                     "--bench", "pi", "--baseline", "full", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert "baseline: full;" in out

