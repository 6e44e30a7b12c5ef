"""host/pathwalk.py and host/writes.py: the one check of every path virtbench writes as root
(the store's SQLite file, -o files) and the atomic write. Shared directories are made with
mode bits (no root needed): a directory of ours with mode 1777 or 0775 is one that other
users can write. The same cases as the real user `nobody` are in
tests/live/host/test_written_paths_live.py."""
from __future__ import annotations

import hashlib
import os
import stat

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.host import pathwalk, writes


def _st(mode: int, uid: int = 0) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


def sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def shared_dir(parent, name="shared", mode=0o1777):
    d = parent / name
    d.mkdir()
    os.chmod(d, mode)
    return d


# -- the pure rules ------------------------------------------------------------------------
def test_others_write_names_another_owner_and_any_write_bit_sticky_or_not():
    assert pathwalk.others_write(_st(stat.S_IFDIR | 0o755), uid=1000) is None
    assert pathwalk.others_write(_st(stat.S_IFDIR | 0o700, 1000), uid=1000) is None
    assert pathwalk.others_write(_st(stat.S_IFDIR | 0o755, 65534), uid=0) == \
        "is owned by uid 65534"
    assert pathwalk.others_write(_st(stat.S_IFDIR | 0o1777), uid=0) == \
        "can be written by other users (mode 1777)"
    assert pathwalk.others_write(_st(stat.S_IFDIR | 0o775), uid=0) == \
        "can be written by other users (mode 0775)"


def test_content_problem_knows_a_database_and_a_write_ahead_log():
    assert writes.content_problem(b"SQLite format 3\x00\x10\x00") == "is a SQLite database"
    assert writes.content_problem(b"\x37\x7f\x06\x82\x00\x2d\xe2\x18") == \
        "is a SQLite write-ahead log"
    assert writes.content_problem(b'{"run": {}}') is None
    assert writes.content_problem(b"") is None
    assert writes.content_problem(b"SQLite format 2") is None


# -- the walk --------------------------------------------------------------------------------
def test_a_link_in_a_directory_only_we_can_write_is_followed(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("x")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "l").symlink_to("../real/f")
    with pathwalk.walk(tmp_path / "a" / "l") as r:
        assert r.path == tmp_path / "real" / "f" and r.leaf is not None
        assert [d for d, _ in r.chain][-1] == tmp_path / "real"
    with pathwalk.walk(tmp_path / "a" / "l", follow_leaf=False) as r:
        assert r.path == tmp_path / "a" / "l" and stat.S_ISLNK(r.leaf.st_mode)


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o775, 0o730])
def test_a_link_where_others_can_write_is_refused_last_or_on_the_way(tmp_path, mode):
    d = shared_dir(tmp_path, mode=mode)
    (tmp_path / "victim").write_text("root's")
    (d / "s.db").symlink_to(tmp_path / "victim")
    (d / "dir").symlink_to(tmp_path)
    with pytest.raises(pathwalk.PathRefused, match=rf"{d}/s.db is a symbolic link in {d}, "
                       rf"which can be written by other users \(mode {mode:04o}\)"):
        with pathwalk.walk(d / "s.db"):
            pass
    with pytest.raises(pathwalk.PathRefused, match=rf"{d}/dir is a symbolic link"):
        with pathwalk.walk(d / "dir" / "victim"):
            pass
    with pathwalk.walk(d / "s.db", follow_leaf=False) as r:      # the link itself: not followed
        assert r.path == d / "s.db"


def test_missing_names_are_what_is_left_and_a_loop_is_refused(tmp_path):
    with pathwalk.walk(tmp_path / "x" / "y" / "s.db") as r:
        assert r.where == tmp_path and r.rest == ("x", "y", "s.db") and r.leaf is None
    (tmp_path / "l1").symlink_to("l2")
    (tmp_path / "l2").symlink_to("l1")
    with pytest.raises(pathwalk.PathRefused, match="more than 40 symbolic links"):
        with pathwalk.walk(tmp_path / "l1"):
            pass
    (tmp_path / "f").write_text("")
    with pytest.raises(pathwalk.PathRefused, match="f is not a directory"):
        with pathwalk.walk(tmp_path / "f" / "g"):
            pass


