"""What every disk benchmark shares: a private work directory in scratch_dir, the cache
policy, the measured command, cleanup whatever happened, the physical-limit check."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from ....core.errors import AgentError, VirtbenchError
from ..base import Benchmark, ParseError, TrialOutcome, exec_error
from . import physical_limit

C_LOCALE = {"LC_ALL": "C"}   # dd and friends print decimal points, not commas
CACHES = ("out", "in")


class TrialFailed(Exception):
    """A step around the measured command failed: the trial fails with this message."""



@dataclass
class DiskTrial:
    workdir: str = ""           # ours, removed after the trial
    target: str = ""            # where the measured file goes
    extra: list[str] = field(default_factory=list)      # extra command-line arguments
    cleanup: list[list[str]] = field(default_factory=list)  # run in reverse order
    warnings: list[tuple[str, str]] = field(default_factory=list)


def last_line(text: str) -> str:
    return (text.strip().splitlines() or ["(no output)"])[-1]


class DiskBenchmark(Benchmark):
    """Shared life cycle: a private work directory in scratch_dir, the cache policy, the
    measured command, cleanup whatever happened, the physical-limit check."""

    family = "disk"
    output: str = "stdout"          # the stream parse() reads
    needs_workdir: bool = True
    needs = ("scratch",)

    def requirements(self, params):
        """cache=out drops the environment's page cache before the measured pass."""
        return self.needs + (("drop_caches",) if params.get("cache", "out") == "out" else ())

    # -- hooks ---------------------------------------------------------------------------
    def workdir(self, env) -> str:
        return posixpath.join(env.scratch_dir(), f"virtbench-{self.name}")

    def prepare(self, env, params: dict[str, Any], trial: DiskTrial) -> None:
        """Steps before the measured pass (raise TrialFailed to fail the trial)."""

    def command(self, params: dict[str, Any], trial: DiskTrial) -> list[str]:
        raise NotImplementedError

    def warm_command(self, params: dict[str, Any], trial: DiskTrial) -> list[str]:
        return self.command(params, trial)

    def limit_path(self, env, trial: DiskTrial) -> str:
        """Where the physical-limit check looks for the device under test."""
        return trial.workdir

    def extra_warnings(self, text: str) -> list[tuple[str, str]]:
        return []

    # -- Benchmark API ---------------------------------------------------------------------
    def argv(self, params, env):
        """The measured command as it would run in `env` (no side effects)."""
        trial = DiskTrial(workdir=self.workdir(env) if self.needs_workdir else "")
        trial.target = trial.workdir
        return self.command(params, trial)

    def check(self, params):
        if "cache" in params and params["cache"] not in CACHES:
            raise VirtbenchError(f"benchmark {self.name}: cache={params['cache']} is not valid; "
                                 f"use one of: {', '.join(CACHES)}")

    def _exec(self, env, argv: list[str], timeout: float):
        return env.exec(argv, timeout=timeout, env=C_LOCALE)

    def _step(self, env, argv: list[str], what: str, timeout: float = 120) -> str:
        res = self._exec(env, argv, timeout)
        if res.timed_out or res.exit != 0:
            raise TrialFailed(f"{what} failed (exit {res.exit}): {last_line(res.stderr or res.stdout)}")
        return res.stdout

    def run_trial(self, env, params) -> TrialOutcome:
        outcome = TrialOutcome()
        trial = DiskTrial()
        timeout = self.timeout(params)
        try:
            try:
                if self.needs_workdir:
                    trial.workdir = trial.target = self.workdir(env)
                    self._step(env, ["sh", "-c", 'rm -rf "$1" && mkdir -p "$1"', "sh",
                                     trial.workdir], "creating the work directory")
                self.prepare(env, params, trial)
                if params.get("cache") == "in":
                    warm = self._exec(env, self.warm_command(params, trial), timeout)
                    if warm.timed_out or warm.exit != 0:
                        raise TrialFailed(f"warm pass failed (exit {warm.exit}): "
                                          f"{last_line(warm.stderr)}")
                else:
                    env.drop_caches()
                argv = self.command(params, trial)
                result = self._exec(env, argv, timeout)
            except VirtbenchError as exc:     # e.g. the environment has no scratch disk
                raise TrialFailed(str(exc)) from exc
            outcome.stdout, outcome.stderr = result.stdout, result.stderr
            outcome.exit, outcome.wall_s = result.exit, result.wall_s
            text = result.stderr if self.output == "stderr" else result.stdout
            outcome.error = exec_error(result, timeout)
            if outcome.error is None:
                try:
                    outcome.values = self.parse(text)
                except ParseError as exc:
                    outcome.error = f"unparsable output: {exc}"
                    outcome.partial = exc.partial
            else:                       # what it measured before it failed: evidence
                outcome.partial = self.evidence(text)
            if outcome.ok:
                trial.warnings += self.extra_warnings(text)
                trial.warnings += self._limit_warnings(env, params, trial, outcome.values)
        except TrialFailed as exc:
            outcome.error = str(exc)
        finally:
            self._cleanup(env, trial)
        outcome.warnings = trial.warnings
        return outcome

    def _cleanup(self, env, trial: DiskTrial) -> None:
        steps = list(reversed(trial.cleanup))
        if trial.workdir:
            steps.append(["rm", "-rf", trial.workdir])
        for argv in steps:
            try:
                res = self._exec(env, argv, 300)
            except AgentError:
                return          # the agent is gone; the runner restarts the environment
            if res.exit != 0:
                trial.warnings.append(("cleanup", f"{' '.join(argv)} failed: "
                                                  f"{last_line(res.stderr)}"))

    def _limit_warnings(self, env, params, trial: DiskTrial, values: dict[str, float]):
        """At most one physical-limit warning per environment and benchmark (see
        physical_limit): a virtual disk on any bus is bounded by the host device behind it."""
        rates = {m.name: values[m.name] for m in self.metrics
                 if m.unit == "MB/s" and m.name in values}

        def guest_facts():
            res = self._exec(env, ["sh", "-c", physical_limit.DEVICE_FACTS_SCRIPT, "sh",
                                   self.limit_path(env, trial)], 60)
            return physical_limit.parse_device_facts(res.stdout)

        try:
            return physical_limit.LIMITS.check(env, self.name, rates, params.get("cache", "out"),
                                               guest_facts)
        except (OSError, VirtbenchError):
            return []


def fio_base(directory: str, filename: str, size_mb: int) -> list[str]:
    """The start of a fio command line that ior-rw and cdm share."""
    return ["fio", "--output-format=json", f"--directory={directory}",
            f"--filename={filename}", f"--size={size_mb}M"]
