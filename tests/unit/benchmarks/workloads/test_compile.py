"""`compile`: the pinned trees and their sha256, the one line of a failed build (on make's
real output captured here), the parameters, and a trial's steps through a fake environment."""
from __future__ import annotations

import dataclasses
import io
import subprocess
import tarfile

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.agent.transport import ExecResult
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.workloads import trees
from virtbench.measure.benchmarks.workloads.compile import failure_line, jobs_of

BENCH = REGISTRY["compile"]


# -- the one line of a failed build, on real output ----------------------------------------
@pytest.mark.parametrize("name, line", [
    ("lua-broken-file", "lapi.c:20:14: error: expected expression before ‘;’ token"),
    ("lua-no-compiler", "make: gcc-absent: No such file or directory"),
    ("lua-interrupted", "make: *** [<builtin>: lcode.o] Terminated"),
    ("kernel-defconfig-no-flex", "/bin/sh: 1: flex: not found"),
])
def test_a_failed_build_is_its_last_error_line(fixture_text, name, line):
    assert failure_line(fixture_text("workloads", "make", f"{name}.txt")) == line


def test_every_make_fixture_says_how_it_was_captured(fixture_text):
    for name in ("lua-broken-file", "lua-no-compiler", "lua-interrupted",
                 "kernel-defconfig-no-flex"):
        source = fixture_text("workloads", "make", f"{name}.source")
        assert "captured here" in source and "exit " in source


def test_a_build_that_said_nothing_is_still_one_line():
    assert failure_line("", "") == "(no output)"
    assert failure_line("\n  \n", "last words\n") == "last words"


def test_nproc_answer():
    assert jobs_of("2\n") == 2
    assert jobs_of("") is None and jobs_of("0") is None and jobs_of("two") is None


# -- the pins --------------------------------------------------------------------------
def test_the_shipped_lua_tree_is_the_pinned_one():
    files = trees.shipped_files(trees.LUA)
    assert {"Makefile", "LICENSE", "SOURCE", "lua.c", "lvm.c"} <= set(files)
    assert trees.tree_sha256(files) == trees.LUA.sha256
    files["lvm.c"] += b"\n"
    assert trees.tree_sha256(files) != trees.LUA.sha256


