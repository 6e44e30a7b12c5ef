"""Command-line flags on top of a study: `--bench NAME[:key=value,...]` as benchmark cases,
`--env`, `--trials`, `--baseline`... applied over a study file (a flag overrides the file) or
making a study from flags alone, for `run`, `fleet run` and the density sweep.
"""
from __future__ import annotations

from ..measure import benchmarks
from . import schema as study_schema
from ..core.errors import VirtbenchError
from .design import (BenchmarkCase, EnvironmentEntry, Study, normalize_spec, set_trials,
                     spec_resolver)

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


def with_flags(study: Study | None, envs: list[str] | None = None,
               benches: list[str] | None = None, trials: int | str | None = None,
               baseline: str | None = None, seed: int | None = None,
               quick: bool = False, profile: str | None = None,
               analysis: str | None = None, correction: str | None = None,
               min_trials: int | None = None, max_trials: int | None = None,
               budget: str | None = None, min_section: float | None = None,
               duet: bool = False, resolution: float | None = None) -> Study:
    """Apply command-line flags on top of a study (or make one from flags alone).

    `--bench NAME` (no parameters) picks the study's benchmarks of that name or label
    (with their parameters and method notes); with parameters it is a benchmark of its own.
    """
    if study is None:
        study = Study(name="adhoc", environments=[], benchmarks=[])
    if envs:
        study.environments = [EnvironmentEntry(s) for s in envs]
    if benches:
        chosen: list[BenchmarkCase] = []
        for text in benches:
            name, items = parse_bench_spec(text)
            known = [c for c in study.benchmarks if c.label == name] or \
                    [c for c in study.benchmarks if c.name == name]
            chosen += known if known and not items else [bench_case(text, quick)]
        study.benchmarks = chosen
    if min_trials is not None:
        study.min_trials = min_trials
    if max_trials is not None:
        study.max_trials = max_trials
    study_schema.check_bounds(study.min_trials, study.max_trials)
    if budget is not None:
        study.budget_s = study_schema.duration_s(budget, "--budget")
    if resolution is not None:
        study.resolution_pct = float(resolution)
    if min_section is not None:
        if not 0 <= min_section <= 3600:
            raise VirtbenchError(f"--min-section {min_section:g}: give 0 (off) to 3600 seconds")
        study.min_section_s = float(min_section)
    study.duet = study.duet or duet
    if trials is not None:
        set_trials(study, trials)
    elif study.adaptive:
        study.trials = study.min_trials       # --min-trials given for a study's "auto"
    if baseline is not None:
        _pin_published_reference(study)
        study.baseline = baseline
    if seed is not None:
        study.seed = seed
    study.quick = study.quick or quick
    if profile is not None:
        study.profile = profile
    if analysis is not None:
        study.analysis = analysis
    if correction is not None:
        study.correction = correction
    if quick and trials is None and not study.adaptive:
        # a smoke run: enough trials for a CI and a p-value, not the full design's count
        study.trials = min(study.trials, QUICK_TRIALS)
    if not study.environments:
        study.environments = [EnvironmentEntry("native")]
    return study


FLAGS = ("envs", "benches", "trials", "baseline", "seed", "quick", "profile", "analysis",
         "correction", "min_trials", "max_trials", "budget", "min_section", "duet",
         "resolution")
_ARGS = {"envs": "env", "benches": "bench"}


def flag_values(args) -> dict:
    """with_flags()'s keywords from the parsed study flags (cli.add_study_flags) of `run`
    and `fleet run`."""
    return {key: getattr(args, _ARGS.get(key, key), None) for key in FLAGS}


def _pin_published_reference(study: Study) -> None:
    """A published figure without `versus` is against the study file's baseline; before
    --baseline replaces that, name it, so the measured ratio beside the figure stays against
    the same reference (a tuned guest's verdicts against the untuned guest must not turn the
    paper's guest-vs-native figure into guest-vs-itself)."""
    specs = {normalize_spec(e.spec) for e in study.environments}
    own = study.baseline or ("native" if "native" in specs else None)
    try:
        own = spec_resolver(study.environments)(own) if own else None
    except VirtbenchError:
        return              # a baseline named by a label: left to the run's baseline, as before
    if own not in specs:
        return
    for p in study.published:
        if p.get("versus") is None:
            p["versus"] = own
