"""The study that separates changes made at once (`virtbench report RUN --separate`). Pure.

When an environment differs from its reference in more than one option (a new QEMU and
UEFI firmware, say), its verdicts cannot say which change made the difference. The
separating study keeps the reference and the environment, and adds one environment per
option: the reference with that one option set as the environment has it, named
`LABEL-OPTION-only`, each compared with the reference (`versus`). The study is TOML, as
`virtbench run STUDY.toml` reads it (virtbench/study/design.py), with the run's benchmarks,
threshold and alpha, and adaptive trials (blocks until every verdict is decided).
Changes no option makes (a host's kernel, its microcode) cannot be separated in one run:
the study's header names them.
"""
from __future__ import annotations

import json
import re

from ....core.errors import VirtbenchError
from ....measure.environments.spec import EnvSpec
from ....foundations.model import RunReport


def _q(value) -> str:
    """A TOML value: a JSON string is a TOML basic string; numbers and booleans as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_q(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_q(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def _name(label: str, option: str) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-._") or "env"
    return f"{base}-{option}-only"[:63]


def _spec_with(spec: str, option: str, value) -> str:
    """`spec` without its name, with `option` set to `value`."""
    parsed = EnvSpec.parse(spec)
    options = {k: v for k, v in parsed.options.items() if k != "name"}
    options[option] = str(value)
    return str(EnvSpec(parsed.kind, options))


def _value_of(env, option: str):
    """An option's value as the environment has it: as written in its spec, else resolved."""
    written = EnvSpec.parse(env.spec).options
    return written[option] if option in written else env.options.get(option)


def separating_study(report) -> str:
    """The TOML of the study that separates every pair of `report` with more than one
    change; one line naming the way out when no pair needs it."""
    report = RunReport.of(report)
    envs = {e.label: e for e in report.environments}
    pairs = [p for p in report.differences
             if p.changes > 1 and len(p.separable) > 0 and p.environment in envs
             and p.reference in envs]
    if not pairs:
        raise VirtbenchError(f"run {report.run.id}: no environment differs from its reference "
                             "in more than one option; nothing to separate (`virtbench report "
                             "--wide` lists what differs)")
    head = [f"# Separates the changes of run {report.run.id} one option at a time",
            "# (`virtbench report --separate`): each environment below differs from its",
            "# reference in one option only. Run it with `virtbench run THIS.toml`."]
    return _study(head, f"separate-{report.run.id}",
                  [(envs[p.reference], envs[p.environment], p) for p in pairs],
                  report.benchmarks, report.run.threshold_pct, report.run.alpha)


def separating_study_between(label: str, before, after, diff, cases, threshold_pct: float,
                             alpha: float, where: str) -> str:
    """The TOML of the study that separates the changes between two runs of one environment
    (a history's change `where`): the environment as it was (`LABEL-before`) as the
    baseline, as it is (`LABEL-after`), and one environment per option that changed."""
    def renamed(env, suffix: str):
        spec = EnvSpec.parse(env.get("spec") or env.get("kind") or "")
        options = {k: v for k, v in spec.options.items() if k != "name"}
        options["name"] = _name(label, suffix).removesuffix("-only")
        return _Env(label=options["name"], spec=str(EnvSpec(spec.kind, options)),
                    options=dict(env.get("options") or {}))
    old, new = renamed(before, "before"), renamed(after, "after")
    head = [f"# Separates the changes of {label} at {where} one option at a time",
            "# (`virtbench history`): the environment before and after, and one environment",
            "# per option that changed. Run it with `virtbench run THIS.toml`."]
    return _study(head, f"separate-{_name(label, 'history').removesuffix('-only')}",
                  [(old, new, diff)], cases, threshold_pct, alpha)


class _Env:
    """What the study needs of an environment: its label, spec and options."""

    def __init__(self, label: str, spec: str, options: dict):
        self.label, self.spec, self.options = label, spec, options


def _study(head: list[str], name: str, pairs, cases, threshold_pct, alpha) -> str:
    """The study's TOML: `pairs` of (reference, environment, PairDifferences) with one
    environment per separable option, each compared with its reference."""
    lines = head + [f"name = {_q(name)}", 'trials = "auto"',
                    f"threshold = {_q(threshold_pct)}", f"alpha = {_q(alpha)}"]
    for ref, env, p in pairs:
        rest = [f.name for f in p.facts if (f.option or f.key) not in p.separable]
        if rest:
            lines.insert(len(head), f"# not separable in one run (no option sets it): "
                         f"{p.environment}: {', '.join(rest)}")
    seen: list[str] = []
    entries: list[tuple[str, str | None]] = []

    def add(spec: str, versus: str | None) -> None:
        if spec not in seen:
            seen.append(spec)
            entries.append((spec, versus))
    for ref, env, p in pairs:
        add(ref.spec, None)
        add(env.spec, ref.spec)
        for option in p.separable:
            one = _spec_with(ref.spec, option, _value_of(env, option))
            add(f"{one},name={_name(p.environment, option)}", ref.spec)
    baseline = pairs[0][0].spec
    lines.append(f"baseline = {_q(baseline)}")
    for spec, versus in entries:
        lines += ["", "[[environment]]", f"spec = {_q(spec)}"]
        if versus and versus != baseline:
            lines.append(f"versus = {_q(versus)}")
    for case in cases:
        lines += ["", "[[benchmark]]", f"name = {_q(case.name)}"]
        if case.label and case.label != case.name:
            lines.append(f"label = {_q(case.label)}")
        if case.params:
            lines.append(f"params = {_q(dict(case.params))}")
    return "\n".join(lines) + "\n"
