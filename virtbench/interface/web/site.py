"""What the web view's pages are, apart from the run report, the comparison and the history
pages (the report's own renderers, report/formats/): the runs list with its filters, the
navigation, the error page, and the history read once per set of complete runs."""
from __future__ import annotations

import threading
from urllib.parse import quote, urlencode

from ...core.urls import scrub
from ...machinery.host import runproc
from ...foundations.model.history import HistoryReport
from ...foundations.store.sweeps import is_sweep, listed_study
from ...results.report.formats.history_html import Links
from ...results.report.formats.html import _page

FILTERS = (("study", "study_name"), ("host", "host"), ("status", "status"),
           ("series", "series"))
NAV = [("runs", "/runs"), ("series", "/series")]
RUNS_SHOWN = 500          # the runs list's length; a filter narrows it
PLOTLY_SRC = "/static/plotly.min.js"


def run_href(run_id: str) -> str:
    return "/runs/" + quote(run_id, safe="")


def links() -> Links:
    return Links(index="/series", series=lambda sid: "/series/" + quote(sid, safe=""),
                 run=run_href, plotly_src=PLOTLY_SRC, nav=NAV)


def with_nav(page: str) -> str:
    """A page rendered for a file (the run report, the comparison) as the web view serves
    it: its links at the top, and plotly.js from PLOTLY_SRC rather than inline (the same
    bundled copy, fetched once from this server)."""
    from ...results.report.formats.html import plotly_js
    bar = '<nav class="site">' + "".join(f'<a href="{h}">{t}</a>' for t, h in NAV) + "</nav>"
    inline = f'<script type="text/javascript">{plotly_js()}</script>'
    page = page.replace(inline, f'<script type="text/javascript" src="{PLOTLY_SRC}">'
                                '</script>', 1)
    return page.replace("<body>\n", "<body>\n" + bar + "\n", 1)


def runs_page(store, params: dict[str, str]) -> str:
    """The store's runs, latest first, filtered by study, host, status and named series;
    a form to compare two of them."""
    chosen = {name: (params.get(name) or None) for name, _ in FILTERS}
    found = store.list_runs(limit=RUNS_SHOWN, **{col: chosen[name] for name, col in FILTERS})
    facets = store.run_facets()
    filters = [{"name": name, "options": facets[col], "chosen": chosen[name]}
               for name, col in FILTERS]
    now = runproc.here()
    rows = [_run_row(r, runproc.shown_status(r, now)) for r in found]
    return _page("runs.html.j2", "virtbench runs", [], plotly_src="", nav=NAV,
                 store=store.shown, filters=filters, rows=rows,
                 shown=len(rows), limit=RUNS_SHOWN, run_ids=[r["id"] for r in found],
                 header=["id", "study", "status", "host", "series", "quick", "started",
                         "finished", "resume with"])


def _run_row(r: dict, status: str) -> list:
    """One run of the list; `status` as shown (a running run whose process is gone from
    this host is `interrupted`, host/runproc.py)."""
    return [{"text": r["id"], "cls": None, "href": run_href(r["id"])}, listed_study(r),
            {"text": status, "cls": {"complete": "pass", "running": "inconclusive"}
             .get(status, "fail")},
            r["host"] or "", r["series"] or "", "yes" if r["quick"] else "",
            f"{r['started']:%Y-%m-%d %H:%M:%S}" if r["started"] else "",   # damaged: none
            f"{r['finished']:%Y-%m-%d %H:%M:%S}" if r["finished"] else "",
            "" if is_sweep(r) else runproc.resume_hint(r["id"], status)]


def error_page(status: int, message: str, *urls: str | None) -> str:
    """An error as a page: its status and one line, any URL's password masked."""
    words = {400: "Bad request", 404: "Not found", 503: "The store is not answering",
             500: "Something went wrong"}.get(status, "Error")
    return _page("error.html.j2", f"virtbench · {status}", [], plotly_src="", nav=NAV,
                 status=status, words=words, message=scrub(message, *urls))


def compare_href(a: str, b: str) -> str:
    return "/compare?" + urlencode({"a": a, "b": b})


class HistoryCache:
    """The history of the store's complete runs, computed once per set of them (a new
    complete run makes the next request compute it again)."""

    def __init__(self, store, compute):
        self.store, self.compute = store, compute
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._report: HistoryReport | None = None

    def get(self) -> HistoryReport:
        key = tuple(r["id"] for r in self.store.complete_runs())
        with self._lock:
            if key != self._key or self._report is None:
                self._report = self.compute(self.store)
                self._key = key
            return self._report
