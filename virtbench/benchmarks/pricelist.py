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
