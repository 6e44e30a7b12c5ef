"""The web view's Starlette application over one store, opened read-only by the caller.

    /                  -> /runs
    /runs              the runs (filters: study, host, status, series)
    /runs/ID           the run's report (today's HTML report; ID may be a unique prefix)
    /compare?a=&b=     two runs compared (today's `compare`, as HTML; 400 without a or b)
    /series            the history's index: every series with its latest status
    /series/SID        one series: points, intervals, change points, the noise floor
    /static/plotly.min.js   plotly.js as the plotly package bundles it

Every page is read from the store when asked; nothing is written. A request short of what
it must give (/compare without a or b) is a 400 page saying what to give; an unknown run or
series, or any other bad input, is a 404 page naming it; a store that stops answering is a 503
page; anything else a 500 page with one line (and one line in the log). No page shows a
traceback or the store's password."""
from __future__ import annotations

import logging
from functools import lru_cache

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ...results import analysis, history, report
from ...core.errors import VirtbenchError
from ...core.urls import scrub
from ...results.report.formats import history_html
from ...foundations.store import StoreUnavailable
from . import site

log = logging.getLogger("virtbench.serve")
SERIES = history.HistoryRequest()       # /series: every series, at the method's defaults


@lru_cache(maxsize=1)
def _plotly() -> bytes:
    from ...results.report.formats.html import plotly_js
    return plotly_js().encode()


class Pages:
    """The web view's pages over one store: each a method from a request to HTML (or a
    Response); `endpoint` makes one an endpoint whose every error is a page."""

    def __init__(self, store):
        self.store = store
        self.cache = site.HistoryCache(store, lambda s: history.history(s, SERIES))
        self.links = site.links()

    def endpoint(self, build):
        """An endpoint from `build(request) -> str | Response`, every error a page."""
        def call(request: Request) -> Response:
            try:
                made = build(request)
                return made if isinstance(made, Response) else HTMLResponse(made)
            except StoreUnavailable as exc:
                return self.error(503, str(exc))
            except VirtbenchError as exc:
                return self.error(404, str(exc))
            except Exception as exc:        # noqa: BLE001 - a page, never a traceback
                line = scrub(f"{type(exc).__name__}: {exc}".splitlines()[0], self.store.url)
                log.error("virtbench serve: %s %s: %s", request.method, request.url.path,
                          line)
                return self.error(500, f"{request.url.path}: {line}")
        return call

    def error(self, status: int, message: str) -> HTMLResponse:
        return HTMLResponse(site.error_page(status, message, self.store.url),
                            status_code=status)

    def runs(self, request: Request):
        return site.runs_page(self.store, dict(request.query_params))

    def run(self, request: Request):
        run_id = self.store.resolve_run_id(request.path_params["run_id"])
        result = analysis.analyze_run(self.store, run_id)
        return site.with_nav(report.render(result, "html"))

    def compare(self, request: Request):
        a, b = request.query_params.get("a"), request.query_params.get("b")
        if not a or not b:          # a request short of what it must give: 400, not 404
            missing = " and ".join(k for k, v in (("a", a), ("b", b)) if not v)
            return self.error(400, f"compare: no run given as {missing}; give two runs, "
                                   "/compare?a=RUN_A&b=RUN_B (their ids are in /runs)")
        ra = analysis.analyze_run(self.store, self.store.resolve_run_id(a))
        rb = analysis.analyze_run(self.store, self.store.resolve_run_id(b))
        return site.with_nav(report.render_compare(analysis.compare_runs(ra, rb), "html"))

    def series_index(self, request: Request):
        return history_html.index_page(self.cache.get(), self.links)

    def series(self, request: Request):
        found = self.cache.get()
        s = history_html.find(found, request.path_params["sid"])
        if s is None:
            raise VirtbenchError(f"no series {request.path_params['sid']!r} in "
                                 f"{self.store.shown}; see /series")
        return history_html.series_page(found, s, self.links)

    def not_found(self, request: Request, exc):
        return self.error(getattr(exc, "status_code", 404),
                          f"no page at {request.url.path}; see /runs or /series")


def _plotly_response(request: Request) -> Response:
    return Response(_plotly(), media_type="text/javascript",
                    headers={"Cache-Control": "max-age=86400"})


def make_app(store) -> Starlette:
    """The application over `store` (a Store opened with read_only=True)."""
    pages = Pages(store)
    routes = [Route("/", lambda r: RedirectResponse("/runs", status_code=302)),
              Route("/runs", pages.endpoint(pages.runs)),
              Route("/runs/{run_id}", pages.endpoint(pages.run)),
              Route("/compare", pages.endpoint(pages.compare)),
              Route("/series", pages.endpoint(pages.series_index)),
              Route("/series/{sid}", pages.endpoint(pages.series)),
              Route("/static/plotly.min.js", _plotly_response)]
    return Starlette(routes=routes, exception_handlers={404: pages.not_found,
                                                       405: pages.not_found})
