"""`virtbench serve` stopped by SIGTERM (what systemd and `kill` send), as a real process:
one line, exit 0 (it used to die of the signal: exit 143, nothing said)."""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from virtbench.foundations.store import Store

REPO = Path(__file__).resolve().parents[3]


def test_sigterm_stops_serve_in_one_line_and_exit_0(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store(url).engine.dispose()
    proc = subprocess.Popen([sys.executable, "-m", "virtbench", "serve", "--store", url,
                             "--port", "0"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert found, f"no address in {line!r}"
        assert urllib.request.urlopen(found.group(1) + "runs", timeout=10).status == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        assert proc.stderr.read().splitlines() == ["virtbench serve: stopped (SIGTERM)"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
