"""The study file's schema: every table, key, type and range, checked by pydantic.

A study file is read into `StudyFile` (strict types, no unknown keys anywhere); the first
problem becomes one line naming the file, the table (`benchmark[2]`, `environment[1]`,
counted from 1 as they appear in the file) and the key, with the fix. Each benchmark's
`params` table is then checked against the parameters that benchmark declares
(`Benchmark.defaults`, see benchmarks/base.py), so a misspelled parameter stops the run
instead of being ignored under a label that lies.
"""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, ValidationError
from pydantic_core import PydanticCustomError

from ..measure import benchmarks
from ..core import defaults, ranges
from ..core.errors import VirtbenchError
from ..core.text import text_problem

DEFAULT_TRIALS = defaults.TRIALS
DEFAULT_THRESHOLD = defaults.THRESHOLD_PCT
DEFAULT_WARMUP = defaults.WARMUP
DEFAULT_PIN = defaults.PIN
DEFAULT_ALPHA = defaults.ALPHA
AUTO = "auto"            # trials = "auto": adaptive trials (docs/decisions.md)
DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?")


def duration_s(text: str, what: str = "budget") -> float:
    """`15m`, `90s`, `1h30m`, `1.5h`, `600` (seconds) as seconds; one line otherwise."""
    m = DURATION.fullmatch(text.strip())
    if not text.strip() or m is None or not any(m.groups()):
        raise VirtbenchError(f"{what} {text!r} is not a duration; write e.g. 15m, 90s or 1h30m")
    h, mi, se = (float(g) if g else 0.0 for g in m.groups())
    seconds = 3600 * h + 60 * mi + se
    if seconds <= 0:
        raise VirtbenchError(f"{what} {text!r} is no time at all; give a positive duration")
    return seconds


TEXT_ERROR = "control_text"     # a string holding what no file line or argument may


def _checked(prose: bool):
    def check(value: str) -> str:
        problem = text_problem(value, prose)
        if problem:
            raise PydanticCustomError(TEXT_ERROR, problem)
        return value
    return check


# A string of the study that may reach a configuration file or a command line (a name, a
# label, a spec, a metric): one line, no control character (core/text.py). Prose (a note, a
# description, a claim's text) may span lines, but holds no other control character.
Line = Annotated[str, AfterValidator(_checked(prose=False))]
Prose = Annotated[str, AfterValidator(_checked(prose=True))]


# The valid values of a study's settings: a study file's (StudyFile below) and a stored run's
# study (design.Study, checked when a run is read back) are checked by the same ones
Trials = Annotated[int, Strict(), Field(ge=1, le=100_000)]
Blocks = Annotated[int, Strict(), Field(ge=2, le=100_000)]          # min_trials, max_trials
Resolution = Annotated[float, Strict(), Field(gt=0, lt=100)]
MinSection = Annotated[float, Strict(), Field(ge=0, le=3600)]
StealLimit = Annotated[float, Strict(), Field(gt=0, le=100)]
CpuShareLimit = Annotated[float, Strict(), Field(ge=0, le=1)]
Threshold = Annotated[float, Strict(), Field(**defaults.THRESHOLD_RANGE.bounds())]
Alpha = Annotated[float, Strict(), Field(**defaults.ALPHA_RANGE.bounds())]
Seed = Annotated[int, Strict(), Field(ge=0)]
Warmup = Annotated[int, Strict(), Field(ge=0, le=1000)]
Seconds = Annotated[float, Strict(), Field(gt=0)]                    # a budget, as seconds
Pin = Literal["auto", "off"]
Profile = Literal["exits"]
Analysis = Literal["paired", "unpaired"]
Correction = Literal["holm", "bh"]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EnvironmentTable(_Table):
    spec: Line = Field(min_length=1)
    requires: Line | None = None
    note: Prose | None = None
    target: Line | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    # the spec of the environment this one is also compared with (its own reference: a
    # tuning against the untuned guest), besides the study's baseline
    versus: Line | None = Field(None, min_length=1)


