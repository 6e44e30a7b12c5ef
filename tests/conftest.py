import os
import signal
import sys
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# the tests' harness (fakes, servers, guests): importable by name from every tier
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))


def pytest_configure(config):
    # The suite sends SIGINT to the virtbench processes it starts (Ctrl-C tests). Started from
    # a shell without job control (`cmd &` in a script, nohup), pytest inherits SIGINT
    # ignored, and so would every child: those tests would then test nothing. A handler
    # here makes the children start with SIGINT at its default again.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # The terminal's size is not the tests' to inherit: xdist's workers start with COLUMNS=80
    # and LINES=24, a shell may export others. Output goes to a pipe, whose width virtbench
    # takes from COLUMNS, else 100; a test that wants a width sets COLUMNS itself.
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run heavy tests (full-size kernels, many guest boots)")
    parser.addoption("--run-nested", action="store_true", default=False,
                     help="also run the nested tests: KVM for real inside a TCG guest with "
                          "AMD-V (tests/nested, about 10 minutes; builds the host image)")


def pytest_runtest_setup(item):
    # what the live tiers need built, built while the tiers before them run (tests/support),
    # from the first live test on, in the process that runs them
    if tier_rank(Path(item.path)) != 0:
        import prebuild
        prebuild.start(item.config, item.session.items)


def pytest_unconfigure(config):
    import prebuild
    prebuild.stop()


# The order the tiers run in: those that need nothing built first, while the builds the later
# ones need go on in the background (tests/support/prebuild.py); within a tier, as collected.
# The live tiers are one unit of xdist's work (pytest_xdist_make_scheduler): one worker runs
# them one after the other, in this order, while the others run the unit tier beside them.
TIER_ORDER = ("unit", "services", "host", "guests", "nested")


def tier_rank(path: Path) -> int:
    parts = path.relative_to(REPO / "tests").parts if path.is_relative_to(REPO / "tests") else ()
    name = parts[1] if parts[:1] == ("live",) and len(parts) > 2 else parts[0] if parts else ""
    return TIER_ORDER.index(name) if name in TIER_ORDER else len(TIER_ORDER)


class LiveTogether(LoadScopeScheduling):
    """xdist's scheduling by scope, the scope of a live test being "live" and of a unit test
    the test itself: the live tests go to one worker together, first (the largest scope), and
    never beside each other (guests, servers and namespaces); the unit tests to whichever
    worker is free. (xdist's own loadgroup renames node ids, which pytest 9 ignores.)"""

    def _split_scope(self, nodeid: str) -> str:
        return "live" if nodeid.startswith("tests/live/") else nodeid


def pytest_xdist_make_scheduler(config, log):
    return LiveTogether(config, log)


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: tier_rank(Path(item.path)))    # stable: collection order within
    skips = []
    if not config.getoption("--run-slow"):
        skips.append(("slow", pytest.mark.skip(reason="heavy: run with --run-slow")))
    if not config.getoption("--run-nested"):
        skips.append(("nested", pytest.mark.skip(reason="nested KVM: run with --run-nested")))
    for item in items:
        for keyword, skip in skips:
            if keyword in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def guest_image():
    """virtbench's guest image, built once (a few minutes on a fresh machine, then cached) for
    every test that boots a guest; skips where it cannot be built at all (not root,
    mmdebstrap missing)."""
    from virtbench.core.errors import VirtbenchError
    from virtbench.machinery.image import guest_image as image
    import prebuild
    said = prebuild.wait("guest image")
    if said:
        print(said, flush=True)
    try:
        return image.build()
    except VirtbenchError as exc:
        pytest.skip(f"guest image not buildable here: {exc}")


@pytest.fixture
def fixture_text():
    def read(*parts: str) -> str:
        return FIXTURES.joinpath(*parts).read_text()
    return read


@pytest.fixture
def store_url(tmp_path, monkeypatch):
    """A fresh SQLite store per test, also set as $VIRTBENCH_STORE for subprocesses."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv("VIRTBENCH_STORE", url)
    return url


@pytest.fixture
def loopback_sshd(tmp_path):
    """A private sshd on 127.0.0.1 at a free port, standing for a machine virtbench did not
    start; yields (server, known_hosts path). Needs root (sshd's privilege separation)."""
    import os
    import socket

    if os.geteuid() != 0:
        pytest.skip("a private sshd needs root")
    from virtbench.machinery.host.net.sshd import Sshd
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Sshd("127.0.0.1", [], port=port)
    known = tmp_path / "known_hosts"
    known.write_text(server.known_hosts_line())
    yield server, known
    server.stop()


# fixtures of tests/support shared by the tiers: a real PostgreSQL for the store tests (session
# server, a fresh database per test), our kernels built once, a filled store for the reports
from kernelfix import kernel_bin_dir, run_kernel  # noqa: E402,F401
from pgserver import pg_server, pg_url  # noqa: E402,F401
from reportfix import artifacts_dir, filled  # noqa: E402,F401
