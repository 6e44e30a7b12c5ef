"""The price list of virtualization (issue 24), as rows: one per primitive, one cell per
environment holding its figure and its ratio to the baseline, and one sentence per family and
environment saying how far above the baseline that family's primitives cost.

Pure functions of the analysed results (analysis.run.analyze_run's "results": one dict per
environment x benchmark x metric with its trimmed mean and vs_baseline). The report layer
draws the table; it lives here, beside the metrics it orders, so that the report need not
know the primitives' families.
"""
from __future__ import annotations

import math

from .primitives import FAMILIES, METRIC_FAMILY

ORDERS_OF_MAGNITUDE = 10.0     # a ratio at least this large is "an order of magnitude" or more


def price_list(results: list[dict], benchmark: str = "primitives") -> list[dict]:
    """Rows in the families' order, for the metrics some environment measured under the case
    labelled `benchmark`: {"family", "metric", "unit", "description", "cells": {environment:
    {"value": trimmed mean, "ratio": to the baseline or None, "verdict": or None}}}."""
    descriptions = {name: desc for fam in FAMILIES.values() for name, _, desc in fam}
    cells: dict[str, dict[str, dict]] = {}
    units: dict[str, str] = {}
    for r in results:
        if r.get("benchmark") != benchmark or r.get("metric") not in METRIC_FAMILY:
            continue
        vs = r.get("vs_baseline") or {}
        cells.setdefault(r["metric"], {})[r["environment"]] = {
            "value": r.get("trimmed_mean"), "ratio": vs.get("ratio"),
            "verdict": vs.get("verdict")}
        units[r["metric"]] = r.get("unit") or ""
    rows = []
    for fam, metrics in FAMILIES.items():
        for name, unit, _ in metrics:
            if name in cells:
                rows.append({"family": fam, "metric": name, "unit": units.get(name) or unit,
                             "description": descriptions[name], "cells": cells[name]})
    return rows


def _times(ratio: float) -> str:
    return f"{ratio:.3g}x" if ratio < 1000 else f"{ratio:.0f}x"


def family_sentences(rows: list[dict], environment: str, baseline: str) -> dict[str, str]:
    """One sentence per family for `environment` against `baseline`: the range of its ratios,
    which primitives are an order of magnitude or more above, and which below (pure). A family
    with no ratio (no baseline figure) says so."""
    out: dict[str, str] = {}
    for fam in FAMILIES:
        ratios = [(r["metric"], r["cells"][environment]["ratio"]) for r in rows
                  if r["family"] == fam and environment in r["cells"]]
        if not ratios:
            continue
        known = [(m, x) for m, x in ratios if x is not None and math.isfinite(x) and x > 0]
        if not known:
            out[fam] = (f"{fam}: {environment} has no figure of {baseline} to compare with "
                        f"({', '.join(m for m, _ in ratios)})")
            continue
        low, high = min(known, key=lambda t: t[1]), max(known, key=lambda t: t[1])
        above = [m for m, x in known if x >= ORDERS_OF_MAGNITUDE]
        below = [m for m, x in known if x <= 1 / ORDERS_OF_MAGNITUDE]
        words = (f"{fam}: {environment} costs {_times(low[1])} ({low[0]})" if low == high else
                 f"{fam}: {environment} costs {_times(low[1])} ({low[0]}) to {_times(high[1])} "
                 f"({high[0]})")
        words += f" of {baseline}"
        if above:
            orders = math.log10(max(x for _, x in known))
            words += (f"; {len(above)} of {len(known)} at least an order of magnitude above "
                      f"(up to {orders:.1f} orders: {', '.join(above)})")
        else:
            words += "; none an order of magnitude above"
        if below:
            words += f"; an order of magnitude below: {', '.join(below)}"
        out[fam] = words
    return out


# The exit reasons each primitive causes, as exit profiles name them: KVM's on AMD (perf kvm
# stat's SVM names: cpuid, io, npf, hlt, msr, interrupt, vintr) and on Intel (VMX names,
# upper case in perf, compared lower case), and TCG's would-be exits (pio, mmio, apic).
# A primitive missing here (a system call, rdtsc, a clock read through the vDSO) runs
# inside the guest without an exit.
_IPI = ("msr", "msr_write", "apic", "apic_write", "apic_access", "eoi_induced", "hlt",
        "interrupt", "external_interrupt", "vintr")