class BenchmarkTable(_Table):
    name: Line = Field(min_length=1)
    label: Line = ""
    params: dict[str, Any] = Field(default_factory=dict)
    method_note: Prose | None = Field(None, min_length=1)


class PublishedTable(_Table):
    environment: Line
    benchmark: Line
    metric: Line
    source: Prose
    ratio: float | None = Field(None, gt=0)
    value: float | None = Field(None, gt=0)
    versus: Line | None = None
    versus_value: float | None = Field(None, gt=0)
    verdict: Literal["pass", "fail"] | None = None
    note: Prose | None = None
    unmeasured: Prose | None = None


class ClaimTable(_Table):
    """A claim of the published paper, checked on the run (study_claims.py)."""
    text: Prose = Field(min_length=1)
    source: Prose = Field(min_length=1)
    benchmark: Line = Field(min_length=1)
    metric: Line = Field(min_length=1)
    environments: dict[Line, Line] = Field(min_length=2)
    holds_if: Line = Field(min_length=1)
    within: float | None = Field(None, gt=0, lt=100)
    note: Prose | None = None


class TuneTable(_Table):
    """A tune (study/tune.py): the base environment, knobs with two levels, the metrics."""
    base: Line = Field(min_length=1)
    knobs: dict[Line, list[Line]] = Field(min_length=1)
    metrics: list[Line] = Field(default_factory=list)
    min_effect: float = Field(5.0, gt=0, lt=100)
    refine: int | None = Field(None, ge=1)


class DensityTable(_Table):
    """A density sweep (`virtbench density STUDY.toml`): its flags' values; a flag given
    overrides its key (execution/run/density.py DensityRequest checks them all again)."""
    env: Line = Field(min_length=1)
    bench: list[Line] | Line = Field(min_length=1)
    max: int = Field(defaults.DENSITY_MAX_GUESTS, ge=1, le=64)
    trials: int = Field(defaults.DENSITY_TRIALS, ge=1, le=100)
    quick: bool = False
    schedule: Literal["linear", "doubling"] = "linear"
    floor: float = Field(defaults.DENSITY_FLOOR, gt=0, le=1)
    min_gain: float = Field(defaults.DENSITY_MIN_GAIN, ge=0, lt=1)
    max_time: float = Field(defaults.DENSITY_MAX_S, gt=0)
    metric: dict[Line, Line] = Field(default_factory=dict)
    reference: bool = True


