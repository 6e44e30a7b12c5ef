"""`virtbench serve` for real: the command started on a free loopback port over a store of
repeated runs (historykit), every page loaded in headless Chromium (nothing may be fetched
from elsewhere: every other host name fails to resolve): each page loads, its charts draw
(a plotly div with an SVG and data), the browser logs nothing to its console; Ctrl-C stops
the server (exit 0). Screenshots of the runs and series pages go to artifacts/ (the docs'
are these: docs/history.md, "The web view")."""
from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from historykit import stepped_store

REPO = Path(__file__).resolve().parents[3]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = REPO / "artifacts"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(scripts/setup.sh --all installs it)")


def chromium(url: str, *extra: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="vb-chromium-") as profile:
        return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                               "--no-first-run", "--disable-background-networking",
                               "--disable-component-update", "--disable-sync",
                               "--hide-scrollbars", f"--user-data-dir={profile}",
                               "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                               "--enable-logging=stderr", "--v=0",
                               "--virtual-time-budget=8000", *extra, url],
                              capture_output=True, text=True, timeout=60)


def console_lines(stderr: str) -> list[str]:
    """What the page said on the console (errors, failed loads, anything at all)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def drawn_charts(dom: str) -> list[str]:
    """The chart divs plotly drew into: each must carry plotly's class and an SVG."""
    out = []
    for m in re.finditer(r'<div class="chart[^"]*"[^>]*id="(chart-\d+)"', dom):
        tail = dom[m.start():m.start() + 200_000]
        if "js-plotly-plot" in tail[:400] and 'class="main-svg"' in tail:
            out.append(m.group(1))
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    where = tmp_path_factory.mktemp("serve") / "store.db"
    stepped_store(f"sqlite:///{where}", series="nightly").engine.dispose()
    proc = subprocess.Popen([sys.executable, "-m", "virtbench", "serve", "--store",
                             f"sqlite:///{where}", "--port", "0"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
    assert found, f"no address in {line!r}"
    yield found.group(1), proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_every_page_loads_draws_and_logs_nothing(server):
    base, _ = server
    start = time.monotonic()
    index = urllib.request.urlopen(base + "series").read().decode()
    runs = urllib.request.urlopen(base + "runs").read().decode()
    series = sorted(set(re.findall(r'href="/(series/[0-9a-f]{12})"', index)))
    ids = re.findall(r'<a href="/runs/([^"]+)">', runs)
    assert len(series) == 3 and len(ids) == 9
    pages = {"runs": 0, "series": 0, **{s: 1 for s in series}, f"runs/{ids[0]}": 1,
             f"compare?a={ids[1]}&b={ids[0]}": 1}
    for path, charts in pages.items():
        seen = chromium(base + path, "--dump-dom")
        dom = seen.stdout
        assert "<h1>" in dom and "404" not in dom.split("<h1>")[1][:10], path
        assert console_lines(seen.stderr) == [], (path, console_lines(seen.stderr))
        drawn = drawn_charts(dom)
        assert len(drawn) >= charts, (path, drawn)
        if path.startswith("series/"):
            assert re.search(r'class="[^"]*\bpoint\b', dom), path          # markers drawn
    ARTIFACTS.mkdir(exist_ok=True)
    ratio = next(s for s in series
                 if "(ratio)" in urllib.request.urlopen(base + s).read().decode())
    for path, name in ((ratio, "serve-series.png"), ("runs", "serve-runs.png")):
        chromium(base + path, "--window-size=1280,1000", f"--screenshot={ARTIFACTS / name}")
        assert (ARTIFACTS / name).stat().st_size > 10_000
    assert time.monotonic() - start < 60


def test_ctrl_c_stops_it_cleanly(server):
    base, proc = server
    assert urllib.request.urlopen(base + "runs").status == 200
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=15) == 0
    err = proc.stderr.read()
    assert "Traceback" not in err and "virtbench serve: stopped" in err
