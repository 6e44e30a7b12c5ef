"""Exit profiles in the analysis: each stored profile beside the overhead it explains."""
from __future__ import annotations

from ....foundations.model import Explained, Profile, Result


def profile_entries(stored: list[dict], results: list[Result]) -> list[Profile]:
    """The report's "profiles" (docs/contract.md): one entry per environment x benchmark, its
    profile's fields, and `explains`: the overheads measured for that pair (pure)."""
    out = []
    for row in stored:
        entry = {"environment": row["environment"], "benchmark": row["benchmark"],
                 "status": row["status"], "error": row["error"], "wall_s": row["wall_s"],
                 "source": None, "duration_s": None, "by_reason": [], "by_function": [],
                 "notes": []}
        entry.update(row["profile"] or {})
        entry["explains"] = [
            Explained(metric=r.metric, unit=r.unit,
                      overhead_pct=r.vs_baseline.overhead_pct if r.vs_baseline else None,
                      verdict=r.vs_baseline.verdict if r.vs_baseline else None)
            for r in results
            if r.environment == row["environment"] and r.benchmark == row["benchmark"]]
        out.append(Profile.model_validate(entry))
    return out
