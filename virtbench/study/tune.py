"""A tune: a base environment, knobs with two levels each, and the metrics to improve
(`virtbench tune`, a study file's `[tune]` table; docs/tune.md).

A knob is an option of the base environment's kind (`virtbench envs` lists them), set in
every configuration of the screening design (foundations/stats/screening/design.py) to one
of its two levels; each configuration is an environment of the run, named `c1`, `c2`, ...;
the base configuration (`base`, the spec as given) runs in every block as the reference,
and the recommended configuration (`recommended`: the base with the knobs that matter set
to their better levels) is confirmed against it after the screening, in the same run.

The base may set a knob too (its current setting, usually one of the knob's levels): the
configurations set their own level over it, and a knob that does not matter keeps it.

Everything here is checked before anything runs (one line, exit 2, nothing stored): a kind
that is not known, a knob its kind lacks, a knob with one
level or more than two, a level its option refuses, and configurations whose levels cannot
combine (the kind refuses the configuration's environment, e.g. iothread=on with disk=ide).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field, StrictStr

from ..core import defaults
from ..core.errors import VirtbenchError
from ..core.suggest import did_you_mean
from ..foundations.stats.screening import design as screening
from ..measure import environments
from ..measure.environments import EnvSpec
from ..measure.environments.spec import NAME_OPTION

DEFAULT_MIN_EFFECT_PCT = defaults.TUNE_MIN_EFFECT_PCT
BASE_NAME, RECOMMENDED_NAME, CONFIGURATION_PREFIX = "base", "recommended", "c"
NOT_KNOBS = (NAME_OPTION, "instances")


@dataclass(frozen=True)
class Knob:
    """One knob: an option of the base's kind and its levels in order. The screening sets
    its first (coded -1) and last (+1); a refinement (`refine`) searches those between."""
    name: StrictStr
    levels: tuple[StrictStr, ...]

    @property
    def text(self) -> str:
        return f"{self.name}={','.join(self.levels)}"

    @property
    def ends(self) -> tuple[str, str]:
        """The levels the screening sets: the first and the last."""
        return self.levels[0], self.levels[-1]

    def inward(self, better: str) -> list[str]:
        """The levels between the ends, from the `better` end inward (a refinement's
        order)."""
        between = list(self.levels[1:-1])
        return between[::-1] if better == self.levels[-1] else between


@dataclass(frozen=True)
class TuneEntry:
    """What a tune asks (stored with its run's study): the base environment's spec, its
    knobs in order, the metrics to improve (empty: each benchmark's headline metric) and
    the smallest effect that matters, in %."""
    base: StrictStr
    knobs: list[Knob] = field(default_factory=list)
    metrics: list[StrictStr] = field(default_factory=list)
    min_effect_pct: Annotated[float, Field(gt=0, lt=100)] = DEFAULT_MIN_EFFECT_PCT
    # a refinement: the levels between the ends of the knobs that matter are tried one by
    # one against the best so far; a knob's search stops after `refine` tries that did not
    # move the best (None: no refinement; knobs then take two levels)
    refine: Annotated[int, Field(ge=1)] | None = None

    @property
    def knob_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.knobs)

    def metrics_of(self, bench_name: str) -> list[str]:
        """The metrics a tune decides on a benchmark: those of `metrics` it reports, else its
        headline metric (its first timed one: the one its kernel stamps; else its first)."""
        from ..measure import benchmarks
        bench = benchmarks.get(bench_name)
        own = [m.name for m in bench.metrics]
        if self.metrics:
            return [m for m in self.metrics if m in own]
        return [bench.timed[0] if bench.timed else own[0]] if own else []

    def design(self) -> screening.TwoLevelDesign:
        return screening.two_level(self.knob_names)

    def levels_of(self, row: tuple[int, ...]) -> dict[str, str]:
        """Knob -> level of a design row (coded -1 / +1)."""
        return {k.name: k.ends[0 if code < 0 else 1] for k, code in zip(self.knobs, row)}

    def spec(self, levels: dict[str, str], name: str) -> str:
        """The environment spec of the base with `levels` set, named `name`."""
        base = EnvSpec.parse(self.base)
        options = {k: v for k, v in base.options.items() if k != NAME_OPTION}
        return str(EnvSpec(base.kind, {**options, **levels, NAME_OPTION: name}))

    def base_level(self, knob: str) -> str | None:
        """The base's setting of `knob`: the base spec's, else its kind's default (None:
        no default, e.g. a container without a CPU limit)."""
        base = EnvSpec.parse(self.base)
        if knob in base.options:
            return base.options[knob]
        default = environments.KINDS[base.kind].options[knob].default
        return None if default is None else str(default)

    def changes(self, levels: dict[str, str]) -> dict[str, str]:
        """The levels that differ from the base's settings: what a recommendation changes."""
        return {k: v for k, v in levels.items() if v != self.base_level(k)}

    def configurations(self) -> list[tuple[str, dict[str, str]]]:
        """(name, knob -> level) of every configuration of the design, in its order."""
        return [(f"{CONFIGURATION_PREFIX}{i}", self.levels_of(row))
                for i, row in enumerate(self.design().rows, 1)]

    def environment_specs(self) -> list[str]:
        """The run's environments: the base first (the reference), then the design's."""
        return [self.spec({}, BASE_NAME)] + [self.spec(levels, name)
                                              for name, levels in self.configurations()]


def looks(min_blocks: int, max_blocks: int) -> list[int]:
    """The blocks after which an adaptive screening (`trials = "auto"`) looks at its effects:
    min_blocks, then doubling, and max_blocks last (6, 12, 24, 48, 60). Each look decides at
    alpha / len(looks) (Bonferroni over the looks), so the family's error holds however the
    screening stops."""
    out = [min_blocks]
    while out[-1] < max_blocks:
        out.append(min(2 * out[-1], max_blocks))
    return out


def screening_alpha(study) -> float:
    """The alpha a tune's effects are decided at: the study's, divided by the looks of an
    adaptive screening."""
    if not study.adaptive:
        return study.alpha
    return study.alpha / len(looks(study.min_trials, study.max_trials))


def parse_knob(text: str) -> Knob:
    """`NAME=L1,L2` (a --knob flag) as a Knob; one line for a malformed one."""
    name, sep, rest = text.partition("=")
    levels = tuple(v.strip() for v in rest.split(",") if v.strip())
    if not sep or not name.strip() or not levels:
        raise VirtbenchError(f"--knob {text}: write NAME=LEVEL1,LEVEL2, e.g. "
                             "--knob cpus=0.5,2")
    return Knob(name.strip(), levels)


def check(entry: TuneEntry) -> None:
    """Every check of the module docstring, in that order; the first problem is one line."""
    base = EnvSpec.parse(entry.base)
    if base.kind not in environments.KINDS:
        environments.create(base)               # its one line names the valid kinds
    options = environments.KINDS[base.kind].options
    if not entry.knobs:
        raise VirtbenchError("tune: no knob; give at least one, e.g. --knob cpus=0.5,2")
    if len(entry.knobs) > screening.MAX_KNOBS:
        raise VirtbenchError(f"tune: {len(entry.knobs)} knobs; a screening takes at most "
                             f"{screening.MAX_KNOBS}")
    if entry.refine is not None and entry.refine < 1:
        raise VirtbenchError(f"tune: --refine {entry.refine}: give the tries in a row that "
                             "end a knob's search, 1 or more, e.g. --refine 2")
    if not 0 < entry.min_effect_pct < 100:
        raise VirtbenchError(f"tune: min effect {entry.min_effect_pct:g} % must lie above 0 "
                             "and below 100, e.g. --min-effect 5")
    seen = set()
    for knob in entry.knobs:
        _check_knob(knob, base, options, seen, entry.refine)
        seen.add(knob.name)
    for name, levels in entry.configurations():
        _check_combination(entry, name, levels)
        for knob in entry.knobs if entry.refine else ():
            for level in knob.levels[1:-1]:       # a refinement's tries change one knob
                _check_combination(entry, f"{name} with {knob.name}={level}",
                                   {**levels, knob.name: level})


def _check_combination(entry: TuneEntry, name: str, levels: dict[str, str]) -> None:
    """The configuration's environment, made (not started): one line when its kind refuses
    the levels together."""
    try:
        environments.create(entry.spec(levels, "check"))
    except VirtbenchError as exc:
        shown = ", ".join(f"{k}={v}" for k, v in levels.items())
        raise VirtbenchError(f"tune: configuration {name} ({shown}) cannot run: {exc}; "
                             "drop one of the knobs that cannot combine") from None


def _check_knob(knob: Knob, base: EnvSpec, options: dict, seen: set[str],
                refine: int | None) -> None:
    kind = base.kind
    if knob.name in seen:
        raise VirtbenchError(f"tune: knob {knob.name} given twice; give it once with its "
                             "two levels")
    if knob.name not in options or knob.name in NOT_KNOBS:
        knobs = sorted(n for n in options if n not in NOT_KNOBS)
        raise VirtbenchError(f"tune: {kind} has no knob {knob.name!r}"
                             f"{did_you_mean(knob.name, knobs)}; its knobs: {', '.join(knobs)}")
    if len(set(knob.levels)) != len(knob.levels):
        raise VirtbenchError(f"tune: knob {knob.text} names a level twice; give two "
                             "different levels")
    if len(knob.levels) < 2:
        raise VirtbenchError(f"tune: knob {knob.text} has one level; give two, e.g. "
                             f"--knob {knob.name}={knob.levels[0]},OTHER")
    if len(knob.levels) > 2 and refine is None:
        raise VirtbenchError(f"tune: knob {knob.text} has {len(knob.levels)} levels; a "
                             "screening takes two (the lowest and the highest setting worth "
                             f"trying, e.g. --knob {knob.name}={knob.levels[0]},"
                             f"{knob.levels[-1]}); give --refine N to try those between too")
    for level in knob.levels:
        try:
            options[knob.name].parse(kind, knob.name, level)
        except VirtbenchError as exc:
            raise VirtbenchError(f"tune: knob {knob.text}: {exc}") from None


def from_table(table) -> TuneEntry:
    """A study file's `[tune]` table (schema.TuneTable) as a TuneEntry (not yet checked)."""
    return TuneEntry(base=table.base, knobs=[Knob(name, tuple(levels))
                                             for name, levels in table.knobs.items()],
                     metrics=list(table.metrics), min_effect_pct=float(table.min_effect),
                     refine=table.refine)
