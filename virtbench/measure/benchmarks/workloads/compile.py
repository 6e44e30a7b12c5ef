"""`compile`: a pinned source tree built with `make -jN`, in seconds (lower is better).

Once per environment the tree is prepared in its scratch directory (a pristine copy: the
shipped Lua tree put there, or Debian's kernel tarball extracted), its sha256 checked first.
Each trial then builds a fresh `cp -a` of it (cold: no object of an earlier build), after the
configuration target for the kernel; only `make -jN` is timed (the exec's wall time, like
BLAST). The sources are read from the page cache from the first trial on: the pristine copy
was just written ("warm" in PerfKitBenchmarker's words for its second build).
"""
from __future__ import annotations

import re

from ....core.errors import VirtbenchError
from ..base import Benchmark, Metric, TrialOutcome
from .trees import (KERNEL, TREES, TREE_HASH, SourceTree, mismatch, missing_line,
                    needs_script, sha256_of_output, shipped_tar)

CONFIGS = ("defconfig", "tinyconfig")
MAX_JOBS = 1024
PREPARE_S = 1800.0            # staging or extracting the pristine copy, checking its sha256

# a compiler's, linker's or shell's own error line, before make's "*** [...] Error N"
_ERROR = re.compile(r"(\berror:|\bError:|: not found$|No such file or directory|"
                    r"cannot find|undefined reference)")
_MAKE = re.compile(r"^g?make(\[\d+\])?: \*\*\*")


def failure_line(stderr: str, stdout: str = "") -> str:
    """Pure: the one line that says why a build failed: the last error line of the compiler,
    linker or shell (`x.c:3:1: error: ...`, `/bin/sh: 1: flex: not found`), else make's last
    `***` line (an interrupted build: `... Terminated`), else the last line; never empty."""
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    own = [ln for ln in lines if _ERROR.search(ln) and not _MAKE.match(ln)]
    if own:
        return own[-1]
    made = [ln for ln in lines if "***" in ln]
    if made:
        return made[-1]
    return lines[-1] if lines else "(no output)"


def jobs_of(stdout: str) -> int | None:
    """Pure: nproc's answer as a positive count, or None."""
    word = stdout.strip()
    return int(word) if word.isdigit() and int(word) > 0 else None


