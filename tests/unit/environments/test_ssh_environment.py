"""The `ssh` environment against a target it did not start: a private sshd on 127.0.0.1
(this machine standing for a remote one)."""
import os
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.measure.environments import create
from virtbench.core.errors import VirtbenchError


def test_spec_needs_a_host():
    with pytest.raises(VirtbenchError, match="host= is required"):
        create("ssh:name=x")


@pytest.mark.parametrize("option", [
    "host=-oProxyCommand=touch%20x", "host=a b", "host=a;id", "host=$(id)", "host=h`id`",
    "user=-l", "user=root;id", "user=a b", "peer=-x", "peer=1.2.3.4|id", "key=-oX",
    "known_hosts=~/kh;id", "scratch=/tmp/$(id)", "scratch=relative/dir", "port=0"])
def test_options_that_could_reach_ssh_or_a_shell_as_more_than_a_value_are_refused(
        option, capsys, store_url):
    key, _, value = option.partition("=")
    value = value.replace("%20", " ")
    spec = f"ssh:host=192.0.2.10,{key}={value}" if key != "host" else f"ssh:host={value}"
    code = cli.main(["run", "--env", spec, "--bench", "pi", "--trials", "1", "--quick",
                     "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"{key}=" in err[0] and "is not valid" in err[0]
    assert not os.path.exists(store_url[len("sqlite:///"):])


@pytest.mark.parametrize("spec", [
    "ssh:host=xen-domu.example.org,user=bench_user,peer=192.0.2.1",
    "ssh:host=192.0.2.10,user=root,scratch=/srv/scratch,key=~/.ssh/id_ed25519",
    "ssh:host=[2001:db8::1],name=v6", "ssh:host=my_alias,known_hosts=/root/.ssh/kh"])
def test_ordinary_targets_are_accepted(spec):
    env = create(spec)
    assert env.values["host"] == spec.split("host=")[1].split(",")[0]
