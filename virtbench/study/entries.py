"""What a study file's entries refer to: an environment named by its name= or its spec
(`versus`, a claim's or a published figure's environment) resolved to the one spelling the
analysis matches by, and the [[published]] figures checked against the study's environments
and benchmarks. Used by design.load."""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..core.errors import VirtbenchError
from ..core.text import text_problem
from ..measure.environments import EnvSpec
from ..measure.environments.spec import NAME_OPTION

if TYPE_CHECKING:
    from .design import BenchmarkCase, EnvironmentEntry


def fail(path, what: str) -> VirtbenchError:
    return VirtbenchError(f"study {path}: {what}")


def read_toml(path: Path, missing_fix: str) -> dict:
    """A study file's TOML; one line naming the file when it is missing (`missing_fix`
    says what to give), unreadable or not TOML."""
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise VirtbenchError(f"study {path}: no such file; {missing_fix}") from None
    except tomllib.TOMLDecodeError as exc:
        raise fail(path, f"not valid TOML ({exc}); fix the syntax at that line") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(path, f"cannot be read ({exc}); give a readable UTF-8 .toml file") from None


def name_from_file(path: Path) -> str:
    """The study's name when its file gives none: the file's name without .toml, refused
    (one line) when it holds what may not reach a file or a command line."""
    problem = text_problem(path.stem)
    if problem:
        raise fail(repr(str(path)), f"the name it gives, {path.stem!r}, {problem}; "
                   'write a name = "..." line or rename the file')
    return path.stem


def spec_resolver(envs: list[EnvironmentEntry]) -> Callable[[str], str]:
    """`versus`, a claim's or a published figure's environment, as written -> the
    normalised spec of the study's environment it names: its name= (`twin` for
    `native:name=twin`: the name is the label) or its spec. VirtbenchError when it is
    neither a name of the study nor a spec that parses."""
    named: dict[str, str] = {}
    for e in envs:
        try:
            parsed = EnvSpec.parse(e.spec)
        except VirtbenchError:
            continue
        if NAME_OPTION in parsed.options:
            named.setdefault(parsed.options[NAME_OPTION], str(parsed))

    def spec_of(text: str) -> str:
        return named[text.strip()] if text.strip() in named else normalize_spec(text)
    return spec_of


def check_versus(path, envs: list[EnvironmentEntry],
                 spec_of: Callable[[str], str] | None = None) -> None:
    """Each [[environment]]'s `versus` names another environment of the study (its name=
    or its spec), stored as its spec in the one spelling the analysis matches by."""
    spec_of = spec_of or spec_resolver(envs)
    specs = {normalize_spec(e.spec) for e in envs}
    for i, e in enumerate(envs, 1):
        if e.versus is None:
            continue
        try:
            versus = spec_of(e.versus)
        except VirtbenchError as exc:
            raise fail(path, f"environment[{i}]: versus: {exc}") from None
        if versus not in specs:
            raise fail(path, f"environment[{i}] ({e.spec}): versus {e.versus!r} is not the "
                       "name or spec of any [[environment]] of this study; copy its "
                       "name= or its spec")
        if versus == normalize_spec(e.spec):
            raise fail(path, f"environment[{i}] ({e.spec}): versus names the environment "
                       "itself; name the one to compare it with")
        e.versus = versus


def normalize_spec(spec: str) -> str:
    """One spelling per environment spec (spaces dropped), to match entries by spec."""
    return str(EnvSpec.parse(spec))


def published_figures(path, entries, envs: list[EnvironmentEntry],
                      cases: list[BenchmarkCase],
                      spec_of: Callable[[str], str] | None = None) -> list[dict]:
    """[[published]]: the source's own figures, to be shown beside the measured ones.

    Each names an environment (its name= or its spec as in [[environment]]), a benchmark (its label) and
    a metric, cites where the figure is (`source`), and gives the figure as the source does:
    `ratio` (environment / reference), or `value` with `versus_value` (then the ratio is
    derived), or a `value` alone, or only a `verdict` ("pass"/"fail", a source's own ✓/✗
    table). `versus` is the name or spec of the reference environment when it is not the study's
    baseline. `unmeasured = "why"` admits a figure of a benchmark the study cannot run
    (e.g. a proprietary suite): it is shown, never matched.
    """
    spec_of = spec_of or spec_resolver(envs)
    specs = {normalize_spec(e.spec) for e in envs}
    labels = {c.label for c in cases}
    out = []
    for i, entry in enumerate(entries, 1):     # types and ranges: study_schema.PublishedTable
        where = f"published[{i}]"
        env = spec_of(entry["environment"])
        if env not in specs:
            raise fail(path, f"{where}: environment {entry['environment']!r} is not the spec of "
                       "any [[environment]] of this study; copy its spec")
        versus = spec_of(entry["versus"]) if "versus" in entry else None
        if versus is not None and versus not in specs:
            raise fail(path, f"{where}: versus {entry['versus']!r} is not the spec of any "
                       "[[environment]] of this study")
        if entry["benchmark"] not in labels and "unmeasured" not in entry:
            raise fail(path, f"{where}: benchmark {entry['benchmark']!r} is not the label of any "
                       f"[[benchmark]] (labels: {', '.join(sorted(labels))}); or say why it "
                       "cannot be, with unmeasured = \"...\"")
        ratio, derived = entry.get("ratio"), False
        if ratio is None and "value" in entry and "versus_value" in entry:
            ratio, derived = entry["value"] / entry["versus_value"], True
        if ratio is None and "verdict" not in entry and "value" not in entry:
            raise fail(path, f"{where}: give ratio, or value (with versus_value), or verdict")
        out.append({"environment": env, "benchmark": entry["benchmark"], "metric": entry["metric"],
                    "ratio": None if ratio is None else float(ratio), "ratio_derived": derived,
                    "value": entry.get("value"), "versus": versus,
                    "versus_value": entry.get("versus_value"), "verdict": entry.get("verdict"),
                    "source": entry["source"], "note": entry.get("note"),
                    "unmeasured": entry.get("unmeasured")})
    return out