# [[figure]] and [[table]]: the figures and tables a study declares (its paper's own), drawn by
# `virtbench figures` and rendered by `virtbench report` (study/declared.py checks the labels)
FigureKind = Literal["bars", "values", "spread"]
TableKind = Literal["verdicts", "values", "exits"]
ViewName = Annotated[str, Field(min_length=1, max_length=60, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


class FigureTable(_Table):
    """A [[figure]] of the study (study/declared.py)."""
    name: ViewName
    kind: FigureKind
    benchmarks: list[Line] = Field(min_length=1)
    metrics: list[Line] = Field(default_factory=list)
    title: Line | None = None
    published: bool = True


class TableTable(_Table):
    """A [[table]] of the study (study/declared.py); `hot` = the paper's exit counts by
    guest function, for kind = "exits"."""
    name: ViewName
    kind: TableKind
    benchmarks: list[Line] = Field(min_length=1)
    metrics: list[Line] = Field(default_factory=list)
    title: Line | None = None
    source: Prose | None = None
    hot: dict[Line, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)


class StudyFile(_Table):
    name: Line | None = Field(None, min_length=1)
    description: Prose | None = None
    trials: Trials | Literal["auto"] = DEFAULT_TRIALS
    min_trials: Blocks = defaults.MIN_TRIALS
    max_trials: Blocks = defaults.MAX_TRIALS
    budget: Line | None = Field(None, min_length=1)
    resolution: Resolution | None = None
    min_section: MinSection = defaults.MIN_SECTION_S
    duet: bool = False
    steal_limit: StealLimit = defaults.STEAL_LIMIT_PCT
    cpu_share_limit: CpuShareLimit = defaults.CPU_SHARE_LIMIT
    baseline: Line | None = None
    threshold: Threshold = DEFAULT_THRESHOLD
    seed: Seed | None = None
    warmup: Warmup = DEFAULT_WARMUP
    pin: Pin = DEFAULT_PIN
    alpha: Alpha = DEFAULT_ALPHA
    profile: Profile | None = None
    analysis: Analysis = defaults.ANALYSIS
    correction: Correction = defaults.CORRECTION
    environment: list[EnvironmentTable] = Field(default_factory=list)
    benchmark: list[BenchmarkTable] = Field(default_factory=list)
    published: list[PublishedTable] = Field(default_factory=list)
    claim: list[ClaimTable] = Field(default_factory=list)
    tune: TuneTable | None = None
    density: DensityTable | None = None
    figure: list[FigureTable] = Field(default_factory=list)
    table: list[TableTable] = Field(default_factory=list)


# What to write instead, per key, in the fix part of a message.
EXAMPLES = {
    "name": 'name = "my-study"', "description": 'description = "..."',
    "trials": 'trials = 12 (or trials = "auto": blocks until decided)',
    "min_trials": "min_trials = 6", "max_trials": "max_trials = 60",
    "budget": 'budget = "15m" (s, m or h)', "resolution": "resolution = 5 (%, finer than threshold)", "min_section": "min_section = 0.5 (seconds)",
    "duet": "duet = true", "steal_limit": "steal_limit = 10 (% of the host's CPU time)",
    "cpu_share_limit": "cpu_share_limit = 0.7 (x the usual share; 0: off)",
    "baseline": 'baseline = "native"', "threshold": "threshold = 10", "seed": "seed = 42",
    "warmup": "warmup = 1", "pin": 'pin = "auto" (or "off")', "alpha": "alpha = 0.05",
    "profile": 'profile = "exits" (one profiled trial per guest x benchmark)',
    "environment": '[[environment]] tables with spec = "KIND[:key=value,...]"',
    "benchmark": '[[benchmark]] tables with name = "BENCHMARK"',
    "published": "[[published]] tables", "spec": 'spec = "KIND[:key=value,...]"',
    "requires": 'requires = "xen"', "note": 'note = "..."',
    "target": 'target = "xenserver" (a name in ~/.config/virtbench/targets.toml)',
    "label": 'label = "my-label"', "params": "params = { key = value, ... }",
    "method_note": 'method_note = "how virtbench deviates from the source"',
    "verdict": 'verdict = "pass" (or "fail")', "ratio": "ratio = 0.95",
    "value": "value = 123.4", "versus_value": "versus_value = 123.4",
    "analysis": 'analysis = "paired" (or "unpaired")',
    "correction": 'correction = "holm" (or "bh": Benjamini-Hochberg)',
    "claim": "[[claim]] tables",
    "text": 'text = "what the paper claims"', "source": 'source = "Table 3"',
    "holds_if": 'holds_if = "ahci / ide >= 1.5" (or "a > b > c", "a == b")',
    "environments": 'environments = { ahci = "qemu:disk=ahci", ide = "qemu:disk=ide" }',
    "within": "within = 5 (%, for holds_if \"a == b\")",
    "versus": 'versus = "qemu:disk=ide" (the spec of another [[environment]])',
    "tune": '[tune] with base = "container" and knobs = { cpus = ["0.5", "2"] }',
    "base": 'base = "container" (the environment the knobs are set on)',
    "knobs": 'knobs = { cpus = ["0.5", "2"], mem = ["512M", "4G"] } (two levels each)',
    "metrics": 'metrics = ["seconds"] (default: each benchmark\'s headline metric)',
    "min_effect": "min_effect = 5 (%, the smallest effect that matters)",
    "refine": "refine = 2 (tries in a row that end a knob's search)",
    "density": '[density] with env = "qemu:mem=512M" and bench = ["stream"]',
    "env": 'env = "qemu:vcpus=1,mem=512M" (the environment to add copies of)',
    "bench": 'bench = ["stream", "cyclepi"] (what every guest runs at once)',
    "max": "max = 8 (the most guests, 1 to 64)",
    "schedule": 'schedule = "doubling" (or "linear")',
    "floor": "floor = 0.5 (each guest's share of one guest's throughput)",
    "min_gain": "min_gain = 0.05 (the share a step must add to the aggregate)",
    "max_time": "max_time = 3600 (seconds)",
    "metric": 'metric = { stream = "triad_mb_s" }',
    "reference": "reference = false (no native processes beside)",
    "quick": "quick = true",
    "figure": '[[figure]] tables with name, kind and benchmarks',
    "table": '[[table]] tables with name, kind and benchmarks',
    "kind": 'kind = "bars" (figure: bars, values, spread; table: verdicts, values, exits)',
    "benchmarks": 'benchmarks = ["dd-write"] ([[benchmark]] labels)',
    "title": 'title = "Table 15"', "hot": 'hot = { ioread16 = 16545487 } (function = count)',
}
# Where a key means something else in one table, its example there.
TABLE_EXAMPLES = {
    ("claim", "benchmark"): 'benchmark = "cdm" (a [[benchmark]] label)',
    ("claim", "metric"): 'metric = "read_mb_s" (one of the benchmark\'s metrics)',
    ("published", "benchmark"): 'benchmark = "cdm" (a [[benchmark]] label)',
    ("published", "environment"): 'environment = "qemu:disk=ide" (an [[environment]] spec)',
    ("figure", "name"): 'name = "table15-bars" (letters, digits, . _ -)',
    ("table", "name"): 'name = "table15" (letters, digits, . _ -)',
    ("figure", "metrics"): 'metrics = ["write_mb_s"] (default: every metric)',
    ("table", "metrics"): 'metrics = ["write_mb_s"] (default: every metric)',
    ("figure", "published"): "published = true (the paper's figures beside the measured)",
}
TYPE_WORDS = {"int_type": "an integer", "float_type": "a number", "string_type": "a string",
              "bool_type": "true or false", "list_type": "an array of tables",
              "dict_type": "a table", "model_type": "a table", "literal_error": "one of"}


KEY_TYPE_WORDS = {"trials": 'an integer or "auto"'}
# Keys whose valid range is one of core/defaults.py's (the same as their flags'): a value out
# of it is said with the whole range
RANGES = {"alpha": defaults.ALPHA_RANGE, "threshold": defaults.THRESHOLD_RANGE}


SINGLE_TABLES = ("tune", "density")


def table_name(loc: tuple) -> tuple[str, str | None]:
    """(where, key) of a pydantic error location: ('benchmark', 1, 'params') ->
    ('benchmark[2]', 'params'); ('trials',) -> ('', 'trials')."""
    where, key = "", None
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if parts and isinstance(parts[0], int):
            where = f"{part}[{parts.pop(0) + 1}]"
        elif parts and part in SINGLE_TABLES:       # [tune], [density]: said by its name
            where = f"[{part}]"
        else:
            key = str(part)
            break
    return where, key


def _which(loc: tuple, data: dict) -> str:
    """` (tcp-1-send)`: the label, name or spec of the table at `loc`, to find it by eye."""
    if len(loc) >= 2 and isinstance(loc[1], int):
        try:
            table = data[loc[0]][loc[1]]
        except (KeyError, IndexError, TypeError):
            return ""
        if isinstance(table, dict):
            for key in ("label", "name", "spec", "text"):
                if isinstance(table.get(key), str) and table[key]:
                    text = table[key]
                    if text_problem(text):      # said by the message itself, never raw
                        return ""
                    return f" ({text[:40]}...)" if len(text) > 43 else f" ({text})"
    return ""


def text_fix(problem: str) -> str:
    """The fix of a string that holds a control character: a line break is a second line."""
    if problem in ("holds a newline", "holds a carriage return"):
        return "write it on one line"
    return "write it without control characters"


def describe(error: dict, model: type[BaseModel], data: dict) -> str:
    """One line for pydantic's first error: where, which key, what is wrong, the fix."""
    where, key = table_name(tuple(error["loc"]))
    if where:
        where += _which(tuple(error["loc"]), data)
    table_model = _model_at(model, tuple(error["loc"]))
    head = f"{where}: " if where else ""
    kind = error["type"]
    loc = tuple(error["loc"])
    example = TABLE_EXAMPLES.get((str(loc[0]), key)) if len(loc) > 2 else None
    example = example or EXAMPLES.get(key, f"{key} = ...")
    if kind == "extra_forbidden":
        valid = ", ".join(sorted(table_model.model_fields))
        return f"{head}unknown key {key!r}; valid keys: {valid}"
    if kind == "missing":
        return f"{head}needs {key}: add {example}"
    got = error.get("input")
    if kind == TEXT_ERROR:
        return f"{head}{key} {got!r} {error['msg']}; {text_fix(error['msg'])}, e.g. {example}"
    if kind in TYPE_WORDS and kind != "literal_error":
        words = KEY_TYPE_WORDS.get(key, TYPE_WORDS[kind])
        return f"{head}{key} must be {words}, not {got!r}; write {example}"
    if key in RANGES and len(loc) == 1 and isinstance(got, (int, float)) \
            and not isinstance(got, bool):
        why = ranges.problem(key, float(got), RANGES[key])
        if why:
            return why
    # ranges, choices, empty strings: pydantic's own words say which bound
    rule = error["msg"].replace("Input should be", "must be").replace("String should", "must")
    if rule.startswith("must"):
        rule = f"{key} {rule}"
    else:
        rule = f"{key}: {rule}"
    return f"{head}{rule}, not {got!r}; write e.g. {example}"


def _model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel]:
    """The table model that holds the last key of `loc` (for its list of valid keys)."""
    current = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part))
        inner = getattr(field.annotation, "__args__", (None,))[0] if field else None
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            current = inner
        else:
            break
    return current


