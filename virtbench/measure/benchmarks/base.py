"""What a benchmark is: a command to run in an environment and a pure parser of its output."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict, ValidationError, create_model

from ...core.errors import VirtbenchError
from ...core.outcome import Metric, TrialOutcome
from ...core.text import text_problem
from ...foundations.stats.aggregate import Span, Timing

if TYPE_CHECKING:  # pragma: no cover
    from ..environments.base import Environment


# How a parameter's declared type is named in messages, and how a command-line value
# (`--bench NAME:key=value`) becomes one.
TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
TRUE_WORDS, FALSE_WORDS = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


class ParseError(ValueError):
    """The tool's output did not hold what the parser needs (a failed trial, not bad input).

    `partial`: metric values the output did hold before the parser gave up (a kernel whose
    result failed its check still printed the figures it measured): kept with the failed
    trial as evidence, never used in the statistics."""

    def __init__(self, message: str, partial: dict[str, float] | None = None):
        super().__init__(message)
        self.partial = dict(partial or {})


class Benchmark:
    """A named measurement procedure. Subclasses fill the class attributes and `argv`/`parse`.

    `defaults` are the published studies' parameters; `quick` overrides them for a smoke run.
    """

    name: ClassVar[str]
    family: ClassVar[str]
    description: ClassVar[str] = ""
    metrics: ClassVar[tuple[Metric, ...]] = ()
    tools: ClassVar[tuple[str, ...]] = ()      # what must exist in the environment
    # the Debian packages that bring `tools` into an environment virtbench builds (a guest
    # image or a container tree: a variant of it per package set); () for our own kernels
    packages: ClassVar[tuple[str, ...]] = ()
    # what the environment must offer (names of virtbench.core.capabilities.Capabilities fields);
    # a case whose environment cannot is skipped with the reason before anything runs
    needs: ClassVar[tuple[str, ...]] = ()
    defaults: ClassVar[dict[str, Any]] = {}
    quick: ClassVar[dict[str, Any]] = {}
    # metrics whose blocks the tool stamps on CLOCK_MONOTONIC (`timing()`); such a tool also
    # takes `--start-at T`. A group of instances aggregates them over one common interval
    # on the host's clock; the others as their metric says (docs/instances-and-limits.md)
    timed: ClassVar[tuple[str, ...]] = ()
    # a tool of several blocks (stream's passes) that also takes `--slot S`: block b starts at
    # T + b S, so that instances without a shared barrier run each block side by side
    slotted: ClassVar[bool] = False
    # keeps its CPUs busy from start to end (our kernels): a trial that got much less CPU
    # time than wall time was disturbed (virtbench/execution/run/disturbance.py)
    cpu_bound: ClassVar[bool] = False

    # -- parameters ----------------------------------------------------------------------
    # `defaults` is the single declaration of a benchmark's parameters: their names, their
    # types (the default's type) and their defaults. The pydantic model below is made from
    # it; `check()` adds the ranges and choices.
    @classmethod
    def param_model(cls):
        """The pydantic model of this benchmark's parameters (strict, no unknown keys)."""
        model = cls.__dict__.get("_param_model")
        if model is None:
            fields = {key: (type(value), value) for key, value in cls.defaults.items()}
            model = create_model(f"{cls.__name__}Params",
                                 __config__=ConfigDict(extra="forbid", strict=True), **fields)
            cls._param_model = model
        return model

    def _unknown(self, key: str) -> VirtbenchError:
        return VirtbenchError(f"benchmark {self.name}: unknown parameter {key}; "
                              f"valid parameters: {', '.join(sorted(self.defaults)) or 'none'}")

    def _wrong_type(self, key: str, value: Any) -> VirtbenchError:
        default = self.defaults[key]
        return VirtbenchError(f"benchmark {self.name}: parameter {key}={value!r} should be "
                              f"{TYPE_WORDS[type(default)]}, like {key}={default!r}")

    def params(self, given: dict[str, Any] | None = None, quick: bool = False) -> dict[str, Any]:
        """Defaults, then what the study gave, then (for a smoke run) the quick sizes, which
        win over a study's full-size parameters; unknown keys and wrong types are errors."""
        given = dict(given or {})
        for key, value in given.items():     # they reach the tool's command line
            problem = next(filter(None, (text_problem(t) for t in (key, value)
                                         if isinstance(t, str))), None)
            if problem:
                raise VirtbenchError(f"benchmark {self.name}: parameter {key!r}={value!r} "
                                     f"{problem}; write it on one line without control "
                                     "characters")
        try:
            valid = self.param_model().model_validate(given)
        except ValidationError as exc:
            first = exc.errors()[0]
            key = str(first["loc"][0]) if first["loc"] else "?"
            if first["type"] == "extra_forbidden" or key not in self.defaults:
                raise self._unknown(key) from None
            raise self._wrong_type(key, given.get(key)) from None
        merged = dict(self.defaults)
        merged.update({key: getattr(valid, key) for key in given})
        if quick:
            merged.update(self.quick)
        self.check(merged)
        return merged

    def parse_param(self, key: str, text: str) -> Any:
        """A command-line value (`--bench NAME:key=value`) as the parameter's declared type."""
        if key not in self.defaults:
            raise self._unknown(key)
        kind = type(self.defaults[key])
        if kind is str:
            return text
        if kind is bool:
            if text.lower() in TRUE_WORDS + FALSE_WORDS:
                return text.lower() in TRUE_WORDS
            raise self._wrong_type(key, text)
        try:
            return kind(text)
        except ValueError:
            raise self._wrong_type(key, text) from None

    def non_default(self, params: dict[str, Any]) -> dict[str, Any]:
        """The given parameters whose value differs from the declared default."""
        return {k: v for k, v in params.items() if k not in self.defaults or self.defaults[k] != v}

    def check(self, params: dict[str, Any]) -> None:
        """Raise VirtbenchError for parameter values that make no sense."""

    def metric(self, name: str) -> Metric:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(name)

    def requirements(self, params: dict[str, Any]) -> tuple[str, ...]:
        """The capabilities a trial with `params` needs (default: `needs`); a benchmark
        whose needs depend on a parameter (cache=out drops caches) widens it."""
        return self.needs

    def memory_need(self, params: dict[str, Any]) -> int:
        """Bytes one trial holds in memory at its peak (0: small or unknown); a group of
        instances refuses N when N x this exceeds what the host has available."""
        return 0

    # -- running -------------------------------------------------------------------------
    def timeout(self, params: dict[str, Any]) -> float:
        """Seconds a trial may take before it is killed (generous: guests may be slow)."""
        return 3600.0

    def argv(self, params: dict[str, Any], env: "Environment") -> list[str]:
        raise NotImplementedError

    def parse(self, stdout: str) -> dict[str, float]:
        """Pure: the tool's stdout -> metric values. Raise ParseError when it is not there."""
        raise NotImplementedError

    def run_trial(self, env: "Environment", params: dict[str, Any],
                  start_at: float | None = None, slot_s: float | None = None) -> TrialOutcome:
        """Run once in `env` and parse. Failure is an outcome, never an exception.
        `start_at` (only for a benchmark with `timed` metrics): when the tool starts its timed
        work, on the environment's CLOCK_MONOTONIC; `slot_s` (only `slotted`, with start_at):
        the time each block is given."""
        timeout = self.timeout(params)
        argv = self.argv(params, env)
        if start_at is not None:
            argv = argv + ["--start-at", f"{start_at:.6f}"]
            if slot_s is not None:
                argv += ["--slot", f"{slot_s:.6f}"]
                timeout += self.slots_needed(params) * slot_s
        return self.outcome_of(env.exec(argv, timeout=timeout), timeout)

    def slots_needed(self, params: dict[str, Any]) -> int:
        """How many slots a `slotted` tool's run takes (its blocks, warm-up ones included)."""
        return 0

    def timing(self, stdout: str) -> Timing | None:
        """Pure: the blocks of the `timed` metrics the output stamps, or None (no stamps)."""
        return None

    def outcome_of(self, result, timeout: float | None = None) -> TrialOutcome:
        """A command's result as a trial outcome: its error, or its parsed metrics. A failed
        command's output is still read for what it measured before it failed (`partial`)."""
        cpu = (getattr(result, "user_s", 0.0) or 0.0) + (getattr(result, "sys_s", 0.0) or 0.0)
        outcome = TrialOutcome(stdout=result.stdout, stderr=result.stderr, exit=result.exit,
                               wall_s=result.wall_s, cpu_s=cpu if cpu > 0 else None)
        outcome.error = exec_error(result, timeout, self.packages)
        if outcome.error is None:
            try:
                outcome.values = self.parse(result.stdout)
                outcome.warnings += self.extra_warnings(result.stdout)
            except ParseError as exc:
                outcome.error = f"unparsable output: {exc}"
                outcome.partial = exc.partial
        else:
            outcome.partial = self.evidence(result.stdout)
        return outcome

    def evidence(self, text: str) -> dict[str, float]:
        """What the output of a failed command measured before it failed: the parser's values
        or its ParseError's partial ones; {} when there are none. Evidence only: the trial has
        failed already, so a parser that cannot cope with truncated output costs nothing."""
        if not text:
            return {}
        try:
            return dict(self.parse(text))
        except ParseError as exc:
            return exc.partial
        except Exception:       # noqa: BLE001 - a half-written output a parser never expected
            return {}

    def extra_warnings(self, text: str) -> list[tuple[str, str]]:
        """(kind, message) pairs a successful trial's output calls for (pure); the runner
        stores each distinct one once per environment and benchmark."""
        return []