def test_a_relative_path_walks_from_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    with pathwalk.walk("d/../d/./new.json") as r:
        assert r.where == tmp_path / "d" and r.rest == ("new.json",)
    for whole in ("d/..", "/"):
        with pytest.raises(pathwalk.PathRefused, match="is a directory"):
            with pathwalk.walk(whole):
                pass
    with pytest.raises(VirtbenchError, match=r"^-o / is a directory; give the path of a file$"):
        writes.write_output("/", "report")


# -- the store -------------------------------------------------------------------------------
def test_a_store_in_a_private_directory_passes_and_postgres_has_no_file(tmp_path):
    (tmp_path / "s.db").write_bytes(b"")
    os.chmod(tmp_path / "s.db", 0o644)
    assert writes.check_store(f"sqlite:///{tmp_path / 's.db'}") == tmp_path / "s.db"
    assert writes.check_store(str(tmp_path / "s.db")) == tmp_path / "s.db"
    assert writes.check_store("postgresql://u:pw@db.example/vb") is None
    assert writes.check_store("sqlite://") is None                # in memory


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o775])
def test_a_store_in_a_directory_others_can_write_is_refused_even_before_it_exists(tmp_path,
                                                                                  mode):
    d = shared_dir(tmp_path, mode=mode)
    for url in (f"sqlite:///{d / 's.db'}", str(d / "s.db")):
        with pytest.raises(VirtbenchError, match=rf"store {d}/s.db: its directory {d} can be "
                           rf"written by other users \(mode {mode:04o}\), and SQLite makes "
                           r"s.db-wal, s.db-shm and s.db-journal there"):
            writes.check_store(url, create=True)
    assert list(d.iterdir()) == []


def test_a_planted_link_is_refused_also_when_given_as_a_bare_path(tmp_path):
    """A bare path is what normalize_url resolves (following links): the check sees the
    path as given."""
    d = shared_dir(tmp_path)
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    (d / "s.db").symlink_to(victim)
    for url in (str(d / "s.db"), f"sqlite:///{d / 's.db'}"):
        with pytest.raises(VirtbenchError, match=rf"^store {d}/s.db is a symbolic link in "
                           rf"{d}, which can be written by other users \(mode 1777\); keep"):
            writes.check_store(url, create=True)
    assert victim.read_bytes() == b""


def test_a_store_file_or_a_file_beside_it_others_can_write_is_refused(tmp_path):
    store = tmp_path / "s.db"
    store.write_bytes(b"")
    os.chmod(store, 0o666)
    with pytest.raises(VirtbenchError, match=r"store .*/s.db is writable by other users "
                                             r"\(mode 0666\); keep the store"):
        writes.check_store(str(store))
    os.chmod(store, 0o644)
    (tmp_path / "s.db-wal").symlink_to("/etc/passwd")
    with pytest.raises(VirtbenchError, match=r"store .*/s.db: its s.db-wal is a symbolic link"):
        writes.check_store(str(store))


def test_an_ancestor_others_can_rename_in_is_refused(tmp_path):
    top = shared_dir(tmp_path, mode=0o777)          # no sticky bit
    (top / "d").mkdir()
    with pytest.raises(VirtbenchError, match=rf"its directory {top} is writable by other users "
                                             "without the sticky bit"):
        writes.check_store(str(top / "d" / "s.db"))
    sticky = shared_dir(tmp_path, "sticky", 0o1777)   # sticky: what is root's stays root's
    (sticky / "d").mkdir()
    assert writes.check_store(str(sticky / "d" / "s.db")) == sticky / "d" / "s.db"


def test_missing_directories_are_made_0755_only_by_a_writing_command(tmp_path):
    store = tmp_path / "a" / "b" / "s.db"
    assert writes.check_store(str(store)) == store and not (tmp_path / "a").exists()
    old = os.umask(0o002)            # a umask that would leave them group-writable
    try:
        assert writes.check_store(str(store), create=True) == store
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(tmp_path / "a" / "b").st_mode) == 0o755
    assert not store.exists()
    new_in_sticky = shared_dir(tmp_path, "tmp", 0o1777) / "mine" / "s.db"
    assert writes.check_store(str(new_in_sticky), create=True) == new_in_sticky