def parse(data: dict) -> StudyFile:
    """A TOML document as a StudyFile; VirtbenchError (one line, no file name) if invalid."""
    try:
        doc = StudyFile.model_validate(data)
    except ValidationError as exc:
        raise VirtbenchError(describe(exc.errors()[0], StudyFile, data)) from None
    if doc.budget is not None:
        duration_s(doc.budget)
    check_bounds(doc.min_trials, doc.max_trials)
    return doc


def check_bounds(min_trials: int, max_trials: int) -> None:
    if max_trials < min_trials:
        raise VirtbenchError(f"max_trials {max_trials} is below min_trials {min_trials}; "
                             "raise max_trials or lower min_trials")


def check_params(doc: StudyFile) -> None:
    """Every [[benchmark]]'s name and params against what that benchmark declares."""
    for i, table in enumerate(doc.benchmark, 1):
        where = f"benchmark[{i}] ({table.label or table.name})"
        check_param_text(where + ": params:", table.params)
        try:
            benchmarks.get(table.name).params(table.params)
        except VirtbenchError as exc:
            raise VirtbenchError(f"{where}: params: {exc}") from None


def check_param_text(where: str, params: dict[str, Any]) -> None:
    """A benchmark's parameters reach its command line (iperf3's -b RATE, -w WINDOW):
    no key or text value may hold a newline or a control character."""
    for key, value in params.items():
        for text in (key, value):
            problem = text_problem(text) if isinstance(text, str) else None
            if problem:
                raise VirtbenchError(f"{where} {key!r}={value!r} {problem}; "
                                     f"{text_fix(problem)}")


def cli_params(name: str, items: dict[str, str]) -> dict[str, Any]:
    """`--bench NAME:key=value,...`'s values as the declared types of NAME's parameters,
    validated like a study file's params (ranges included)."""
    check_param_text(f"--bench {name}:", items)
    bench = benchmarks.get(name)
    params = {key: bench.parse_param(key, text) for key, text in items.items()}
    bench.params(params)
    return params
