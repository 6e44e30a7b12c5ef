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
QUICK_TRIALS = 3         # --quick without --trials caps a study's trials at this


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
    # What virtbench lacks to start this environment here (e.g. "xen"): the study still lists
    # it, so the design is complete and its published figures are shown, but a run skips it.
    requires: str | None = None
    note: str | None = None

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
    published: list[dict] = field(default_factory=list)   # figures of the source, see _published

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Study":
        d = dict(d)
        d["environments"] = [EnvironmentEntry(**e) for e in d["environments"]]
        d["benchmarks"] = [BenchmarkCase(**b) for b in d["benchmarks"]]
        return cls(**d)


STUDY_KEYS = {"name", "trials", "baseline", "threshold", "seed", "environment", "benchmark",
              "description", "published"}
ENVIRONMENT_KEYS = {"spec", "requires", "note"}
PUBLISHED_KEYS = {"environment", "benchmark", "metric", "source", "ratio", "value", "versus",
                  "versus_value", "verdict", "note", "unmeasured"}


def _fail(path, what: str) -> VirtbenchError:
    return VirtbenchError(f"study {path}: {what}")


def default_baseline(baseline: str | None, labels) -> str | None:
    """The study's baseline, or `native` when the study has it and names none."""
    if baseline is None and "native" in labels:
        return "native"
    return baseline


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
        unknown_env = sorted(set(entry) - ENVIRONMENT_KEYS)
        if unknown_env:
            raise _fail(path, f"[[environment]] {entry['spec']}: unknown key {unknown_env[0]!r}; "
                        f"valid keys: {', '.join(sorted(ENVIRONMENT_KEYS))}")
        for key in ("requires", "note"):
            if key in entry and not isinstance(entry[key], str):
                raise _fail(path, f"[[environment]] {entry['spec']}: {key} must be a string")
        EnvSpec.parse(entry["spec"])      # the syntax, even for one that cannot start here
        envs.append(EnvironmentEntry(entry["spec"], entry.get("requires"), entry.get("note")))
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
    published = _published(path, data.get("published", []), envs, cases)
    return Study(name=str(data.get("name", path.stem)), environments=envs, benchmarks=cases,
                 trials=data.get("trials", DEFAULT_TRIALS), baseline=data.get("baseline"),
                 threshold_pct=float(data.get("threshold", DEFAULT_THRESHOLD)),
                 seed=data.get("seed"), source=str(path), published=published)


def normalize_spec(spec: str) -> str:
    """One spelling per environment spec (spaces dropped), to match entries by spec."""
    return str(EnvSpec.parse(spec))


def _published(path, entries, envs: list[EnvironmentEntry], cases: list[BenchmarkCase]) -> list[dict]:
    """[[published]]: the source's own figures, to be shown beside the measured ones.

    Each names an environment (its spec as in [[environment]]), a benchmark (its label) and
    a metric, cites where the figure is (`source`), and gives the figure as the source does:
    `ratio` (environment / reference), or `value` with `versus_value` (then the ratio is
    derived), or a `value` alone, or only a `verdict` ("pass"/"fail", a source's own ✓/✗
    table). `versus` is the spec of the reference environment when it is not the study's
    baseline. `unmeasured = "why"` admits a figure of a benchmark the study cannot run
    (e.g. a proprietary suite): it is shown, never matched.
    """
    if not isinstance(entries, list):
        raise _fail(path, "published must be an array of tables: [[published]]")
    specs = {normalize_spec(e.spec) for e in envs}
    labels = {c.label for c in cases}
    out = []
    for i, entry in enumerate(entries, 1):
        where = f"[[published]] #{i}"
        if not isinstance(entry, dict):
            raise _fail(path, f"{where} must be a table")
        unknown = sorted(set(entry) - PUBLISHED_KEYS)
        if unknown:
            raise _fail(path, f"{where}: unknown key {unknown[0]!r}; valid keys: "
                        f"{', '.join(sorted(PUBLISHED_KEYS))}")
        for key in ("environment", "benchmark", "metric", "source"):
            if not isinstance(entry.get(key), str):
                raise _fail(path, f"{where} needs {key} = \"...\"")
        env = normalize_spec(entry["environment"])
        if env not in specs:
            raise _fail(path, f"{where}: environment {entry['environment']!r} is not the spec of "
                        "any [[environment]] of this study; copy its spec")
        versus = normalize_spec(entry["versus"]) if "versus" in entry else None
        if versus is not None and versus not in specs:
            raise _fail(path, f"{where}: versus {entry['versus']!r} is not the spec of any "
                        "[[environment]] of this study")
        if "unmeasured" in entry and not isinstance(entry["unmeasured"], str):
            raise _fail(path, f"{where}: unmeasured must say why, e.g. unmeasured = \"proprietary\"")
        if entry["benchmark"] not in labels and "unmeasured" not in entry:
            raise _fail(path, f"{where}: benchmark {entry['benchmark']!r} is not the label of any "
                        f"[[benchmark]] (labels: {', '.join(sorted(labels))}); or say why it "
                        "cannot be, with unmeasured = \"...\"")
        for key in ("ratio", "value", "versus_value"):
            if key in entry and (not isinstance(entry[key], (int, float))
                                 or isinstance(entry[key], bool) or entry[key] <= 0):
                raise _fail(path, f"{where}: {key} must be a positive number")
        if "verdict" in entry and entry["verdict"] not in ("pass", "fail"):
            raise _fail(path, f"{where}: verdict must be \"pass\" or \"fail\"")
        ratio, derived = entry.get("ratio"), False
        if ratio is None and "value" in entry and "versus_value" in entry:
            ratio, derived = entry["value"] / entry["versus_value"], True
        if ratio is None and "verdict" not in entry and "value" not in entry:
            raise _fail(path, f"{where}: give ratio, or value (with versus_value), or verdict")
        out.append({"environment": env, "benchmark": entry["benchmark"], "metric": entry["metric"],
                    "ratio": None if ratio is None else float(ratio), "ratio_derived": derived,
                    "value": entry.get("value"), "versus": versus,
                    "versus_value": entry.get("versus_value"), "verdict": entry.get("verdict"),
                    "source": entry["source"], "note": entry.get("note"),
                    "unmeasured": entry.get("unmeasured")})
    return out


def skipped_environments(study: Study) -> list[tuple[str, str]]:
    """(spec, why) for every environment the study lists but virtbench cannot start here.

    Pure: decided from the study alone (an entry with `requires`), so the runner can print
    one line per entry and leave it out of the plan before anything is probed or started.
    """
    out = []
    for e in study.environments:
        if e.requires:
            why = f"needs {e.requires}, which virtbench cannot provide on this host yet"
            out.append((e.spec, f"{why}; {e.note}" if e.note else why))
    return out


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
    if quick and trials is None:
        # a smoke run: enough trials for a CI and a p-value, not the full design's count
        study.trials = min(study.trials, QUICK_TRIALS)
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
