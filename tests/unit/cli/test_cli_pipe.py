"""`virtbench report | head -1`: a reader that closes the pipe early ends virtbench quietly
with status 0, as other Unix tools do (no traceback, nothing on stderr). Real pipes, real
processes, and output larger than a pipe holds, so that the write does meet the closed end."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from storekit import around, filled_run
from virtbench.foundations.store import Store

REPO = Path(__file__).resolve().parents[3]
PIPE_CAPACITY = 64 * 1024       # Linux's default pipe buffer


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipe") / "store.db"
    store = Store(f"sqlite:///{path}")
    metrics = {f"metric_{i:03d}": around(100.0 + i, n=6) for i in range(240)}     # > 64 KiB in the compact table too
    filled_run(store, {"native": {}, "qemu": {}},
               {"native": metrics, "qemu": {m: [v * 0.9 for v in vs]
                                             for m, vs in metrics.items()}})
    store.engine.dispose()
    return f"sqlite:///{path}"


def virtbench(*args, store):
    env = dict(os.environ, VIRTBENCH_STORE=store, COLUMNS="100")
    return subprocess.Popen([sys.executable, "-m", "virtbench.interface.cli.commands", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env,
                            bufsize=0)


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_closed_pipe_ends_quietly_with_status_0(big_store, fmt):
    whole = subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", "report",
                            "--format", fmt], capture_output=True, cwd=REPO,
                           env=dict(os.environ, VIRTBENCH_STORE=big_store))
    assert whole.returncode == 0
    assert len(whole.stdout) > PIPE_CAPACITY      # more than the pipe holds: the write fails
    proc = virtbench("report", "--format", fmt, store=big_store)
    first = os.read(proc.stdout.fileno(), 100)    # no read-ahead: the rest stays unread
    proc.stdout.close()                           # `head -1` exits
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert first and err == b""


def test_head_in_a_shell_pipeline(big_store):
    """The very command of the issue, through the shell; PIPESTATUS is virtbench's status."""
    out = subprocess.run(["bash", "-c", f"{sys.executable} -m virtbench.interface.cli.commands report "
                          "--format json | head -1; echo \"status ${PIPESTATUS[0]}\" >&2"],
                         capture_output=True, text=True, cwd=REPO,
                         env=dict(os.environ, VIRTBENCH_STORE=big_store))
    assert out.stdout == "{\n"
    assert out.stderr == "status 0\n"