# -- -o files --------------------------------------------------------------------------------
def test_a_new_file_is_written_with_the_umask_and_an_old_one_replaced_keeping_its_mode(tmp_path):
    new = tmp_path / "r.json"
    assert writes.write_output(new, "{}\n") is False
    assert new.read_text() == "{}\n"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~mask
    os.chmod(new, 0o600)
    assert writes.write_output(new, ["a", b"b", "c"]) is True
    assert new.read_text() == "abc" and stat.S_IMODE(new.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_link_in_a_private_directory_is_written_through_and_kept(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "latest.json").symlink_to("reports/2026.json")
    assert writes.write_output(tmp_path / "latest.json", "x") is False
    assert (tmp_path / "latest.json").is_symlink()
    assert (tmp_path / "reports" / "2026.json").read_text() == "x"


def test_output_refusals_are_one_line_and_write_nothing(tmp_path):
    store = tmp_path / "S.db"
    store.write_bytes(writes.SQLITE_HEADER + b"\0" * 100)
    url = f"sqlite:///{store}"
    (tmp_path / "link.db").symlink_to("S.db")
    os.link(store, tmp_path / "hard.db")
    (tmp_path / "other.db").write_bytes(writes.SQLITE_HEADER + b"other")
    (tmp_path / "other.db-wal").write_bytes(b"\x37\x7f\x06\x83" + b"\0" * 28)
    (tmp_path / "S.db-wal").write_bytes(b"")
    (tmp_path / "open.json").write_text("{}")
    os.chmod(tmp_path / "open.json", 0o646)
    d = shared_dir(tmp_path)
    (d / "out.json").symlink_to(tmp_path / "open.json")
    cases = {"S.db": "is the store this command uses",
             "link.db": "is the store this command uses",
             "hard.db": "is the store this command uses",
             "S.db-wal": "is the store this command uses",
             "other.db": "is a SQLite database",
             "other.db-wal": "is a SQLite write-ahead log",
             "open.json": "is writable by other users (mode 0646)",
             "shared/out.json": "is a symbolic link in",
             "none/out.json": "its directory",
             "shared": "is not a regular file"}
    before = {p: sha(p) for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink()}
    for name, words in cases.items():
        with pytest.raises(VirtbenchError) as exc:
            writes.write_output(tmp_path / name, "report", url)
        assert words in str(exc.value) and "\n" not in str(exc.value), name
        with pytest.raises(VirtbenchError):
            writes.check_output(tmp_path / name, url)
    assert {p: sha(p) for p in before} == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_write_that_fails_midway_leaves_the_old_file_whole_and_no_temporary(tmp_path,
                                                                           monkeypatch):
    out = tmp_path / "r.json"
    out.write_text("old report")

    def chunks():
        yield "new "
        raise RuntimeError("renderer failed")
    with pytest.raises(RuntimeError):
        writes.write_output(out, chunks())
    assert out.read_text() == "old report" and os.listdir(tmp_path) == ["r.json"]

    def no_rename(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(writes.os, "replace", no_rename)
    with pytest.raises(VirtbenchError, match=r"-o .*r.json: cannot write it \(No space left"):
        writes.write_output(out, "new report")
    assert out.read_text() == "old report" and os.listdir(tmp_path) == ["r.json"]


def test_a_name_swapped_for_a_link_after_the_check_is_replaced_not_written_through(tmp_path,
                                                                                   monkeypatch):
    """What another user could do in a sticky directory between the check and the write: the
    rename replaces the link, the file it names is untouched."""
    d = shared_dir(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("root's")
    real_open = os.open

    def swap_first(path, flags, mode=0o777, *, dir_fd=None):
        if str(path).startswith(".out.json.") and not os.path.lexists(d / "out.json"):
            (d / "out.json").symlink_to(victim)
        return real_open(path, flags, mode, dir_fd=dir_fd)
    monkeypatch.setattr(writes.os, "open", swap_first)
    assert writes.write_output(d / "out.json", "report") is False
    assert victim.read_text() == "root's" and (d / "out.json").read_text() == "report"
    assert not (d / "out.json").is_symlink()


def test_a_directory_that_cannot_be_made_is_one_line(tmp_path, monkeypatch):
    def refused_mkdir(*a, **k):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(writes.os, "mkdir", refused_mkdir)
    with pytest.raises(VirtbenchError, match=r"^store .*/a/s.db: cannot make its directory a "
                                             r"\(Permission denied\); give a path you can write"):
        writes.check_store(str(tmp_path / "a" / "s.db"), create=True)