def test_the_environment_takes_a_tree_sha256_the_same_way(tmp_path):
    files = {"a.c": b"int a;\n", "a/b.h": b"x\n", "a.h": b"", "Z": b"zz", "sub/dir/c.c": b"c"}
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    out = subprocess.run(["sh", "-c", trees.TREE_HASH, "sh", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert trees.sha256_of_output(out) == trees.tree_sha256(files)


def _copy_of_lua(tmp_path, edit: bytes = b""):
    root = tmp_path / "trees" / trees.LUA.name
    root.mkdir(parents=True)
    for rel, data in trees.shipped_files(trees.LUA).items():
        (root / rel).write_bytes(data + (edit if rel == "lapi.c" else b""))
    return root.parent


def test_the_shipped_tree_goes_out_as_a_tar_of_its_top_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(trees, "TREES_DIR", _copy_of_lua(tmp_path))
    with tarfile.open(fileobj=io.BytesIO(trees.shipped_tar(trees.LUA))) as tar:
        names = tar.getnames()
    assert "lua-5.4.6/Makefile" in names and all(n.startswith("lua-5.4.6/") for n in names)


def test_an_edited_shipped_tree_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(trees, "TREES_DIR", _copy_of_lua(tmp_path, edit=b"/* edited */\n"))
    with pytest.raises(VirtbenchError) as exc:
        trees.shipped_tar(trees.LUA)
    text = str(exc.value)
    assert len(text.splitlines()) == 1 and "virtbench pins" in text and "restore it" in text


def test_a_missing_shipped_tree_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(trees, "TREES_DIR", tmp_path)
    with pytest.raises(VirtbenchError, match="reinstall virtbench"):
        trees.shipped_files(trees.LUA)


def test_sha256sum_output():
    digest = "ab" * 32
    assert trees.sha256_of_output(f"{digest}  /usr/src/x.tar.xz\n") == digest
    assert trees.sha256_of_output("") == "" and trees.sha256_of_output("nothing here") == ""


def test_the_needs_script_names_the_package_of_each_failed_probe(tmp_path):
    present = tmp_path / "gelf.h"
    present.write_text("")
    tree = dataclasses.replace(trees.KERNEL, needs=(
        ("sh", "dash"), ("vb-absent-program", "flex"), (str(present), "libelf-dev"),
        (str(tmp_path / "absent.h"), "libssl-dev")))
    out = subprocess.run(["sh", "-c", trees.needs_script(tree)], capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["flex", "libssl-dev"]
    line = trees.missing_line(tree, out)
    assert len(line.splitlines()) == 1 and line.endswith("apt-get install flex libssl-dev")
    assert trees.missing_line(tree, "") is None


# -- parameters ----------------------------------------------------------------------------
def test_defaults_are_the_kernel_and_quick_is_lua():
    assert BENCH.params()["size"] == "kernel" and BENCH.params()["config"] == "defconfig"
    assert BENCH.params(quick=True)["size"] == "quick"


@pytest.mark.parametrize("given, word", [
    ({"size": "huge"}, "size=quick or size=kernel"), ({"jobs": -1}, "jobs=-1"),
    ({"jobs": 5000}, "jobs=5000"), ({"config": "allyesconfig"}, "config=defconfig")])
def test_parameters_out_of_range_are_one_line(given, word):
    with pytest.raises(VirtbenchError) as exc:
        BENCH.params(given)
    assert word in str(exc.value) and len(str(exc.value).splitlines()) == 1


# -- a trial through a fake environment ----------------------------------------------------
class FakeAgent:
    def __init__(self):
        self.put_paths: list[str] = []

    def put(self, path, data, mode=0o644, timeout=120):
        self.put_paths.append(path)


class FakeEnv:
    """Answers each command by its first words; records every argv."""

    def __init__(self, answers: dict[str, ExecResult] | None = None):
        self.answers = answers or {}
        self.calls: list[list[str]] = []
        self.agent = FakeAgent()
        self.files: set[str] = set()

    def scratch_dir(self):
        return "/scratch"

    def exec(self, argv, timeout, env=None, alive=None):
        self.calls.append(list(argv))
        if argv[0] == "test":
            return ExecResult(0 if argv[2] in self.files else 1, "", "", 0.01)
        if argv[:2] == ["sh", "-c"] and argv[2].startswith("echo"):
            self.files.add(argv[-1])                   # the marker
        for key, result in self.answers.items():
            if " ".join(argv).startswith(key):
                return result
        return ExecResult(0, "", "", 0.5)

    def made(self, word):
        return [c for c in self.calls if c[0] == "make" and word in " ".join(c)]


def ok(stdout="", wall=0.5):
    return ExecResult(0, stdout, "", wall)


def lua_env(**answers):
    env = FakeEnv({"nproc": ok("2\n"), "sh -c cd": ok(f"{trees.LUA.sha256}  -\n"), **answers})
    env.files.add("/scratch/compile-build-lua-5.4.6/lua")
    return env


def test_a_quick_trial_times_make_alone_on_a_fresh_copy():
    env = lua_env(**{"make -s -C /scratch/compile-build-lua-5.4.6 -j2": ok(wall=6.25)})
    params = BENCH.params(quick=True)
    first = BENCH.run_trial(env, params)
    assert first.ok, first.error
    assert first.values == {"seconds": 6.25} and first.detail["jobs"] == 2
    assert env.agent.put_paths == ["/scratch/compile-pristine-lua-5.4.6.tar"]
    copies = [c for c in env.calls if c[0] == "cp"]
    assert copies == [["cp", "-a", "/scratch/compile-pristine-lua-5.4.6/lua-5.4.6",
                       "/scratch/compile-build-lua-5.4.6"]]
    assert env.calls[-1] == ["rm", "-rf", "/scratch/compile-build-lua-5.4.6"]
    second = BENCH.run_trial(env, params)        # the pristine copy is made once
    assert second.ok and env.agent.put_paths == ["/scratch/compile-pristine-lua-5.4.6.tar"]
    assert len([c for c in env.calls if c[0] == "cp"]) == 2


def test_jobs_given_is_used_without_asking_nproc():
    env = lua_env()
    out = BENCH.run_trial(env, BENCH.params({"jobs": 3}, quick=True))
    assert out.ok and env.made("-j3") and not [c for c in env.calls if c == ["nproc"]]


def test_a_tree_whose_sha256_differs_in_the_environment_is_not_built():
    env = lua_env(**{"sh -c cd": ok("00" * 32 + "  -\n")})
    out = BENCH.run_trial(env, BENCH.params(quick=True))
    assert not out.ok and "virtbench pins" in out.error and not env.made("-j")
    assert len(out.error.splitlines()) == 1


def test_a_failed_build_is_a_failed_trial_with_its_error_line(fixture_text):
    stderr = fixture_text("workloads", "make", "lua-broken-file.txt")
    env = lua_env(**{"make -s -C": ExecResult(2, "", stderr, 3.0)})
    out = BENCH.run_trial(env, BENCH.params(quick=True))
    assert not out.ok and out.values == {}
    assert out.error == "make -j2 exit 2: lapi.c:20:14: error: expected expression before ‘;’ token"
    assert env.calls[-1] == ["rm", "-rf", "/scratch/compile-build-lua-5.4.6"]


def test_a_timed_out_build_is_never_a_time():
    env = lua_env(**{"make -s -C": ExecResult(-9, "", "", 1200.0, timed_out=True)})
    out = BENCH.run_trial(env, BENCH.params(quick=True))
    assert not out.ok and "timed out" in out.error and out.values == {}


def test_a_build_that_leaves_no_artifact_is_failed():
    env = lua_env()
    env.files.clear()
    out = BENCH.run_trial(env, BENCH.params(quick=True))
    assert not out.ok and "left no lua" in out.error and out.values == {}


def kernel_env(**answers):
    env = FakeEnv({"nproc": ok("2\n"), "sha256sum": ok(f"{trees.KERNEL.sha256}  x\n"),
                   **answers})
    env.files.add("/scratch/compile-build-linux-source-6.1/vmlinux")
    return env


def test_a_kernel_trial_extracts_debians_tarball_and_configures_untimed():
    env = kernel_env(**{"make -s -C /scratch/compile-build-linux-source-6.1 -j2": ok(wall=700.0)})
    out = BENCH.run_trial(env, BENCH.params({"config": "tinyconfig"}))
    assert out.ok and out.values == {"seconds": 700.0}
    assert ["tar", "-xJf", "/usr/src/linux-source-6.1.tar.xz", "-C",
            "/scratch/compile-pristine-linux-source-6.1"] in env.calls
    assert env.made("tinyconfig") and env.agent.put_paths == []
    assert "6.1.192-3" in out.detail["tree"] and out.detail["config"] == "tinyconfig"


def test_a_kernel_tarball_of_another_version_is_refused_before_extracting():
    env = kernel_env(**{"sha256sum": ok("11" * 32 + "  /usr/src/linux-source-6.1.tar.xz\n")})
    out = BENCH.run_trial(env, BENCH.params())
    assert not out.ok and len(out.error.splitlines()) == 1
    assert "install linux-source-6.1=6.1.192-3" in out.error
    assert not [c for c in env.calls if c[0] == "tar"] and not env.made("-j")


def test_missing_kernel_packages_are_one_line_naming_them():
    env = kernel_env(**{"sh -c command": ok("flex\nbison\nlibelf-dev\n")})
    out = BENCH.run_trial(env, BENCH.params())
    assert out.error == ("benchmark compile: building linux-source-6.1 needs bison, flex, "
                         "libelf-dev in the environment; install with: apt-get install bison "
                         "flex libelf-dev")
    assert not [c for c in env.calls if c[0] in ("tar", "sha256sum", "make")]


def test_a_failed_configuration_is_one_line_and_nothing_is_timed(fixture_text):
    stderr = fixture_text("workloads", "make", "kernel-defconfig-no-flex.txt")
    env = kernel_env(**{"make -s -C /scratch/compile-build-linux-source-6.1 defconfig":
                        ExecResult(2, "", stderr, 1.0)})
    out = BENCH.run_trial(env, BENCH.params())
    assert out.error == ("benchmark compile: make defconfig failed (exit 2): "
                         "/bin/sh: 1: flex: not found")
    assert out.values == {} and not env.made("-j")
