"""The study flags, declared once: `--env`, `--bench`, `--trials`... as the fields of one
dataclass, StudyFlags. A field's name is its flag (`min_trials` is `--min-trials`) and its
metadata what the command line shows of it (help, metavar, how its text is read); the parser
(cli/parser.py add_study_flags) adds exactly these flags, `run` and `fleet run` build a
StudyFlags from what was parsed, and study/flags.py with_flags applies one over a study.

Light on purpose (core only, no pydantic): building the parser imports it (tests/unit/cli/
test_cli_startup.py). A StudyFlags checks its values when it is made: a bad one is one line
naming the flag and the fix (exit 2)."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from ..core import defaults
from ..core.errors import VirtbenchError
from ..core.text import line_flag

ANALYSES = ("paired", "unpaired")
CORRECTIONS = ("holm", "bh")
WHAT = {"paired": "each block's ratio to the reference, docs/decisions.md",
        "unpaired": "trimmed means"}
_OTHER = next(a for a in ANALYSES if a != defaults.ANALYSIS)

# A flag's text reader is made from the flag's name (so that its one line names the flag)
Reads = Callable[[str], Callable[[str], object]]


def trials_text(text: str) -> int | str:
    """--trials N or --trials auto."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of trials or auto") from None


def percent_text(text: str) -> float:
    """--resolution 5 or 5%: a percentage."""
    try:
        return float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage, e.g. 5 or 5%") from None


def _as(read: Callable[[str], object]) -> Reads:
    """A reader that does not name its flag (int, float, trials_text)."""
    return lambda flag: read


def _flag(help: str, reads: Reads | None = None, metavar: str | None = None,
          action: str | None = None, choices: tuple[str, ...] | None = None):
    """A study flag: a field (None or False when not given) and what the parser shows."""
    shown = {"help": help, "metavar": metavar, "action": action, "choices": choices,
             "reads": reads}
    return field(default=False if action == "store_true" else None,
                 metadata={k: v for k, v in shown.items() if v is not None})


@dataclass(frozen=True)
class StudyFlags:
    """The flags that shape a study, as given (None, or False for a switch: not given)."""

    env: list[str] | None = _flag(
        "environment KIND[:key=value,...]; repeat for several (overrides the study's)",
        line_flag, "SPEC", "append")
    bench: list[str] | None = _flag(
        "benchmark to run, with parameters as in a study's params (e.g. "
        "tcp:direction=receive,streams=10); repeat for several (overrides the study's)",
        line_flag, "NAME[:key=value,...]", "append")
    trials: int | str | None = _flag(
        f"trials (blocks) per benchmark and environment (default {defaults.TRIALS}); auto: "
        "blocks until every verdict is decided (--min-trials, --max-trials, --budget bound it)",
        _as(trials_text), "N|auto")
    min_trials: int | None = _flag(
        f"with --trials auto: blocks every case gets first (default {defaults.MIN_TRIALS})",
        _as(int), "N")
    max_trials: int | None = _flag(
        f"with --trials auto: usable blocks at most per case (default {defaults.MAX_TRIALS})",
        _as(int), "N")
    budget: str | None = _flag(
        "with --trials auto: wall-clock bound of the run, e.g. 15m, 1h30m",
        line_flag, "DURATION")
    resolution: float | None = _flag(
        "with --trials auto: a pass runs on (to --max-trials) until a change of PCT %% is "
        "ruled out too (default: none, stop when every verdict is decided)",
        _as(percent_text), "PCT")
    min_section: float | None = _flag(
        "a kernel's measured section shorter than this is repeated inside each trial until "
        f"reached (default {defaults.MIN_SECTION_S:g}; 0: off)", _as(float), "SECONDS")
    duet: bool = _flag(
        "measure each environment at the same time as its baseline, on disjoint CPUs (two "
        "environments only; see docs/decisions.md)", action="store_true")
    baseline: str | None = _flag("environment label to compare against", line_flag, "LABEL")
    quick: bool = _flag("small sizes for a smoke run", action="store_true")
    seed: int | None = _flag("seed of the trial order (default: random, stored)", _as(int))
    profile: str | None = _flag(
        "exits: after the measured trials, one profiled trial per guest x benchmark says why "
        "(VM exits under KVM, would-be exits under TCG)", choices=("exits",))
    analysis: str | None = _flag(
        f"how verdicts are made: {defaults.ANALYSIS} (default: the study's; "
        f"{WHAT[defaults.ANALYSIS]}) or {_OTHER} ({WHAT[_OTHER]})", choices=ANALYSES)
    correction: str | None = _flag(
        f"the family's correction (default: the study's, {defaults.CORRECTION}): holm "
        "(family-wise error) or bh (Benjamini-Hochberg, false discovery rate: for studies of "
        "many rows that mostly differ; docs/decisions.md); adaptive trials stop by it",
        choices=CORRECTIONS)

    def __post_init__(self):
        _check_seed(self.seed)
        if self.budget is not None:
            self.budget_s()
        _check_min_section(self.min_section)
        _check_blocks("--min-trials", self.min_trials)
        _check_blocks("--max-trials", self.max_trials)
        for f in fields(self):
            allowed, value = f.metadata.get("choices"), getattr(self, f.name)
            if allowed and value is not None and value not in allowed:
                raise VirtbenchError(f"{flag_of(f.name)} {value}: use {' or '.join(allowed)}")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> StudyFlags:
        """The study flags of a parsed command line (`run`, `fleet run`)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})

    def budget_s(self) -> float | None:
        """--budget in seconds (None: not given)."""
        if self.budget is None:
            return None
        from .schema import duration_s       # pydantic: not when the parser is built
        return duration_s(self.budget, "--budget")


def flag_of(name: str) -> str:
    """A field's flag: `min_trials` -> `--min-trials`."""
    return "--" + name.replace("_", "-")


def flag_field(name: str):
    """The dataclass field of the study flag `name`."""
    return next(f for f in fields(StudyFlags) if f.name == name)


def _check_min_section(value: float | None) -> None:
    if value is not None and not 0 <= value <= 3600:
        raise VirtbenchError(f"--min-section {value:g}: give 0 (off) to 3600 seconds")


def _check_blocks(flag: str, value: int | None) -> None:
    """--min-trials / --max-trials: the range a study file's min_trials and max_trials
    have (schema.Blocks), so that what a run stores reads back as valid."""
    if value is not None and not 2 <= value <= 100_000:
        raise VirtbenchError(f"{flag} {value}: give 2 to 100000 blocks, e.g. {flag} 6")


def _check_seed(value: int | None) -> None:
    if value is not None and value < 0:
        raise VirtbenchError(f"--seed {value}: give 0 or more, e.g. --seed 42")
