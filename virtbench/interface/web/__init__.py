"""The web view over a store (`virtbench serve`) and the history's pages as static files
(`virtbench history --format html -o DIR`): read-only, the same renderers as the reports.

site    what the pages are: the runs list and its filters, the links between pages, the
        error page, the history read once per set of runs (pure but for the store's reads)
app     the Starlette application: one route per page, every error a page (404, 503, 500),
        never a traceback, the store's password never shown
serve   `virtbench serve`: the socket bound (127.0.0.1 by default), uvicorn, Ctrl-C
static  `history --format html -o DIR`: the pages written into a directory virtbench makes
"""