def exec_error(result, timeout: float | None = None, packages=()) -> str | None:
    """Why a command failed, in one line that names the fix where there is one (a missing
    tool: the benchmark's `packages`, when it names them); None if not."""
    last = (result.stderr.strip() or result.stdout.strip() or "(no output)").splitlines()[-1]
    if result.timed_out:
        return f"timed out after {timeout:.0f} s" if timeout else "timed out"
    if result.exit == 127 and packages:
        return (f"a tool is missing in the environment ({last}); install it there: apt-get "
                f"install {' '.join(sorted(packages))} (a guest or container virtbench builds "
                "gets a benchmark's packages in its image variant)")
    if result.exit == 127:
        return (f"a tool is missing in the environment ({last}); install it there "
                "(for a guest: it belongs in the image recipe, then virtbench image build)")
    if result.exit != 0:
        return f"exit status {result.exit}: {last}"
    return None


def last_json_line(stdout: str) -> dict:
    """The last line of stdout that is a JSON object (our kernels print exactly one)."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise ParseError(f"malformed JSON result line: {exc}") from exc
            if isinstance(value, dict):
                return value
    raise ParseError("no JSON result line in the output")


def kernel_result(stdout: str, kernel: str) -> dict:
    """The result line of one of our kernels (`{"kernel": NAME, ...}`), or ParseError."""
    result = last_json_line(stdout)
    if result.get("kernel") != kernel:
        raise ParseError(f"not a {kernel} result line")
    return result


def number(obj: dict, key: str) -> float:
    """obj[key] as a finite float, or ParseError naming the key."""
    try:
        value = float(obj[key])
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"missing or non-numeric {key!r}") from exc
    if value != value or value in (float("inf"), float("-inf")):
        raise ParseError(f"{key!r} is not finite")
    return value


def finite_values(obj, keys: dict[str, str]) -> dict[str, float]:
    """{metric: obj[key]} for each (metric, key) whose value is a finite number; the others
    left out (pure). For the partial values a ParseError carries."""
    out = {}
    if not isinstance(obj, dict):
        return out
    for metric, key in keys.items():
        try:
            out[metric] = number(obj, key)
        except ParseError:
            continue
    return out


def span_of(obj: dict, start: str = "start_s", end: str = "end_s", work: float = 0.0) -> Span:
    """Span(obj[start], obj[end], work), or ParseError."""
    a, b = number(obj, start), number(obj, end)
    if b < a:
        raise ParseError(f"{end!r} is before {start!r}")
    return Span(a, b, work)


def late_of(result: dict, key: str = "late_s") -> float | None:
    try:
        return number(result, key)
    except ParseError:
        return None
