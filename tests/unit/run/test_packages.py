"""A study's Debian packages per environment (Benchmark.packages): the union of its cases'
is given to each environment that takes packages (capability `packages`: a tree virtbench
builds), before it starts; the others keep their own programs, a missing one refused in one
line naming the packages and where to install them."""
from __future__ import annotations

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.execution.run import prepare as prep
from virtbench.measure.benchmarks.base import Benchmark, exec_error
from virtbench.measure.environments import create
from virtbench.machinery.agent.transport import ExecResult
from virtbench.machinery.host import tools as hosttools
from virtbench.study.design import BenchmarkCase, EnvironmentEntry
from runkit import one_study


class Cache(Benchmark):
    name, family, tools = "cache", "test", ("redis-server", "redis-benchmark")
    packages = ("redis-tools", "redis-server")


class Zip(Benchmark):
    name, family, tools, packages = "zip", "test", ("bzip2",), ("bzip2",)


class Kernel(Benchmark):
    name, family, tools = "kernel", "test", ("pi",)


CASES = {"cache": (Cache(), {}), "zip": (Zip(), {}), "pi": (Kernel(), {})}


def test_the_union_of_the_cases_that_run_sorted_once_each():
    assert prep.packages_for("qemu", CASES, set()) == ("bzip2", "redis-server", "redis-tools")
    assert prep.packages_for("qemu", CASES, {("qemu", "cache")}) == ("bzip2",)
    assert prep.packages_for("qemu", CASES, {("other", "zip")}) == (
        "bzip2", "redis-server", "redis-tools")
    assert prep.packages_for("qemu", {"pi": (Kernel(), {})}, set()) == ()


def test_kinds_whose_tree_virtbench_builds_are_given_them_the_others_are_not():
    envs = {spec: create(spec) for spec in ("qemu", "container", "gvisor", "native",
                                            "libvirt:uri=qemu:///system", "ssh:host=h",
                                            "libvirt:uri=test:///default,domain=d")}
    prep.give_packages(envs, CASES, {("container", "cache")})
    assert envs["qemu"].image_packages == ("bzip2", "redis-server", "redis-tools")
    assert envs["libvirt:uri=qemu:///system"].image_packages == envs["qemu"].image_packages
    assert envs["container"].packages == ("bzip2",)                 # its cases that run
    assert envs["gvisor"].packages == ("bzip2", "redis-server", "redis-tools")
    for spec in ("native", "ssh:host=h", "libvirt:uri=test:///default,domain=d"):
        assert not envs[spec].capabilities().packages, spec
        with pytest.raises(VirtbenchError, match="install a benchmark's packages there"):
            envs[spec].add_packages(["bzip2"])           # the record's words, never silently


def test_a_nested_guest_says_why_it_takes_none():
    answer = create("nested").capabilities().packages
    assert not answer and "run a benchmark that needs Debian packages in qemu" in answer.reason


def test_an_instance_group_gives_every_instance_the_packages():
    group = create("container:instances=2")
    prep.give_packages({"g": group}, {"zip": (Zip(), {})}, set())
    assert [m.packages for m in group.members] == [("bzip2",), ("bzip2",)]


def test_packages_given_twice_are_one_set():
    env = create("qemu")
    env.add_packages(["redis-tools"])
    env.add_packages(["bzip2", "redis-tools"])
    assert env.image_packages == ("bzip2", "redis-tools")
    assert env._make_twin([]).image_packages == env.image_packages   # a profiling twin too


def test_prepare_gives_a_dry_runs_environments_their_packages():
    study = one_study(environments=[EnvironmentEntry("qemu"), EnvironmentEntry("native")],
                      benchmarks=[BenchmarkCase("blast", {}, "blast")])
    prepared = prep.prepare(study, dry_run=True)
    qemu = next(e for e in prepared.envs.values() if e.kind == "qemu")
    assert qemu.image_packages == ("ncbi-blast+",)


def test_the_install_line_names_the_target_for_a_machine_of_the_users():
    assert hosttools.install_hint(["redis-server", "redis-benchmark"], "192.0.2.7") == \
        "install with: apt-get install redis-server redis-tools on 192.0.2.7"
    assert hosttools.install_hint(["blastn"]).endswith("installs every benchmark's tools)")


class FakeSession:
    def __init__(self, lacking: str, exit: int = 0):
        self.lacking, self.exit, self.argv = lacking, exit, None

    def run(self, argv, timeout):
        from virtbench.machinery.host.net.sshsession import SshResult
        self.argv = argv
        return SshResult(self.exit, self.lacking, "sh: broken\n" if self.exit else "")


def test_an_ssh_target_is_asked_for_its_programs_and_refused_in_one_line():
    env = create("ssh:host=192.0.2.7,name=far")
    env.session = FakeSession("redis-server\nredis-benchmark\n")
    with pytest.raises(VirtbenchError) as exc:
        prep.check_tools({"far": env}, {"cache": (Cache(), {})})
    assert str(exc.value) == ("far cannot run cache: redis-server, redis-benchmark not found; "
                              "install with: apt-get install redis-server redis-tools on "
                              "192.0.2.7")
    assert env.session.argv[-2:] == ["redis-server", "redis-benchmark"]  # arguments, not code
    assert env.missing_tools(["pi", "stream"]) == []         # our kernels: staged at start


def test_an_ssh_target_that_cannot_answer_is_one_line():
    env = create("ssh:host=192.0.2.7")
    env.session = FakeSession("", exit=2)
    with pytest.raises(VirtbenchError, match="cannot ask root@192.0.2.7:22 which programs"):
        env.missing_tools(["bzip2"])


def test_an_existing_domain_says_where_and_a_trial_names_the_packages():
    env = create("libvirt:uri=test:///default,domain=web1")
    assert env.missing_tools(["redis-server"]) == []     # it may be off: told at the trial
    assert env.tools_place() == "the domain web1"
    result = ExecResult(exit=127, stdout="", stderr="sh: 1: redis-server: not found\n",
                        wall_s=0.1, timed_out=False)
    line = exec_error(result, 60, Cache.packages)
    assert "redis-server: not found" in line
    assert "apt-get install redis-server redis-tools" in line
    assert Cache().outcome_of(result, 60).error == line
    assert "image recipe" in exec_error(result, 60)          # a benchmark naming none
