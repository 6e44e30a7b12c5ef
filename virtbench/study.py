"""A study: which environments, which benchmarks, how many trials, which baseline.

Loaded from a TOML file or built from flags (a flag overrides the file), validated up front
so that bad input stops before anything runs or is stored. `plan()` expands it into trials.
"""
from __future__ import annotations

import random
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import benchmarks
from .environments import EnvSpec
from .errors import VirtbenchError

DEFAULT_TRIALS = 12      # the RIKEN method: 12 trials, drop max and min, mean of the rest
DEFAULT_THRESHOLD = 10.0


@dataclass
class BenchmarkCase:
    """One benchmark with the parameters a study gave it, under a label unique in the study."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    def __post_init__(self):
        if not self.label:
            extra = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
            self.label = f"{self.name}[{extra}]" if extra else self.name


@dataclass
class EnvironmentEntry:
    spec: str

    def parsed(self) -> EnvSpec:
        return EnvSpec.parse(self.spec)


@dataclass
class Study:
    name: str
    environments: list[EnvironmentEntry]
    benchmarks: list[BenchmarkCase]
    trials: int = DEFAULT_TRIALS
    baseline: str | None = None
    threshold_pct: float = DEFAULT_THRESHOLD
    seed: int | None = None
    quick: bool = False
    source: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Study":
        d = dict(d)
        d["environments"] = [EnvironmentEntry(**e) for e in d["environments"]]
        d["benchmarks"] = [BenchmarkCase(**b) for b in d["benchmarks"]]
        return cls(**d)


STUDY_KEYS = {"name", "trials", "baseline", "threshold", "seed", "environment", "benchmark",
              "description"}


def _fail(path, what: str) -> VirtbenchError:
    return VirtbenchError(f"study {path}: {what}")


def load(path: str | Path) -> Study:
    """Read a study file; every problem is one line naming the file, the key and the fix."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise VirtbenchError(f"study {path}: no such file; give the path of a .toml study "
                             "(the seed studies are in studies/)") from None
    except tomllib.TOMLDecodeError as exc:
        raise _fail(path, f"not valid TOML ({exc}); fix the syntax at that line") from None
    unknown = sorted(set(data) - STUDY_KEYS)
    if unknown:
        raise _fail(path, f"unknown key {unknown[0]!r}; valid keys: {', '.join(sorted(STUDY_KEYS))}")
    envs = []
    for i, entry in enumerate(data.get("environment", []), 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("spec"), str):
            raise _fail(path, f"[[environment]] #{i} needs spec = \"KIND[:key=value,...]\"")
        envs.append(EnvironmentEntry(entry["spec"]))
    cases = []
    for i, entry in enumerate(data.get("benchmark", []), 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _fail(path, f"[[benchmark]] #{i} needs name = \"BENCHMARK\" "
                        "(see `virtbench benchmarks`)")
        params = entry.get("params", {})
        if not isinstance(params, dict):
            raise _fail(path, f"[[benchmark]] {entry['name']}: params must be a table, "
                        "e.g. params = { elements = 10000000 }")
        cases.append(BenchmarkCase(entry["name"], dict(params), entry.get("label", "")))
    for key, kind in (("trials", int), ("threshold", (int, float)), ("seed", int)):
        if key in data and (not isinstance(data[key], kind) or isinstance(data[key], bool)):
            raise _fail(path, f"{key} must be a number, not {data[key]!r}")
    return Study(name=str(data.get("name", path.stem)), environments=envs, benchmarks=cases,
                 trials=data.get("trials", DEFAULT_TRIALS), baseline=data.get("baseline"),
                 threshold_pct=float(data.get("threshold", DEFAULT_THRESHOLD)),
                 seed=data.get("seed"), source=str(path))


def with_flags(study: Study | None, envs: list[str] | None = None,
               benches: list[str] | None = None, trials: int | None = None,
               baseline: str | None = None, seed: int | None = None,
               quick: bool = False) -> Study:
    """Apply command-line flags on top of a study (or make one from flags alone)."""
    if study is None:
        study = Study(name="adhoc", environments=[], benchmarks=[])
    if envs:
        study.environments = [EnvironmentEntry(s) for s in envs]
    if benches:
        by_name = {c.name: c for c in study.benchmarks}
        study.benchmarks = [by_name.get(name) or BenchmarkCase(name) for name in benches]
    if trials is not None:
        study.trials = trials
    if baseline is not None:
        study.baseline = baseline
    if seed is not None:
        study.seed = seed
    study.quick = study.quick or quick
    if not study.environments:
        study.environments = [EnvironmentEntry("native")]
    return study


def validate(study: Study) -> None:
    """Everything that can be checked without starting anything."""
    if not study.benchmarks:
        raise VirtbenchError("nothing to run: give a study file or --bench NAME "
                             "(see `virtbench benchmarks`)")
    if study.trials < 1:
        raise VirtbenchError(f"trials must be at least 1, not {study.trials}")
    labels = set()
    for case in study.benchmarks:
        benchmarks.get(case.name).params(case.params, quick=study.quick)
        if case.label in labels:
            raise VirtbenchError(f"benchmark {case.label} appears twice; give one a label = \"...\"")
        labels.add(case.label)


@dataclass(frozen=True)
class PlannedTrial:
    """One slot of the plan: run `benchmark` in `environment` for the `trial`-th time."""

    seq: int
    trial: int
    environment: str        # environment label
    benchmark: str          # benchmark case label


def plan(env_labels: list[str], case_labels: list[str], trials: int, seed: int) -> list[PlannedTrial]:
    """Randomised block order: each block is every (environment, benchmark) once, shuffled
    with the run's seed, so slow drift of the host never lands on one environment."""
    rng = random.Random(seed)
    slots: list[PlannedTrial] = []
    for t in range(trials):
        block = [(e, c) for e in env_labels for c in case_labels]
        rng.shuffle(block)
        for env, case in block:
            slots.append(PlannedTrial(len(slots), t, env, case))
    return slots
