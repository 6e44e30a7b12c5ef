"""The study flags (study/flagset.py) on top of a study: `--bench NAME[:key=value,...]` as
benchmark cases, `--env`, `--trials`, `--baseline`... applied over a study file (a flag
overrides the file) or making a study from flags alone, for `run`, `fleet run` and the
density sweep.
"""
from __future__ import annotations

from dataclasses import replace

from ..measure import benchmarks
from . import schema as study_schema
from ..core.errors import VirtbenchError
from ..measure.environments import EnvSpec
from ..measure.environments.spec import NAME_OPTION
from .baseline import Candidate, resolve_baseline
from .design import BenchmarkCase, EnvironmentEntry, Study, trials_setting
from .flagset import StudyFlags

QUICK_TRIALS = 5         # --quick without --trials caps a study's trials at this: a smoke run.
                         # Paired pass/fail (band claims) often decide with 5 blocks; a
                         # difference inside the band cannot (2 / 2^5 > 0.05): the advice for
                         # a real run is stats/advice.py's


def parse_bench_spec(text: str) -> tuple[str, dict[str, str]]:
    """`NAME[:key=value,...]` -> (NAME, {key: value text}). A piece without `=` continues
    the previous value, so a list stays one value: `scp:ciphers=aes128-ctr,3des-cbc`."""
    name, _, rest = text.strip().partition(":")
    name = name.strip()
    if not name:
        raise VirtbenchError(f"--bench {text!r}: no benchmark name; write NAME[:key=value,...], "
                             "e.g. --bench pi:k=17")
    items: dict[str, str] = {}
    last = None
    for piece in (p.strip() for p in rest.split(",")):
        key, eq, value = piece.partition("=")
        if eq and key.strip() and value.strip():
            key = key.strip()
            if key in items:
                raise VirtbenchError(f"--bench {text!r}: parameter {key} given twice")
            items[key], last = value.strip(), key
        elif not eq and piece and last is not None:
            items[last] += "," + piece
        elif piece or rest:
            raise VirtbenchError(f"--bench {text!r}: {piece!r} is not key=value; write e.g. "
                                 "--bench tcp:direction=receive,streams=10")
    return name, items


def bench_case(text: str, quick: bool = False) -> BenchmarkCase:
    """A `--bench NAME[:key=value,...]` flag as a benchmark case, its values parsed to the
    declared types and validated like a study file's params; its label shows the
    parameters that differ from the defaults (`pi[k=17]`)."""
    name, items = parse_bench_spec(text)
    try:
        params = study_schema.cli_params(name, items)
    except VirtbenchError as exc:
        raise VirtbenchError(f"--bench {text}: {exc}") from None
    clash = sorted(set(params) & set(benchmarks.get(name).quick)) if quick else []
    if clash:
        key = clash[0]
        raise VirtbenchError(
            f"--bench {text}: --quick sets {key}={benchmarks.get(name).quick[key]!r}, which "
            f"would override your {key}={params[key]!r}; drop --quick or the {key} parameter")
    return BenchmarkCase(name, params)


def with_flags(study: Study | None, flags: StudyFlags | None = None) -> Study:
    """The study flags (study/flagset.py) applied on top of a study (or a study made from
    flags alone): a new Study, the one given left as it was.

    `--bench NAME` (no parameters) picks the study's benchmarks of that name or label
    (with their parameters and method notes); with parameters it is a benchmark of its own.
    """
    study = study or Study(name="adhoc", environments=[], benchmarks=[])
    flags = flags or StudyFlags()
    given = {"profile": flags.profile, "analysis": flags.analysis,
             "correction": flags.correction, "seed": flags.seed, "budget_s": flags.budget_s(),
             "resolution_pct": float(flags.resolution) if flags.resolution is not None
             else None,
             "min_section_s": float(flags.min_section) if flags.min_section is not None
             else None,
             "min_trials": flags.min_trials, "max_trials": flags.max_trials}
    changes = {key: value for key, value in given.items() if value is not None}
    if flags.env:
        changes["environments"] = [EnvironmentEntry(s) for s in flags.env]
    if flags.bench:
        changes["benchmarks"] = _benches(study, flags.bench, flags.quick)
    lowest = changes.get("min_trials", study.min_trials)
    study_schema.check_bounds(lowest, changes.get("max_trials", study.max_trials))
    adaptive, count = (trials_setting(flags.trials, lowest) if flags.trials is not None
                       else (study.adaptive, lowest if study.adaptive else study.trials))
    if flags.quick and flags.trials is None and not adaptive:
        # a smoke run: enough trials for a CI and a p-value, not the full design's count
        count = min(count, QUICK_TRIALS)
    if flags.baseline is not None:
        changes["published"] = _pinned_published(study)
        changes["baseline"] = flags.baseline
    changes.update(adaptive=adaptive, trials=count, duet=study.duet or flags.duet,
                   quick=study.quick or flags.quick)
    if not changes.get("environments", study.environments):
        changes["environments"] = [EnvironmentEntry("native")]
    return replace(study, **changes)


def _benches(study: Study, benches: list[str], quick: bool) -> list[BenchmarkCase]:
    """The benchmark cases `--bench` flags name: the study's own of that label or name
    (a flag without parameters), else a case of the flag's own."""
    chosen: list[BenchmarkCase] = []
    for text in benches:
        name, items = parse_bench_spec(text)
        known = [c for c in study.benchmarks if c.label == name] or \
                [c for c in study.benchmarks if c.name == name]
        chosen += known if known and not items else [bench_case(text, quick)]
    return chosen


def _pinned_published(study: Study) -> list[dict]:
    """A published figure without `versus` is against the study file's baseline; before
    --baseline replaces that, name it, so the measured ratio beside the figure stays against
    the same reference (a tuned guest's verdicts against the untuned guest must not turn the
    paper's guest-vs-native figure into guest-vs-itself). The study's figures, pinned."""
    candidates = []
    for e in study.environments:
        try:
            parsed = EnvSpec.parse(e.spec)
        except VirtbenchError:
            continue
        name = parsed.options.get(NAME_OPTION)
        candidates.append(Candidate(str(parsed), e.spec, (name,) if name else ()))
    try:
        own = resolve_baseline(study.baseline, candidates)
    except VirtbenchError:
        own = None          # a baseline named by a label: left to the run's baseline, as before
    if own is None:
        return list(study.published)
    return [p if p.get("versus") is not None else {**p, "versus": own}
            for p in study.published]
