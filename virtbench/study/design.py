"""A study: which environments, which benchmarks, how many trials, which baseline.

Loaded from a TOML file or built from flags (a flag overrides the file), validated up front
so that bad input stops before anything runs or is stored. `plan()` expands it into trials.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import StrictBool, StrictStr, TypeAdapter, ValidationError

from .. import __version__
from ..measure import benchmarks
from ..core import defaults
from . import claims as study_claims, schema as study_schema, stored
from .baseline import resolve_baseline, Candidate
from ..measure.environments import EnvSpec
from ..core.errors import VirtbenchError
from ..foundations.store.rows import DamagedRow
from ..foundations.store.sweeps import is_sweep
from .schema import (
    AUTO,
    DEFAULT_ALPHA,
    DEFAULT_PIN,
    DEFAULT_THRESHOLD,
    DEFAULT_TRIALS,
    DEFAULT_WARMUP,
    Alpha,
    Analysis,
    Blocks,
    Correction,
    CpuShareLimit,
    MinSection,
    Pin,
    Profile,
    Resolution,
    Seconds,
    Seed,
    StealLimit,
    Threshold,
    Trials,
    Warmup,
)
from .entries import (check_versus, fail, name_from_file, normalize_spec, read_toml,  # noqa: F401
                      published_figures, spec_resolver)
from .stored import ClaimEntry, PublishedEntry
from . import tune as study_tune
from .tune import TuneEntry
from .declared import FigureEntry, TableEntry, declared


@dataclass
class BenchmarkCase:
    """One benchmark with the parameters a study gave it, under a label unique in the study."""

    name: StrictStr
    params: dict[str, Any] = field(default_factory=dict)
    label: StrictStr = ""
    # where virtbench's method deviates from the published study's, shown beside its figures
    method_note: StrictStr | None = None

    def __post_init__(self):
        if not self.label:
            self.label = default_label(self.name, self.params)


def default_label(name: str, params: dict[str, Any]) -> str:
    """NAME, then the parameters that differ from the benchmark's defaults: `pi[k=17]`,
    so two parametrisations of one benchmark are two rows."""
    bench = benchmarks.REGISTRY.get(name)
    shown = bench.non_default(params) if bench is not None else params
    extra = ",".join(f"{k}={_text(v)}" for k, v in sorted(shown.items()))
    return f"{name}[{extra}]" if extra else name


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass
class EnvironmentEntry:
    spec: StrictStr
    # What virtbench lacks to start this environment here (e.g. "xen"): the study still lists
    # it, so the design is complete and its published figures are shown, but a run skips it.
    requires: StrictStr | None = None
    note: StrictStr | None = None
    # A machine the user names in targets.toml (virtbench.study.targets): the environment runs as
    # that entry's spec (ssh:..., libvirt:...) and stands for this one (its published figures).
    target: StrictStr | None = None
    # the spec of another environment of the study this one is also compared with (a tuning
    # against the untuned guest): verdicts against both it and the baseline, from one run
    versus: StrictStr | None = None

    def parsed(self) -> EnvSpec:
        return EnvSpec.parse(self.spec)


@dataclass(frozen=True)
class Study:
    """A study, resolved (a study file, flags over it) and then frozen: the plan and every
    later layer read it, none writes to it (a new run's baseline and seed are chosen into a
    copy, prepare.Prepared.for_run). Read back from the store (from_dict) every value is
    checked by the same types and ranges as a study file's (schema.py)."""
    name: StrictStr
    environments: list[EnvironmentEntry] = field(default_factory=list)
    benchmarks: list[BenchmarkCase] = field(default_factory=list)
    trials: Trials = DEFAULT_TRIALS
    baseline: StrictStr | None = None
    threshold_pct: Threshold = DEFAULT_THRESHOLD
    seed: Seed | None = None
    quick: StrictBool = False
    source: StrictStr | None = None
    published: list[PublishedEntry] = field(default_factory=list)   # its source's figures
    warmup: Warmup = DEFAULT_WARMUP  # unmeasured trials per environment x benchmark first
    pin: Pin = DEFAULT_PIN           # "auto": pin kernels / vCPU threads to host CPUs; "off"
    alpha: Alpha = DEFAULT_ALPHA     # significance level of the verdicts
    profile: Profile | None = None   # "exits": one profiled trial per guest x benchmark
    analysis: Analysis = defaults.ANALYSIS       # the verdicts' analysis: "paired" or "unpaired"
    correction: Correction = defaults.CORRECTION  # over the family of rows: "holm" or "bh"
    claims: list[ClaimEntry] = field(default_factory=list)   # the published studies' claims
    # trials = "auto" (adaptive): `trials` is then min_trials, the blocks every case gets
    # first; then blocks for the undecided cases until decided, max_trials or the budget
    adaptive: StrictBool = False
    min_trials: Blocks = defaults.MIN_TRIALS
    max_trials: Blocks = defaults.MAX_TRIALS
    budget_s: Seconds | None = None  # wall-clock bound of an adaptive run, whole run
    # a finer question of an adaptive run's passes: run on (to max_trials) until a change of
    # resolution_pct % is ruled out too; None: stop when every verdict is decided
    resolution_pct: Resolution | None = None
    min_section_s: MinSection = defaults.MIN_SECTION_S   # shorter measured sections repeat
    duet: StrictBool = False         # each block's pair measured at once on disjoint CPUs
    # a trial over either limit is disturbed: kept, left out of the statistics (disturbance.py)
    steal_limit_pct: StealLimit = defaults.STEAL_LIMIT_PCT
    cpu_share_limit: CpuShareLimit = defaults.CPU_SHARE_LIMIT
    # a tune (study/tune.py): the environments are its base and its design's configurations,
    # the recommended configuration is confirmed against the base after them
    tune: TuneEntry | None = None
    # the study's own figures and tables ([[figure]], [[table]]: its paper's; declared.py)
    figures: list[FigureEntry] = field(default_factory=list)
    tables: list[TableEntry] = field(default_factory=list)

    @property
    def trials_text(self) -> str:
        """`12`, or `auto (6..60, budget 15m)`."""
        if not self.adaptive:
            return str(self.trials)
        budget = f", budget {self.budget_s / 60:g}m" if self.budget_s else ""
        resolution = f", resolution {self.resolution_pct:g} %" if self.resolution_pct else ""
        return f"auto ({self.min_trials}..{self.max_trials}{budget}{resolution})"

    def method_notes(self) -> dict[str, str]:
        """{benchmark label: note} of the benchmarks that carry a method note."""
        return {c.label: c.method_note for c in self.benchmarks if c.method_note}

    def to_dict(self) -> dict:
        """What the runner stores as the run's metadata: the study, and with it `alpha` and
        `method_notes` ({benchmark label: note}) for the reports."""
        d = asdict(self)
        d["method_notes"] = self.method_notes()
        return d

    @classmethod
    def from_dict(cls, d: Any, run_id: str | None = None) -> "Study":
        """A stored study (to_dict()'s, or an older run's) as a Study, every value checked as
        a study file's is; a key an older run lacks falls back to core/defaults.py
        (stored.fallbacks). DamagedRow (one line naming run `run_id`) when a value is not
        valid; keys this version does not know are left out (known_keys says which)."""
        if not isinstance(d, dict):
            raise DamagedRow(run_id, "its stored study", "it is not a table")
        d = {**stored.fallbacks(), **d}
        d.pop("method_notes", None)      # derived from the benchmarks
        if d.get("trials") == AUTO:      # a study dict as written, not as the runner stores it
            d["adaptive"], d["trials"] = True, d["min_trials"]
        try:
            study = _study_adapter().validate_python(d)
            study_schema.check_bounds(study.min_trials, study.max_trials)
        except ValidationError as exc:
            raise DamagedRow(run_id, "its stored study",
                             stored.problem(exc.errors()[0])) from None
        except VirtbenchError as exc:
            raise DamagedRow(run_id, "its stored study", str(exc)) from None
        return study


