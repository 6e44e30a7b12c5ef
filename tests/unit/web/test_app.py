"""`virtbench serve`'s pages through Starlette's TestClient, over stores built by hand
(historykit): every page answers 200, the filters filter, errors are 404 pages, no page
shows the store's password, and the store file is the same after every page was read."""
from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from historykit import stepped_store
from storekit import filled_run
from virtbench.core.urls import shown
from virtbench.foundations.store import Store
from virtbench.interface.web.app import make_app

PASSWORD = "s3cret-Pw0rd"
SECRET_URL = f"postgresql://vb:{PASSWORD}@db.example/virtbench"


@pytest.fixture
def served(tmp_path):
    """A store of 9 runs (a step at the 7th, series nightly) plus a run of another study
    and host, opened read-only; (client, store, path)."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    store = stepped_store(url, series="nightly")
    filled_run(store, {"native": {}, "box": {}},
               {"native": {"triad": [100, 101, 99]}, "box": {"triad": [90, 91, 89]}},
               host="otherhost", study_extra={"name": "other"})
    store.engine.dispose()
    ro = Store(url, read_only=True)
    return TestClient(make_app(ro)), ro, path


def pages_of(client, store) -> dict[str, object]:
    """Every page the view has, with the store's own ids."""
    runs = store.list_runs(limit=None)
    ids = [r["id"] for r in runs]
    index = client.get("/series")
    series = sorted(set(re.findall(r'href="(/series/[0-9a-f]{12})"', index.text)))
    paths = ["/", "/runs", "/runs?status=complete", "/runs?host=otherhost",
             "/runs?series=nightly", "/runs?study=t", "/series", *series,
             f"/runs/{ids[0]}", f"/runs/{ids[-1][:-1]}", f"/compare?a={ids[2]}&b={ids[1]}"]
    return {p: client.get(p) for p in paths}


def test_every_page_answers_200_with_its_content(served):
    client, store, _ = served
    got = pages_of(client, store)
    assert {p: r.status_code for p, r in got.items()} == {p: 200 for p in got}
    series = [p for p in got if p.startswith("/series/")]
    assert len(series) == 6    # per host: native and box values, the box / native ratio
    ratio = next(got[p].text for p in series
                 if "box / native @ testhost" in got[p].text and "(ratio)" in got[p].text)
    assert "confirmed 20." in ratio and "cpus default → 0.5" in ratio
    assert '"type":"log"' in ratio and 'src="/static/plotly.min.js"' in ratio
    run = got[f"/runs/{store.list_runs()[0]['id']}"].text
    assert "virtbench run" in run and '<nav class="site">' in run
    assert 'src="/static/plotly.min.js"' in run and len(run) < 500_000   # plotly not inline
    assert "virtbench compare" in got[next(p for p in got if p.startswith("/compare"))].text
    js = client.get("/static/plotly.min.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert "plotly" in js.text[:2000].lower()


def _run_ids(page: str) -> set[str]:
    return set(re.findall(r'<a href="/runs/([^"]+)">', page))


def test_the_runs_filters_filter(served):
    client, store, _ = served
    every = _run_ids(client.get("/runs").text)
    assert every == {r["id"] for r in store.list_runs(limit=None)} and len(every) == 10
    other = _run_ids(client.get("/runs?host=otherhost").text)
    tagged = _run_ids(client.get("/runs?series=nightly").text)
    assert len(other) == 1 and len(tagged) == 9 and other.isdisjoint(tagged)
    assert _run_ids(client.get("/runs?study=other").text) == other
    assert _run_ids(client.get("/runs?status=interrupted").text) == set()
    assert _run_ids(client.get("/runs?status=complete&host=testhost").text) == tagged
    page = client.get("/runs?host=otherhost").text
    assert '<option value="otherhost" selected>' in page


@pytest.mark.parametrize("path, words", [
    ("/runs/nosuchrun", "no run &#x27;nosuchrun&#x27;"),
    ("/series/0123456789ab", "no series &#x27;0123456789ab&#x27;"),
    ("/compare?a=nosuchrun&b=nosuchrun", "no run &#x27;nosuchrun&#x27;"),
    ("/nowhere", "no page at /nowhere"),
])
def test_errors_are_404_pages_never_tracebacks(served, path, words):
    client, _, _ = served
    r = client.get(path)
    assert r.status_code == 404 and "404 · Not found" in r.text and words in r.text
    assert "Traceback" not in r.text and "File \"" not in r.text


@pytest.mark.parametrize("query, missing", [("", "a and b"), ("?a=x", "b"), ("?b=x", "a"),
                                            ("?a=&b=y", "a")])
def test_compare_without_two_runs_is_a_400_saying_what_to_give(served, query, missing):
    client, _, _ = served
    r = client.get(f"/compare{query}")
    assert r.status_code == 400 and "400 · Bad request" in r.text
    line = re.search(r'<p class="error">(.*)</p>', r.text)[1]
    assert line == (f"compare: no run given as {missing}; give two runs, "
                    "/compare?a=RUN_A&amp;b=RUN_B (their ids are in /runs)")


def test_an_ambiguous_prefix_is_a_404_naming_the_candidates(served):
    client, store, _ = served
    prefix = store.list_runs()[0]["id"][:8]          # the day: every run shares it
    r = client.get(f"/runs/{prefix}")
    assert r.status_code == 404 and "is ambiguous" in r.text


def test_no_page_shows_the_password_of_a_store_url_with_one(served, caplog):
    client, store, _ = served
    store.url, store.shown = SECRET_URL, shown(SECRET_URL)
    got = pages_of(client, store)
    assert all(r.status_code == 200 for r in got.values())
    assert "vb:***@db.example" in got["/runs"].text
    assert "vb:***@db.example" in got["/series"].text
    for path, r in got.items():
        assert PASSWORD not in r.text, path
    assert PASSWORD not in client.get("/runs/nosuchrun").text

    def broken(*a, **k):          # an error whose message carries the whole URL
        raise RuntimeError(f"could not connect to {SECRET_URL} (password {PASSWORD})")
    store.list_runs = broken
    with caplog.at_level(logging.ERROR, logger="virtbench.serve"):
        r = client.get("/runs")
    assert r.status_code == 500 and "RuntimeError: could not connect to" in r.text
    assert PASSWORD not in r.text and "Traceback" not in r.text
    assert caplog.records and all(PASSWORD not in rec.getMessage() for rec in caplog.records)


def test_the_store_is_read_only(served):
    client, store, path = served
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    runs = store.list_runs(limit=None)
    for _ in range(2):
        pages_of(client, store)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert store.list_runs(limit=None) == runs


def test_an_empty_store_serves_its_runs_page_and_says_it_has_no_series(tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    Store(url).engine.dispose()
    client = TestClient(make_app(Store(url, read_only=True)))
    assert client.get("/runs").status_code == 200
    r = client.get("/series")
    assert r.status_code == 404 and "no complete run in" in r.text


def test_the_history_is_read_again_when_a_run_completes(served, tmp_path):
    client, store, path = served
    first = client.get("/series").text
    assert "history of 10 run(s)" in first
    filled_run(Store(f"sqlite:///{path}"), {"native": {}, "box": {}},
               {"native": {"triad": [100, 101, 99]}, "box": {"triad": [90, 91, 89]}})
    assert "history of 11 run(s)" in client.get("/series").text
