"""What the commands write as root, end to end (host/writes.py): -o never replaces the store
(by its path, a symbolic link, a hard link) nor any SQLite database; another file there is
replaced atomically and the command says so; a store or an -o path through a link planted
where others can write is one line, exit 2, nothing written. Shared directories are made
with mode bits; the same as the real user `nobody`: tests/live/host/test_written_paths_live.py."""
from __future__ import annotations

import hashlib
import json
import os

import pytest

from clikit import refused, run_cli
from historykit import stepped_store
from virtbench.machinery.host import writes


def sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture
def store(tmp_path):
    """A store of 9 runs at tmp_path/S.db, closed; (its URL, its run ids)."""
    url = f"sqlite:///{tmp_path / 'S.db'}"
    s = stepped_store(url)
    ids = [r["id"] for r in s.list_runs()]
    s.engine.dispose()
    return url, ids


COMMANDS = [
    ["report", "--format", "json"],
    ["report", "--format", "csv"],
    ["history", "--format", "json"],
    ["history", "--format", "markdown"],
    ["history"],
    ["compare", "--format", "json", "RUN_A", "RUN_B"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: "-".join(a[:3]))
@pytest.mark.parametrize("spelling", ["path", "relative", "symlink", "hardlink"])
def test_o_never_replaces_the_store_however_it_is_named(capsys, store, tmp_path, monkeypatch,
                                                      argv, spelling):
    url, ids = store
    argv = [ids[0] if a == "RUN_A" else ids[1] if a == "RUN_B" else a for a in argv]
    target = {"path": str(tmp_path / "S.db"), "relative": "./S.db",
              "symlink": str(tmp_path / "alias.db"), "hardlink": str(tmp_path / "hard.db")}
    (tmp_path / "alias.db").symlink_to("S.db")
    os.link(tmp_path / "S.db", tmp_path / "hard.db")
    monkeypatch.chdir(tmp_path)
    before = sha(tmp_path / "S.db")
    refused(capsys, [*argv, "--store", url, "-o", target[spelling]],
            f"-o {target[spelling]} is the store this command uses", "never replaces the store")
    assert sha(tmp_path / "S.db") == before
    assert (tmp_path / "alias.db").is_symlink()


def test_o_never_replaces_another_database(capsys, store, tmp_path):
    url, _ = store
    other = tmp_path / "other.db"
    stepped_store(f"sqlite:///{other}", before=1, after=0).engine.dispose()
    before = sha(other)
    refused(capsys, ["report", "--store", url, "--format", "json", "-o", str(other)],
            f"-o {other} is a SQLite database", "never replaces a database")
    assert sha(other) == before


def test_o_onto_a_plain_file_replaces_it_and_says_so(capsys, store, tmp_path):
    url, _ = store
    out = tmp_path / "report.json"
    code, stdout, _ = run_cli(capsys, "report", "--store", url, "--format", "json", "-o", str(out))
    assert code == 0 and stdout.strip() == f"wrote {out}"
    out.write_text("an older report")
    code, stdout, _ = run_cli(capsys, "report", "--store", url, "--format", "json", "-o", str(out))
    assert code == 0 and stdout.strip() == f"wrote {out} (replaced the file that was there)"
    assert json.loads(out.read_text())["run"]["id"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("S.db")) == \
        ["report.json"]                                   # no temporary file left


def test_density_refuses_o_onto_its_store_before_the_sweep(capsys, store, tmp_path,
                                                           monkeypatch):
    from virtbench.execution.run import density

    def never(self):
        raise AssertionError("the sweep started")
    monkeypatch.setattr(density.Sweep, "run", never)
    url, _ = store
    refused(capsys, ["density", "--env", "native", "--bench", "pi", "--store", url,
                     "-o", str(tmp_path / "S.db")], "is the store this command uses")


def shared(tmp_path, mode=0o1777):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, mode)
    return d


@pytest.mark.parametrize("mode", [0o1777, 0o775])
def test_a_store_through_a_planted_link_is_refused_before_the_run_starts(capsys, tmp_path,
                                                                        monkeypatch, mode):
    from virtbench.execution.run import runner

    def never(*a, **k):
        raise AssertionError("the run was prepared")
    monkeypatch.setattr(runner, "prepare", never)
    d = shared(tmp_path, mode)
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    (d / "s.db").symlink_to(victim)
    for url in (f"sqlite:///{d / 's.db'}", str(d / "s.db")):
        refused(capsys, ["run", "--env", "native", "--bench", "pi", "--trials", "1",
                         "--quick", "--store", url],
                f"store {d}/s.db is a symbolic link in {d}, which can be written by other "
                f"users (mode {mode:04o})")
        refused(capsys, ["runs", "--store", url], "is a symbolic link")
    assert victim.read_bytes() == b""


def test_a_store_in_a_directory_others_can_write_is_refused_by_readers_too(capsys, tmp_path):
    d = shared(tmp_path)
    url = f"sqlite:///{d / 's.db'}"
    stepped_store(url, before=1, after=0).engine.dispose()
    for name in os.listdir(d):
        if name != "s.db":
            os.unlink(d / name)
    before = sha(d / "s.db")
    for argv in (["runs"], ["report"], ["history"], ["serve", "--port", "0"]):
        refused(capsys, [*argv, "--store", url], f"store {d}/s.db: its directory {d} can be "
                "written by other users (mode 1777), and SQLite makes s.db-wal")
    assert sorted(os.listdir(d)) == ["s.db"] and sha(d / "s.db") == before


def test_o_through_a_planted_link_is_refused(capsys, store, tmp_path):
    url, _ = store
    d = shared(tmp_path)
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    (d / "out.json").symlink_to(victim)
    (d / "sub").symlink_to(tmp_path)
    for target in (d / "out.json", d / "sub" / "new.json"):
        for argv in (["report", "--format", "json"], ["history", "--format", "json"]):
            refused(capsys, [*argv, "--store", url, "-o", str(target)], "is a symbolic link in")
    refused(capsys, ["history", "--format", "html", "--store", url, "-o",
                     str(d / "sub" / "pages")], f"{d}/sub is a symbolic link in {d}")
    assert victim.read_bytes() == b"" and not (tmp_path / "new.json").exists()
    assert not (tmp_path / "pages").exists()
    assert writes.check_store(url) == tmp_path / "S.db"


@pytest.mark.parametrize("argv", [
    ["report"], ["compare", "A", "B"], ["history"], ["serve", "--port", "0"],
    ["density", "--env", "native", "--bench", "pi"],
    ["worker", "--name", "h1", "--broker", "redis://127.0.0.1:9/0"],
    ["fleet", "run", "--bench", "pi", "--host", "h1", "--broker", "redis://127.0.0.1:9/0"],
    ["fleet", "status", "--broker", "redis://127.0.0.1:9/0"],
], ids=lambda a: "-".join(a[:2]))
def test_every_command_that_opens_the_store_checks_it_first(capsys, tmp_path, argv):
    """Readers, the density sweep and the fleet's commands: each refuses a store reached
    through a link where others can write, before its broker, sweep or server."""
    d = shared(tmp_path)
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    (d / "s.db").symlink_to(victim)
    refused(capsys, [*argv, "--store", f"sqlite:///{d / 's.db'}"],
            f"store {d}/s.db is a symbolic link in {d}")
    assert victim.read_bytes() == b"" and sorted(os.listdir(d)) == ["s.db"]
