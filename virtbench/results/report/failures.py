"""Failed trials in every report: failed / planned per environment x benchmark, and what each
failed trial kept (its error, exit status and the values it measured before it failed:
evidence, never in the statistics). Pure text; the formats lay it out."""
from __future__ import annotations

from ...foundations.model import FailedTrial, Result, RunReport
from .fmt import numbers

COLUMN = "failed"
EVIDENCE_TITLE = "failed trials (what they measured is evidence, never in the figures)"
COUNTS_TITLE = "trials failed / planned"


def cell(result: Result) -> str:
    """`failed/planned` of a result row's environment x benchmark ("1/8"; "1" unplanned)."""
    planned = result.planned_trials
    return f"{result.failed_trials}/{planned}" if planned else f"{result.failed_trials}"


def any_failed(analysis: RunReport) -> bool:
    return any(c.failed for c in analysis.trial_counts)


def count_lines(analysis: RunReport) -> list[str]:
    """One line per environment x benchmark, when any trial of the run failed."""
    if not any_failed(analysis):
        return []
    return [f"{c.environment} · {c.benchmark}: {c.failed}"
            + (f" of {c.planned}" if c.planned else "") + " failed"
            for c in analysis.trial_counts]


def measured_text(samples: dict) -> str:
    return ", ".join(f"{m} = {numbers.value(s.value)} {s.unit}" for m, s in samples.items())


def evidence_line(e: FailedTrial) -> str:
    """A failed trial in one line: where, why, its exit status and what it measured."""
    bits = [f"{e.environment} · {e.benchmark} · trial #{e.trial}: {e.error}"]
    if e.exit is not None and not (e.error or "").startswith("exit status"):
        bits.append(f"exit {e.exit}")
    bits.append(f"measured before failing: {measured_text(e.samples)}"
                if e.samples else "measured nothing")
    return "; ".join(bits)


def evidence_lines(analysis: RunReport) -> list[str]:
    """One line per failed trial."""
    return [evidence_line(e) for e in analysis.failed_trial_evidence]


def output_tail(e: FailedTrial, chars: int = 600) -> str:
    """The end of a failed trial's stdout and stderr, as a report shows it."""
    return "\n".join(x for x in (e.stdout_tail.rstrip()[-chars:],
                                 e.stderr_tail.rstrip()[-chars:]) if x)


FOOTNOTE = ("the end of each failed trial's stdout and stderr is in `--format json` "
            "(failed_trial_evidence); the store keeps the last 64 KiB of each")


def title(text: str) -> str:
    """`text` with its first letter capital (str.capitalize would lower "KiB")."""
    return text[:1].upper() + text[1:]

