import os
import pytest

from virtbench import environments
from virtbench.environments import EnvSpec
from virtbench.errors import VirtbenchError


def test_spec_parsing():
    spec = EnvSpec.parse("qemu:disk=ide,nic=e1000,vcpus=2")
    assert spec.kind == "qemu"
    assert spec.options == {"disk": "ide", "nic": "e1000", "vcpus": "2"}
    assert str(spec) == "qemu:disk=ide,nic=e1000,vcpus=2"
    assert EnvSpec.parse("native") == EnvSpec("native", {})


@pytest.mark.parametrize("text, words", [
    ("", "empty environment spec"),
    ("qemu:disk", "is not key=value"),
    ("qemu:disk=ide,disk=ahci", "given twice"),
])
def test_bad_specs(text, words):
    with pytest.raises(VirtbenchError, match=words):
        EnvSpec.parse(text)


def test_unknown_kind_lists_the_valid_ones():
    with pytest.raises(VirtbenchError, match="unknown environment kind 'vmware-fusion'; valid kinds: .*native"):
        environments.create("vmware-fusion")


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(VirtbenchError, match="native: unknown option colour; valid options: scratch"):
        environments.create("native:colour=red")


def test_native_runs_commands_and_fingerprints_itself():
    env = environments.create("native")
    assert env.label == "native"
    with env:
        assert env.exec(["echo", "hi"], timeout=5).stdout == "hi\n"
        md = env.metadata()
    assert md["cores"] >= 1 and md["kernel"].startswith("Linux")
    assert md["host_kernel"] == os.uname().release
    assert env.agent is None   # stop() closed it
