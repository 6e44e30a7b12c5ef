"""Failed trials in every report: failed / planned per environment x benchmark, and what each
failed trial kept (its error, exit status and the values it measured before it failed:
evidence, never in the statistics). Pure text; the formats lay it out."""
from __future__ import annotations

from . import fmt

COLUMN = "failed"
EVIDENCE_TITLE = "failed trials (what they measured is evidence, never in the figures)"
COUNTS_TITLE = "trials failed / planned"


def cell(result: dict) -> str:
    """`failed/planned` of a result row's environment x benchmark ("1/8"; "1" unplanned)."""
    planned = result.get("planned_trials")
    return f"{result['failed_trials']}/{planned}" if planned else f"{result['failed_trials']}"


def count_lines(analysis: dict) -> list[str]:
    """One line per environment x benchmark, when any trial of the run failed."""
    counts = analysis.get("trial_counts") or []
    if not any(c["failed"] for c in counts):
        return []
    return [f"{c['environment']} · {c['benchmark']}: {c['failed']}"
            + (f" of {c['planned']}" if c["planned"] else "") + " failed" for c in counts]


def measured_text(samples: dict) -> str:
    return ", ".join(f"{m} = {fmt.value(s['value'])} {s['unit']}" for m, s in samples.items())


def evidence_lines(analysis: dict) -> list[str]:
    """One line per failed trial: where, why, its exit status and what it measured."""
    out = []
    for e in analysis.get("failed_trial_evidence") or []:
        bits = [f"{e['environment']} · {e['benchmark']} · trial #{e['trial']}: {e['error']}"]
        if e.get("exit") is not None and not (e["error"] or "").startswith("exit status"):
            bits.append(f"exit {e['exit']}")
        bits.append(f"measured before failing: {measured_text(e['samples'])}"
                    if e["samples"] else "measured nothing")
        out.append("; ".join(bits))
    return out


FOOTNOTE = ("the end of each failed trial's stdout and stderr is in `--format json` "
            "(failed_trial_evidence); the store keeps the last 64 KiB of each")


def title(text: str) -> str:
    """`text` with its first letter capital (str.capitalize would lower "KiB")."""
    return text[:1].upper() + text[1:]