@cache
def _study_adapter() -> TypeAdapter:
    return TypeAdapter(Study)


def unknown_keys(d: dict) -> list[str]:
    """The keys of a stored study this version's Study does not hold (a run stored by
    another virtbench): reading ignores them, resuming refuses them."""
    known = set(Study.__dataclass_fields__) | {"method_notes"}
    return sorted(k for k in d if k not in known)


def study_to_resume(run: dict) -> Study:
    """The study of a stored run to resume, checked like a study file (Study.from_dict:
    the same types and ranges); keys this virtbench does not know are refused, not dropped
    (a setting the run was planned with would be lost)."""
    if is_sweep(run):
        raise VirtbenchError(f"run {run['id']} is a density sweep, which is not resumed: run "
                             "`virtbench density` again (`virtbench report` shows the steps "
                             "it kept)")
    study = Study.from_dict(run["study"], run["id"])
    unknown = unknown_keys(run["study"])
    if unknown:
        raise VirtbenchError(f"run {run['id']}: its stored study has key {unknown[0]!r}, "
                             f"which virtbench {__version__} does not know (the run was "
                             f"stored by virtbench {run['virtbench_version']}); resume it "
                             "with that version")
    return study


def default_baseline(baseline: str | None, labels) -> str | None:
    """A stored run's baseline (resolve_baseline's rule): the one it stored, or `native`
    when it has it and stored none (runs stored before the planned baseline was stored)."""
    return resolve_baseline(None, [Candidate(label) for label in labels], stored=baseline)


