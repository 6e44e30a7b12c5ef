"""Exit profiles as report sections (pure): one per environment x benchmark, with the
overhead it explains, exits by reason and the top guest functions, as the Zhang et al.
tables give them. Every format renders these same rows."""
from __future__ import annotations

from ..model import ProfilesReport, RunReport
from . import fmt

REASON_HEADER = ["reason", "count", "share", "time share"]
FUNCTION_HEADER = ["address", "function", "caller", "device / port", "count", "share"]
TOP = 10


def _share(x) -> str:
    return "—" if x is None else f"{x:.1f} %"


def explains_line(entry: dict) -> str:
    parts = [f"{e['metric']} {fmt.pct(e['overhead_pct'])} ({e['verdict']})"
             for e in entry.get("explains") or [] if e.get("overhead_pct") is not None]
    return "overhead it explains: " + ("; ".join(parts) if parts else "none measured vs baseline")


def sections(analysis: dict, top: int = TOP) -> list[dict]:
    out = []
    for entry in analysis.get("profiles") or []:
        what = "VM exits" if entry.get("source") == "kvm" else "would-be exits (TCG)"
        title = f"{entry['environment']} · {entry['benchmark']}"
        if entry["status"] != "ok":
            out.append({"title": title, "subtitle": f"no profile: {entry['error']}",
                        "explains": explains_line(entry), "reasons": [], "functions": [],
                        "notes": []})
            continue
        reasons = [[r["reason"], str(r["count"]), _share(r["share_pct"]),
                    _share(r.get("time_share_pct"))] for r in entry["by_reason"]]
        functions = [[f["address"], f["function"] or "?", f["caller"] or "",
                      f.get("device") or "", str(f["count"]), _share(f["share_pct"])]
                     for f in entry["by_function"][:top]]
        total = sum(r["count"] for r in entry["by_reason"])
        out.append({"title": title,
                    "subtitle": f"{what}: {total} in {entry['duration_s']:.1f} s "
                                f"(the profiled trial, not a measured one)",
                    "explains": explains_line(entry), "reasons": reasons,
                    "functions": functions, "notes": list(entry.get("notes") or [])})
    return out


def only_profiles(analysis) -> ProfilesReport:
    """The analysis reduced to its run and its profiles (`virtbench report --profile`)."""
    analysis = RunReport.of(analysis)
    return ProfilesReport(run=analysis.run, profiles=analysis.profiles)
