"""image/qemu_fetch.py's pure parts, on real outputs captured here (tests/fixtures/qemu_version/):
suite names, the private apt configuration, what to download, ldd's and apt's complaints."""
from pathlib import Path

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.image import qemu_fetch as qf

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "qemu_version"


@pytest.mark.parametrize("suite", ["bookworm-backports", "trixie", "sid", "bookworm"])
def test_suite_names(suite):
    assert qf.check_suite(suite) == suite


@pytest.mark.parametrize("suite", ["", "Bad_Suite", "../etc", "trixie main", "-x", "a/b"])
def test_bad_suite_names_are_one_line_exit_2(suite):
    with pytest.raises(qf.BadSuite) as exc:
        qf.check_suite(suite)
    assert exc.value.exit_code == 2 and "\n" not in str(exc.value)


def test_backports_bring_their_base_suite():
    assert qf.sources("bookworm-backports") == (
        "deb http://deb.debian.org/debian bookworm-backports main\n"
        "deb http://deb.debian.org/debian bookworm main\n")
    assert qf.sources("trixie", "file:///r", trusted=True) == \
        "deb [trusted=yes] file:///r trixie main\n"


def test_apt_options_point_everything_at_the_private_state():
    opts = qf.apt_options(Path("/c/x/apt"))
    pairs = dict(o.split("=", 1) for o in opts[1::2])
    assert opts[0::2] == ["-o"] * len(pairs)
    assert pairs["Dir::Etc::sourcelist"] == "/c/x/apt/sources.list"
    assert pairs["Dir::Etc::sourceparts"] == "-"
    assert pairs["Dir::State::Lists"] == "/c/x/apt/lists"
    assert pairs["Dir::State::status"] == "/c/x/apt/status"
    assert pairs["Dir::Cache::archives"] == "/c/x/apt/archives"
    # nothing of the system's apt state or caches is named
    assert not [v for v in pairs.values() if v.startswith(("/etc/apt", "/var/lib/apt",
                                                           "/var/cache/apt"))]


def test_wanted_packages_from_real_depends():
    text = (FIX / "apt-cache-show-qemu-system-x86-bookworm-backports.txt").read_text()
    assert qf.control_field(text, "Version") == "1:10.0.2+ds-2+deb13u1~bpo12+1"
    depends = qf.control_field(text, "Depends")
    names = qf.depends_names(depends)
    assert "libc6" in names and "qemu-system-common" in names and "seabios" in names
    assert qf.wanted_packages(depends) == ["qemu-system-x86", "qemu-system-common",
                                           "qemu-system-data", "seabios", "ipxe-qemu"]


def test_depends_alternatives_and_arch_qualifiers():
    assert qf.depends_names("a (>= 1) | b, c:any, d") == ["a", "c", "d"]


def test_missing_libraries_from_real_ldd():
    assert qf.missing_libraries((FIX / "ldd-missing.txt").read_text()) == ["libvbfake.so.1"]
    trixie = qf.missing_libraries((FIX / "ldd-trixie-10.0.x-on-bookworm.txt").read_text())
    assert trixie == ["libcapstone.so.5", "libfuse3.so.4", "libaio.so.1t64",
                      "libc.so.6 (GLIBC_2.38)"]


def test_nothing_missing_in_a_working_ldd():
    assert qf.missing_libraries("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f)\n") == []


def test_apt_says_no_such_suite():
    text = (FIX / "apt-update-nosuchsuite.txt").read_text()
    err = qf.apt_failure("nosuchsuite", qf.MIRROR, text)
    assert isinstance(err, qf.BadSuite) and err.exit_code == 2
    assert str(err).startswith("qemu fetch: http://deb.debian.org/debian has no suite nosuchsuite")


def test_an_unsigned_local_mirror_says_no_such_suite():
    text = (FIX / "apt-update-nosuchsuite-file.txt").read_text()
    err = qf.apt_failure("nosuchsuite", "file:///r", text)
    assert isinstance(err, qf.BadSuite) and "file:///r has no suite nosuchsuite" in str(err)


def test_other_apt_errors_are_its_first_error_line():
    err = qf.apt_failure("trixie", qf.MIRROR, "Reading...\nE: Could not get lock /x/lock\nE: more")
    assert type(err) is VirtbenchError and str(err).endswith("E: Could not get lock /x/lock")


@pytest.mark.parametrize("given,suite", [("fetched:bookworm-backports", "bookworm-backports"),
                                         ("fetched:trixie", "trixie"),
                                         ("/usr/bin/qemu-system-x86_64", None), ("", None)])
def test_fetched_suite(given, suite):
    assert qf.fetched_suite(given) == suite


def test_fetched_suite_refuses_what_is_no_suite():
    with pytest.raises(qf.BadSuite, match="'a/b' is not a Debian suite name"):
        qf.fetched_suite("fetched:a/b")