_TIMER = ("hlt", "interrupt", "external_interrupt", "msr", "msr_write", "preemption_timer",
          "vintr", "apic", "apic_write", "apic_access", "eoi_induced")
_PAGING = ("npf", "ept_violation")
EXIT_REASONS: dict[str, tuple[str, ...]] = {
    "cpuid_ns": ("cpuid",),
    "ioport_out_ns": ("io", "io_instruction", "pio"),
    "mmio_read_ns": ("npf", "ept_misconfig", "mmio"),
    "timer_p50_us": _TIMER, "timer_p99_us": _TIMER, "timer_max_us": _TIMER,
    "ctxsw_cross_cpu_ns": _IPI, "futex_cross_cpu_ns": _IPI,
    "pagefault_4k_ns": _PAGING, "pagefault_thp_ns": _PAGING, "mmap_munmap_ns": _PAGING,
}


def exits_of(metric: str, by_reason) -> list[tuple[str, int, float]]:
    """The reasons of an exit profile (rows with reason, count, share_pct) that `metric`'s
    primitive causes, as (reason, count, share_pct), in the profile's order (pure)."""
    wanted = EXIT_REASONS.get(metric, ())
    return [(r["reason"], int(r["count"]), float(r["share_pct"])) for r in by_reason
            if str(r["reason"]).lower() in wanted]


def _ranged(items: list[tuple[str, float]]) -> str:
    lo, hi = min(x for _, x in items), max(x for _, x in items)
    return _times(lo) if _times(lo) == _times(hi) else f"{_times(lo)}-{_times(hi)}"


def family_summary(rows: list[dict], environments: list[str], baseline: str) -> dict[str, str]:
    """One sentence per family across `environments` (the baseline left out): which
    primitives are an order of magnitude or more above `baseline`, in which environment, and
    which environments keep the whole family below that (their range of ratios); an order of
    magnitude below is said too, and an environment with no ratio is named (pure)."""
    others = [e for e in environments if e != baseline]
    out: dict[str, str] = {}
    for fam in FAMILIES:
        fam_rows = [r for r in rows if r["family"] == fam]
        if not fam_rows:
            continue
        above, within, below, unmatched = [], [], [], []
        for env in others:
            known = [(r["metric"], r["cells"][env]["ratio"]) for r in fam_rows
                     if env in r["cells"] and r["cells"][env]["ratio"] is not None
                     and math.isfinite(r["cells"][env]["ratio"])
                     and r["cells"][env]["ratio"] > 0]
            if not known:
                if any(env in r["cells"] for r in fam_rows):
                    unmatched.append(env)
                continue
            high = [(m, x) for m, x in known if x >= ORDERS_OF_MAGNITUDE]
            if high:
                above.append(f"{env} ({', '.join(f'{m} {_times(x)}' for m, x in high)})")
            rest = [(m, x) for m, x in known if x < ORDERS_OF_MAGNITUDE]
            if rest:
                within.append(f"{env} {'' if not high else 'for the rest, '}{_ranged(rest)}")
            below += [f"{m} in {env} ({_times(x)})" for m, x in known
                      if x <= 1 / ORDERS_OF_MAGNITUDE]
        if not (above or within):
            if unmatched:
                out[fam] = (f"{fam}: no figure of {baseline} to compare with "
                            f"({', '.join(unmatched)} measured it)")
            continue
        words = f"{fam}: "
        words += (f"an order of magnitude or more above {baseline}: {'; '.join(above)}"
                  if above else f"nothing an order of magnitude above {baseline}")
        if within:
            words += f"; within one order: {', '.join(within)}"
        if below:
            words += f"; an order of magnitude below: {', '.join(below)}"
        if unmatched:
            words += f"; no figure of {baseline} to compare with: {', '.join(unmatched)}"
        out[fam] = words
    return out
