"""A density sweep's pieces every format shares: its summary lines, its step rows and its
curve chart (the aggregate and the slowest guest against the count, with 95 % CIs, the QoS
floor drawn and the knee marked)."""
from __future__ import annotations

from ...foundations.model.density import DensityCurve, DensityReport, DensityStep

STEP_HEADER = ["environment", "benchmark", "guests", "aggregate", "95 % CI", "per guest",
               "slowest / one guest", "fairness", "host memory (PSS)", "run"]
KNEE_COLOR, FLOOR_COLOR, REF_COLOR = "#b91c1c", "#6b7280", "#9ca3af"


def num(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.4g}" if abs(x) < 1000 else f"{x:,.0f}"


def ci(lo: float | None, hi: float | None) -> str:
    return "—" if lo is None or hi is None else f"{num(lo)} – {num(hi)}"


def step_row(curve: DensityCurve, s: DensityStep) -> list[str]:
    guests = ", ".join(num(g.mean) for g in s.per_guest)
    knee = " (knee)" if curve.knee == s.count and not curve.reference else ""
    return [curve.environment + (" (reference)" if curve.reference else ""), curve.benchmark,
            f"{s.count}{knee}", f"{num(s.aggregate.mean)} {curve.unit}",
            ci(s.aggregate.ci_low, s.aggregate.ci_high), guests,
            "—" if s.slowest_share is None else f"{s.slowest_share:.0%}",
            "—" if s.fairness is None else f"{s.fairness:.3f}",
            "—" if s.pss_mib is None else f"{s.pss_mib:,.0f} MiB", s.run_id]


def summary_lines(report: DensityReport) -> list[str]:
    out = [f"density sweep {report.run_id} (`virtbench report {report.run_id}` reads it)"
           ] if report.run_id else []
    out += [f"environment {report.environment}, {report.schedule} up to {report.max_count} "
           f"guests, {report.trials} trial(s) per step{' (quick sizes)' if report.quick else ''}",
           f"QoS rule: every guest at least {report.rule.per_guest_floor:.0%} of one guest "
           f"alone; each step adds at least {report.rule.min_gain:.0%} to the aggregate",
           f"the sweep ended: {report.stop_reason or 'every curve stopped'}"
           + (f" ({report.failure})" if report.failure else "")]
    for c in report.curves:
        if not c.reference:
            out.append(f"{c.benchmark} ({c.metric}): knee at {c.knee} guest(s), stop "
                       f"{c.stop_reason or '—'}: {c.why}")
    return out


CSV_HEADER = ["run_id", "environment", "reference", "benchmark", "metric", "unit", "guests",
              "knee", "stop_reason", "aggregate", "aggregate_ci_low", "aggregate_ci_high",
              "guest", "throughput", "ci_low", "ci_high", "n", "slowest_share", "fairness",
              "pss_mib", "overhead_mib", "step_run_id"]


def csv_rows(report: DensityReport) -> list[list]:
    """One row per step x guest (a guest's throughput beside its step's aggregate)."""
    out = []
    for c in report.curves:
        for s in c.steps:
            head = [report.run_id or "", c.environment, c.reference, c.benchmark, c.metric,
                    c.unit, s.count, c.knee, c.stop_reason or "", s.aggregate.mean,
                    s.aggregate.ci_low, s.aggregate.ci_high]
            tail = [s.slowest_share, s.fairness, s.pss_mib, s.overhead_mib, s.run_id]
            out += [head + [i + 1, g.mean, g.ci_low, g.ci_high, g.n] + tail
                    for i, g in enumerate(s.per_guest)]
    return out


def curve_figure(curve: DensityCurve, reference: DensityCurve | None, floor: float) -> dict:
    """Aggregate and slowest guest against the count; the floor (floor x one guest's)
    dotted; the knee marked; the reference curve grey, on its own axis (a TCG guest and
    the native processes differ by orders of magnitude)."""
    counts = [s.count for s in curve.steps]

    def err(steps, attr):
        figs = [getattr(s, attr) if attr == "aggregate" else min(s.per_guest, key=lambda g: g.mean)
                for s in steps]
        return {"type": "data", "symmetric": False,
                "array": [0 if f.ci_high is None else max(0.0, f.ci_high - f.mean) for f in figs],
                "arrayminus": [0 if f.ci_low is None else max(0.0, f.mean - f.ci_low)
                               for f in figs], "thickness": 1.2}
    data = [{"type": "scatter", "mode": "lines+markers", "name": "aggregate", "x": counts,
             "y": [s.aggregate.mean for s in curve.steps], "error_y": err(curve.steps,
                                                                           "aggregate")},
            {"type": "scatter", "mode": "lines+markers", "name": "slowest guest", "x": counts,
             "y": [min(g.mean for g in s.per_guest) for s in curve.steps],
             "error_y": err(curve.steps, "slowest")}]
    if reference and reference.steps:
        data.append({"type": "scatter", "mode": "lines+markers",
                     "name": "native aggregate (reference, right axis)", "yaxis": "y2",
                     "x": [s.count for s in reference.steps],
                     "y": [s.aggregate.mean for s in reference.steps],
                     "line": {"color": REF_COLOR, "dash": "dash"},
                     "marker": {"color": REF_COLOR}})
    shapes, notes = [], []
    if curve.steps:
        single = min(g.mean for g in curve.steps[0].per_guest)
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": floor * single,
                       "y1": floor * single, "line": {"color": FLOOR_COLOR, "dash": "dot",
                                                      "width": 1}})
        notes.append({"xref": "paper", "x": 1, "y": floor * single, "xanchor": "right",
                      "yanchor": "bottom", "showarrow": False, "font": {"size": 10},
                      "text": f"QoS floor: {floor:.0%} of one guest"})
    if curve.knee is not None:
        shapes.append({"type": "line", "yref": "paper", "y0": 0, "y1": 1, "x0": curve.knee,
                       "x1": curve.knee, "line": {"color": KNEE_COLOR, "width": 1.5}})
        notes.append({"yref": "paper", "y": 1, "x": curve.knee, "showarrow": False,
                      "yanchor": "bottom", "font": {"size": 10, "color": KNEE_COLOR},
                      "text": f"knee: {curve.knee} ({curve.stop_reason or 'still scaling'})"})
    layout = {"title": {"text": f"{curve.environment} · {curve.benchmark} · {curve.metric} "
                                f"({curve.unit}, higher is better)", "font": {"size": 13},
                        "x": 0.02, "xanchor": "left"},
              "height": 400, "margin": {"l": 60, "r": 60, "t": 56, "b": 44},
              "xaxis": {"title": {"text": "guests at once"}, "dtick": 1},
              "yaxis": {"title": {"text": curve.unit}, "rangemode": "tozero"},
              "yaxis2": {"title": {"text": f"native, {curve.unit}"}, "overlaying": "y",
                         "side": "right", "rangemode": "tozero", "showgrid": False},
              "legend": {"orientation": "h", "y": -0.25},
              "shapes": shapes, "annotations": notes,
              "font": {"family": "system-ui, sans-serif", "size": 11}}
    return {"data": data, "layout": layout}
