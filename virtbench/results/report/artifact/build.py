"""An artifact's files made from a run (its rows and its analysed report), and an artifact's
files read back into what `import` loads. Pure but for importing matplotlib (the figures
are drawn only when it is installed; the README says so when it is not)."""
from __future__ import annotations

import csv
import io
import json

from .... import __version__
from ....foundations.model import SCHEMA_VERSION, RunReport
from ....foundations.store.transfer import BadDump, checked_dump
from ... import report as formats
from ..view import View, width_for
from .manifest import (MANIFEST, RUN_ROWS, STUDY, TamperedArtifact, json_of, sealed,
                       verified)
from .readme import readme

# --format name -> the report's file in report/
REPORT_FILES = {"table": "report.txt", "markdown": "report.md", "json": "report.json",
                "csv": "report.csv", "html": "report.html", "latex": "report.tex"}
FIGURE_FORMATS = ["pdf", "svg"]
SAMPLE_COLUMNS = ["run", "environment", "benchmark", "benchmark_name", "trial", "seq",
                  "status", "warmup", "metric", "base_metric", "scope", "instance", "value",
                  "unit", "higher_is_better"]


def _json(value) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def sample_rows(dump: dict) -> list[dict]:
    """One row per stored sample, with its trial's identity (SAMPLE_COLUMNS)."""
    trials = {t["id"]: t for t in dump["trials"]}
    out = []
    for s in dump["samples"]:
        t = trials[s["trial_id"]]
        out.append({"run": dump["run"], **{k: t[k] for k in (
            "environment", "benchmark", "benchmark_name", "trial", "seq", "status", "warmup")},
            **{k: s[k] for k in ("metric", "base_metric", "scope", "instance", "value",
                                 "unit", "higher_is_better")}})
    return out


def samples_csv(rows: list[dict]) -> bytes:
    buf = io.StringIO()
    w = csv.DictWriter(buf, SAMPLE_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({**r, "value": repr(r["value"])})
    return buf.getvalue().encode()


def fingerprints(dump: dict) -> dict:
    """Every environment's fingerprint as stored, and the host's facts."""
    run = dump["runs"][0]
    return {"host": {"name": run["host"], "virtbench": run["virtbench_version"],
                     "kernels_build": (run["detail"] or {}).get("kernels_build")},
            "environments": {e["label"]: {k: e[k] for k in ("kind", "spec", "options",
                                                            "metadata", "status")}
                             for e in dump["environments"]}}


def figure_files(result: RunReport) -> tuple[dict[str, bytes], str | None]:
    """figures/NAME.FMT of the run's paper figures, or why there are none."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return {}, ("matplotlib is not installed here (virtbench's paper extra); "
                    "`virtbench figures RUN_ID -o DIR` draws them where it is")
    from ..figures import paper, save
    figs = paper.paper_figures(result, "single")
    if not figs:
        return {}, "the run has no results to draw"
    return {f"figures/{n}": data for n, data in save.rendered(figs, FIGURE_FORMATS, result)}, None


def artifact_files(dump: dict, result, name: str) -> dict[str, bytes]:
    """Every file of the artifact of the run `dump` holds (transfer.run_rows), its report
    `result` (analysis.analyze_run's): sealed with artifact.json and SHA256SUMS. `name`:
    the artifact's path, as the README's commands give it."""
    result = RunReport.of(result)
    run = dump["runs"][0]
    rows = sample_rows(dump)
    files = {RUN_ROWS: _json(dump), STUDY: _json(run["study"]),
             "samples.csv": samples_csv(rows), "samples.json": _json(rows),
             "fingerprints.json": _json(fingerprints(dump))}
    view = View(wide=True, width=width_for(False, True))
    for fmt, file in REPORT_FILES.items():
        text = formats.render(result, fmt, view if fmt == "table" else None)
        files[f"report/{file}"] = text.encode()
    figs, why = figure_files(result)
    files.update(figs)
    files["README.md"] = readme(dump["run"], run["study_name"], __version__,
                                sorted([*files, "README.md"]), why, name).encode()
    return sealed(files, {"virtbench": __version__, "run": dump["run"],
                          "study": run["study_name"], "store_revision": dump["revision"],
                          "report_schema_version": SCHEMA_VERSION,
                          "figures": why or "figures/"})


def opened(files: dict[str, bytes], where: str) -> tuple[dict, dict]:
    """An artifact's manifest and run rows, once every file matches SHA256SUMS, its format
    and report schema are this virtbench's, run.json holds the rows of the manifest's run
    and study.json is that run's study; else one line naming the artifact `where` was read
    (nothing is imported)."""
    try:
        return _opened(files)
    except TamperedArtifact as exc:
        raise TamperedArtifact(str(exc).replace("artifact:", f"artifact {where}:", 1)) \
            from None


def _opened(files: dict[str, bytes]) -> tuple[dict, dict]:
    facts = verified(files, SCHEMA_VERSION)
    dump = json_of(files, RUN_ROWS)
    try:
        run_id, rows = checked_dump(dump)
    except BadDump as exc:
        raise TamperedArtifact(f"artifact: {exc}") from None
    if facts.get("run") != run_id:
        raise TamperedArtifact(f"artifact: {MANIFEST} names run {facts.get('run')!r}, "
                               f"run.json holds run {run_id}; nothing was imported")
    if json_of(files, STUDY) != dump["runs"][0]["study"]:
        raise TamperedArtifact(f"artifact: {STUDY} is not run {run_id}'s stored study; "
                               "nothing was imported")
    return facts, dump