def load(path: str | Path) -> Study:
    """Read a study file; every problem is one line naming the file, the table, the key and
    the fix (the schema is in study_schema.py)."""
    path = Path(path)
    data = read_toml(path, "give the path of a .toml study (the published studies are in "
                           "studies/)")
    try:
        doc = study_schema.parse(data)
        study_schema.check_params(doc)
        for i, entry in enumerate(doc.environment, 1):
            try:
                EnvSpec.parse(entry.spec)      # the syntax, even for one that cannot start here
            except VirtbenchError as exc:
                raise VirtbenchError(f"environment[{i}]: spec: {exc}") from None
    except VirtbenchError as exc:
        raise fail(path, str(exc)) from None
    envs = [EnvironmentEntry(e.spec, e.requires, e.note, e.target, e.versus)
            for e in doc.environment]
    cases = [BenchmarkCase(b.name, dict(b.params), b.label, b.method_note) for b in doc.benchmark]
    spec_of = spec_resolver(envs)
    published = published_figures(path, data.get("published", []), envs, cases, spec_of)
    check_versus(path, envs, spec_of)
    try:
        claims = study_claims.claims(doc.claim, spec_of,
                                     {normalize_spec(e.spec) for e in envs},
                                     {c.label for c in cases}, {c.label: c.name for c in cases})
        figures, tables = declared(doc.figure, doc.table, [c.label for c in cases])
    except VirtbenchError as exc:
        raise fail(path, str(exc)) from None
    adaptive, trials = trials_setting(doc.trials, doc.min_trials)
    study = Study(name=doc.name or name_from_file(path), environments=envs, benchmarks=cases,
                  trials=trials, adaptive=adaptive,
                  baseline=doc.baseline, threshold_pct=float(doc.threshold),
                  seed=doc.seed, source=str(path), published=published, warmup=doc.warmup,
                  pin=doc.pin, alpha=doc.alpha, profile=doc.profile, analysis=doc.analysis,
                  correction=doc.correction,
                  claims=claims, min_trials=doc.min_trials, max_trials=doc.max_trials,
                  min_section_s=float(doc.min_section), duet=doc.duet,
                  steal_limit_pct=float(doc.steal_limit),
                  cpu_share_limit=float(doc.cpu_share_limit),
                  budget_s=study_schema.duration_s(doc.budget) if doc.budget else None,
                  resolution_pct=doc.resolution, figures=figures, tables=tables)
    return _as_run(path, data, doc, study)


def _as_run(path: Path, data: dict, doc, study: Study) -> Study:
    """The loaded `study` as `virtbench run` runs it: a tune's when it has [tune]; one line
    when it holds only a [density] table (`virtbench density` sweeps that)."""
    if doc.density is not None and not study.environments and not study.benchmarks \
            and doc.tune is None:
        raise fail(path, "holds a [density] table and nothing else to run; sweep it with "
                         f"`virtbench density {path}`")
    if doc.tune is None:
        return study
    if study.environments:
        raise fail(path, "[tune]: a tune's environments are its base and its configurations; "
                         "drop the [[environment]] tables")
    if "trials" not in data:          # a tune's own default: its effects pool the blocks
        study = replace(study, trials=defaults.TUNE_TRIALS)
    try:
        return tuned(study, study_tune.from_table(doc.tune))
    except VirtbenchError as exc:
        raise fail(path, str(exc)) from None