class Compile(Benchmark):
    name = "compile"
    family = "workload"
    description = ("a pinned source tree built with make -jN, only the build timed: Lua 5.4.6 "
                   "(quick) or Debian 12's linux-source-6.1 with make defconfig (kernel); "
                   "each trial a fresh copy, sources in the page cache")
    metrics = (Metric("seconds", "s", False,
                      "wall time of make -jN on a fresh copy of the pinned tree (the copy and "
                      "the configuration not timed); no warm-up: every trial builds from "
                      "scratch, reading sources the page cache holds", aggregate="makespan"),)
    tools = ("make", "gcc", "tar")
    packages = ("make", "gcc", "libc6-dev", "binutils", "tar", "xz-utils", "flex", "bison", "bc",
                "perl", "libelf-dev", "libssl-dev", "linux-source-6.1")
    needs = ("scratch",)
    # size: quick (Lua) or kernel; jobs: make -jN, 0 = the environment's CPUs (nproc);
    # config: the kernel's configuration target (the kernel only)
    defaults = {"size": "kernel", "jobs": 0, "config": "defconfig"}
    quick = {"size": "quick"}

    def check(self, params):
        if params["size"] not in TREES:
            raise VirtbenchError(f"benchmark compile: size={params['size']!r} is not one of "
                                 f"{', '.join(TREES)}; write size=quick or size=kernel")
        if not 0 <= params["jobs"] <= MAX_JOBS:
            raise VirtbenchError(f"benchmark compile: jobs={params['jobs']} is out of range; "
                                 f"write 0 (the environment's CPUs) to {MAX_JOBS}")
        if params["config"] not in CONFIGS:
            raise VirtbenchError(f"benchmark compile: config={params['config']!r} is not one "
                                 f"of {', '.join(CONFIGS)}; write config=defconfig")

    def timeout(self, params):
        return 4 * 3600.0 if params["size"] == KERNEL.size else 1200.0

    # -- the pristine copy, once per environment ----------------------------------------
    def _places(self, env, tree: SourceTree) -> tuple[str, str]:
        scratch = env.scratch_dir()
        return f"{scratch}/compile-pristine-{tree.name}", f"{scratch}/compile-build-{tree.name}"

    def _run(self, env, argv: list[str], what: str, timeout: float = PREPARE_S) -> str | None:
        """Run one untimed step; its failure as one line, or None."""
        r = env.exec(argv, timeout=timeout)
        if r.timed_out:
            return f"benchmark compile: {what} timed out after {timeout:.0f} s"
        if r.exit != 0:
            return f"benchmark compile: {what} failed (exit {r.exit}): " \
                   f"{failure_line(r.stderr, r.stdout)}"
        return None

    def _prepare(self, env, tree: SourceTree) -> str | None:
        """Make the pristine copy unless it is there: the packages it needs, the sha256 of the
        shipped tree or Debian's tarball, then the copy; an error line, or None."""
        pristine, _ = self._places(env, tree)
        marker = f"{pristine}.ok"
        if env.exec(["test", "-f", marker], timeout=30).exit == 0:
            return None
        found = env.exec(["sh", "-c", needs_script(tree)], timeout=60)
        problem = missing_line(tree, found.stdout)
        if problem:
            return problem
        steps = [(["rm", "-rf", pristine, marker], "removing an old copy"),
                 (["mkdir", "-p", pristine], "making the pristine directory")]
        if tree.tarball:
            r = env.exec(["sha256sum", tree.tarball], timeout=PREPARE_S)
            digest = sha256_of_output(r.stdout)
            if digest != tree.sha256:
                return mismatch(tree, digest or f"(unreadable: {failure_line(r.stderr)})",
                                tree.tarball)
            steps.append((["tar", "-xJf", tree.tarball, "-C", pristine], "extracting"))
        else:
            staged = f"{pristine}.tar"
            env.agent.put(staged, shipped_tar(tree))
            steps += [(["tar", "-xf", staged, "-C", pristine], "extracting"),
                      (["rm", "-f", staged], "removing the staged tar")]
        for argv, what in steps:
            error = self._run(env, argv, f"{what} ({tree.name})")
            if error:
                return error
        if not tree.tarball:
            r = env.exec(["sh", "-c", TREE_HASH, "sh", f"{pristine}/{tree.top}"], timeout=300)
            digest = sha256_of_output(r.stdout)
            if digest != tree.sha256:
                return mismatch(tree, digest or "(not taken)", f"{pristine}/{tree.top}")
        return self._run(env, ["sh", "-c", 'echo "$1" > "$2"', "sh", tree.sha256, marker],
                         "marking the pristine copy")

    # -- one trial ----------------------------------------------------------------------
    def _jobs(self, env, params) -> tuple[int, str | None]:
        if params["jobs"]:
            return params["jobs"], None
        r = env.exec(["nproc"], timeout=30)
        jobs = jobs_of(r.stdout) if r.exit == 0 else None
        return (jobs, None) if jobs else (0, f"benchmark compile: nproc said {r.stdout.strip()!r}"
                                          f" (exit {r.exit}); give jobs=N")

    def _fresh(self, env, tree: SourceTree, params) -> str | None:
        """A fresh copy of the pristine tree in the build directory, configured."""
        pristine, build = self._places(env, tree)
        error = (self._run(env, ["rm", "-rf", build], "removing the last build")
                 or self._run(env, ["cp", "-a", f"{pristine}/{tree.top}", build], "copying"))
        if error or tree is not KERNEL:
            return error
        return self._run(env, ["make", "-s", "-C", build, params["config"]],
                         f"make {params['config']}", timeout=self.timeout(params))

    def run_trial(self, env, params, start_at=None, slot_s=None) -> TrialOutcome:
        tree = TREES[params["size"]]
        try:
            jobs, error = self._jobs(env, params)
            error = error or self._prepare(env, tree) or self._fresh(env, tree, params)
        except VirtbenchError as exc:
            error = str(exc)
        if error:
            return TrialOutcome(error=error)
        _, build = self._places(env, tree)
        try:
            return self._build(env, tree, params, build, jobs)
        finally:
            env.exec(["rm", "-rf", build], timeout=PREPARE_S)

    def _build(self, env, tree: SourceTree, params, build: str, jobs: int) -> TrialOutcome:
        """The timed `make -jN`, and the artifact it must leave."""
        timeout = self.timeout(params)
        r = env.exec(["make", "-s", "-C", build, f"-j{jobs}"], timeout=timeout)
        out = TrialOutcome(stdout=r.stdout, stderr=r.stderr, exit=r.exit, wall_s=r.wall_s,
                           detail={"tree": tree.pinned, "jobs": jobs,
                                   "config": params["config"] if tree is KERNEL else "",
                                   "cache": "sources in the page cache; build from scratch"})
        if r.timed_out:
            out.error = f"make -j{jobs} timed out after {timeout:.0f} s"
        elif r.exit != 0:
            out.error = f"make -j{jobs} exit {r.exit}: {failure_line(r.stderr, r.stdout)}"
        elif env.exec(["test", "-f", f"{build}/{tree.artifact}"], timeout=30).exit != 0:
            out.error = f"make -j{jobs} exited 0 but left no {tree.artifact} in {tree.name}"
        else:
            out.values = {"seconds": r.wall_s}
        return out