def tuned(study: Study, entry: TuneEntry) -> Study:
    """`study` as the tune `entry` runs it (a new Study): its environments the base and the
    design's configurations, the base its baseline, the verdicts' threshold the smallest
    effect that matters, `tune` set. Checked first (study/tune.py check())."""
    study_tune.check(entry)
    names = [c.name for c in study.benchmarks]
    for metric in entry.metrics:
        if not any(metric in entry.metrics_of(n) for n in names):
            raise VirtbenchError(f"tune: --metric {metric}: no benchmark of this tune reports "
                                 f"it; see `virtbench benchmarks` for each one's metrics")
    return replace(study, environments=[EnvironmentEntry(s) for s in entry.environment_specs()],
                   baseline=study_tune.BASE_NAME, threshold_pct=float(entry.min_effect_pct),
                   tune=entry)


def check_resolution(study: Study) -> None:
    """`resolution` (--resolution) asks adaptive trials a finer question of their passes:
    a percentage above 0 and below the threshold, with trials = "auto"."""
    r = study.resolution_pct
    if not study.adaptive:
        raise VirtbenchError(f"resolution {r:g} % refines adaptive trials' passes; give "
                             "trials = \"auto\" (--trials auto) with it, or drop it")
    if not 0 < r < study.threshold_pct:
        raise VirtbenchError(f"resolution {r:g} % must lie above 0 and below the verdict "
                             f"threshold ({study.threshold_pct:g} %), e.g. 5")


def trials_setting(trials: int | str, min_trials: int) -> tuple[bool, int]:
    """(adaptive, trials) of trials = N (fixed blocks) or "auto" (adaptive: min_trials
    blocks first)."""
    if trials == AUTO:
        return True, min_trials
    return False, int(trials)


def skipped_environments(study: Study, targets: dict[str, str] | None = None,
                         targets_file: str = "targets.toml") -> list[tuple[str, str]]:
    """(spec, why) for every environment the study lists but virtbench cannot start here.

    Pure: decided from the study and the user's targets (`targets`: name -> spec), so the
    runner can print one line per entry and leave it out of the plan before anything is
    probed or started. An entry with a `target` the user has named runs as that target.
    """
    from .targets import missing_target_message
    targets = targets or {}
    out = []
    for e in study.environments:
        if e.target:
            if e.target not in targets:
                why = missing_target_message(e.target, targets_file)
                out.append((e.spec, f"{why}; {e.note}" if e.note else why))
        elif e.requires:
            why = f"needs {e.requires}, which virtbench cannot provide on this host yet"
            out.append((e.spec, f"{why}; {e.note}" if e.note else why))
    return out


def validate(study: Study) -> None:
    """Everything that can be checked without starting anything."""
    if not study.benchmarks:
        raise VirtbenchError("nothing to run: give a study file or --bench NAME "
                             "(see `virtbench benchmarks`)")
    if study.trials < 1:
        raise VirtbenchError(f"trials must be at least 1, not {study.trials}")
    if study.budget_s is not None and not study.adaptive:
        raise VirtbenchError("a budget bounds adaptive trials; give trials = \"auto\" "
                             "(--trials auto) with it, or drop the budget")
    if study.resolution_pct is not None:
        check_resolution(study)
    if study.tune is not None and study.duet:
        raise VirtbenchError("a tune runs all its configurations in each block; drop --duet "
                             "(duet mode measures two environments at once)")
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


def plan(env_labels: list[str], case_labels: list[str], trials: int, seed: int,
         skip: set[tuple[str, str]] = frozenset()) -> list[PlannedTrial]:
    """Randomised block order: each block is every (environment, benchmark) once, shuffled
    with the run's seed, so slow drift of the host never lands on one environment. The
    (environment, benchmark) pairs in `skip` are left out after the shuffle, so the others
    keep the order the same seed gives them."""
    rng = random.Random(seed)
    slots: list[PlannedTrial] = []
    for t in range(trials):
        block = [(e, c) for e in env_labels for c in case_labels]
        rng.shuffle(block)
        for env, case in block:
            if (env, case) in skip:
                continue
            slots.append(PlannedTrial(len(slots), t, env, case))
    return slots
