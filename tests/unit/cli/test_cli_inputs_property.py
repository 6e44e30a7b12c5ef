"""Every input checked, by generation (hypothesis): flags, option values and study files fed
to every command through main(), in-process, with a temporary store, work root and cache.
Whatever comes in: no traceback (no exception out of main), an exit status of 0, 1 or 2,
and bad input is exit 2 with exactly one line on stderr; nothing is created or changed in the
store's directory, the work root or the cache.

Commands that would build, boot or serve when their input is good (image, density, worker,
fleet run with a broker, run without --dry-run) get --dry-run or only inputs they refuse."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from storekit import around, filled_run
from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store

EXAMPLES = 40
SIDECARS = ("-wal", "-shm")          # SQLite's files beside an open store: names only

NUMBERS = ["0", "-5", "1.5", "0.5", "100", "nan", "inf", "-inf", "1e309", "0.05", "10", "5",
           "", "x", "1,5", "0x10", "--", "-0", "99.999", "1e-300"]
WORDS = ["", "nosuch", "steam", "qemmu", "native", "qemu:dsk=ide", "native:name=twin",
         "pi:k=99", "pi:k=17", "tcp:direction=sideways", "stream", "éé", "a=b", ":", "auto",
         "2026", "20", "-x", "=", "../../etc/passwd"]
FLAGS = {
    "report": ["--threshold", "--format", "--baseline", "--analysis", "--correction",
               "--fleet", "-o", "--thresold", "--profile"],
    "compare": ["--alpha", "--min-change", "--format", "--pair", "--with", "--fleet", "-o",
                "--alhpa"],
    "runs": ["--limit", "--store-typo"],
    "envs": ["--prob", "--wide", "--probe-now"],
    "benchmarks": ["--all"],
    "run": ["--env", "--bench", "--trials", "--min-trials", "--max-trials", "--budget",
            "--min-section", "--baseline", "--seed", "--profile", "--analysis",
            "--correction", "--trails"],
    "fleet status": ["--fleet", "--brokr"],
    "density": ["--env", "--bench", "--max", "--trials", "--floor", "--min-gain",
                "--max-time", "--metric"],
}
STUDY_KEYS = {
    "alpha": st.sampled_from([0, -1, 0.5, 0.51, 1.5, 0.05, 1e-9, float("nan")]),
    "threshold": st.sampled_from([0, -5, 100, 99.5, 1000, 10, float("inf")]),
    "trials": st.sampled_from([0, -1, 3, "auto", "many", 12.5, True]),
    "min_trials": st.sampled_from([1, 2, 6, -3]),
    "max_trials": st.sampled_from([1, 60, 5]),
    "budget": st.sampled_from(["15m", "soon", "", "0s"]),
    "min_section": st.sampled_from([-1, 0, 0.5, 4000]),
    "warmup": st.sampled_from([-1, 0, 2]),
    "pin": st.sampled_from(["auto", "always"]),
    "analysis": st.sampled_from(["paired", "sideways"]),
    "seed": st.sampled_from([-1, 3]),
    "colour": st.just("blue"),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A store with one run, a work root and a cache, each in a directory of its own; the
    store is held open (its SQLite sidecars exist throughout)."""
    base = tmp_path_factory.mktemp("inputs")
    dirs = {name: base / name for name in ("store", "workroot", "cache", "cwd")}
    for d in dirs.values():
        d.mkdir(mode=0o700)
    _cached_probes(dirs["cache"] / "virtbench")
    url = f"sqlite:///{dirs['store'] / 'store.db'}"
    store = Store(url)
    run_id = filled_run(store, {"native": {}, "qemu": {}},
                        {"native": {"copy": around(100, n=5)}, "qemu": {"copy": around(90, n=5)}})
    return {"dirs": dirs, "url": url, "store": store, "run_id": run_id, "base": base}


def _cached_probes(cache: Path) -> None:
    """The kinds' probe answers as `envs` caches them (so that `envs` answers from the cache
    and boots nothing): every kind usable, dated now."""
    from datetime import datetime, timezone
    from virtbench.measure import environments
    from virtbench.measure.environments import probes
    from virtbench.measure.environments.spec import Usability
    cache.mkdir(mode=0o700)
    text = probes.encode({k: Usability(True) for k in environments.KINDS},
                         datetime.now(timezone.utc), probes.cache_key(environments.KINDS))
    fd = os.open(cache / probes.CACHE_NAME, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, text.encode())
    os.close(fd)


@pytest.fixture
def inside(world, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_STORE", world["url"])
    monkeypatch.setenv("VIRTBENCH_TMP", str(world["dirs"]["workroot"]))
    monkeypatch.setenv("VIRTBENCH_CACHE", str(world["dirs"]["cache"] / "virtbench"))
    monkeypatch.setenv("VIRTBENCH_BROKER", "")
    monkeypatch.delenv("VIRTBENCH_BROKER")
    monkeypatch.chdir(world["dirs"]["cwd"])
    return world


def snapshot(dirs: dict[str, Path]) -> dict[str, int | None]:
    """Every path under the watched directories with its size (None for directories and
    SQLite's sidecars, whose size changes as the store is read)."""
    out = {}
    for d in dirs.values():
        for p in sorted(d.rglob("*")):
            side = p.name.endswith(SIDECARS)
            out[str(p)] = None if p.is_dir() or side else p.stat().st_size
    return out


def call(world, argv, capsys) -> tuple[int, str, str]:
    before = snapshot(world["dirs"])
    try:
        code = cli.main(argv)
    except BaseException as exc:     # a traceback for the user: the property fails
        raise AssertionError(f"{argv}: {type(exc).__name__}: {exc}") from exc
    out, err = capsys.readouterr()
    after = snapshot(world["dirs"])
    assert after == before, f"{argv} created or changed {set(after) ^ set(before) or 'files'}"
    assert code in (0, 1, 2), (argv, code, err)
    if code == 2:
        assert len(err.splitlines()) == 1 and err.startswith("virtbench: "), (argv, err)
    return code, out, err


def argv_for(command: str):
    """[command..., then flags with generated values, then stray words]."""
    flag = st.sampled_from(FLAGS[command])
    value = st.sampled_from(NUMBERS + WORDS)
    pair = st.tuples(flag, value).map(lambda fv: [fv[0], fv[1]] if not fv[0] == "--profile"
                                      or command == "run" else [fv[0]])
    extra = st.lists(st.sampled_from(WORDS), max_size=2)
    return st.tuples(st.lists(pair, max_size=3), extra).map(
        lambda t: [*command.split(), *[x for p in t[0] for x in p], *t[1]])


COMMANDS = st.sampled_from(sorted(FLAGS)).flatmap(argv_for)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def _safe(argv: list[str], world) -> list[str]:
    """What keeps the generated input from doing real work when it is good: run is a dry
    run; -o points where nothing can be written; density gets a flag it refuses."""
    argv = list(argv)
    for i, word in enumerate(argv[:-1]):
        if word == "-o":
            argv[i + 1] = str(world["base"] / "no-such-dir" / (argv[i + 1] or "x"))
    if argv[0] == "run":
        argv.append("--dry-run")
    if argv[0] == "density":
        argv += ["--max-time", "-1"]
    return argv


@settings(SETTINGS, max_examples=3 * EXAMPLES)
@given(argv=COMMANDS)
def test_generated_flags_and_values(inside, capsys, argv):
    code, _, err = call(inside, _safe(argv, inside), capsys)


@SETTINGS
@given(command=st.sampled_from(["report", "compare", "runs", "fleet status"]),
       where=st.sampled_from(["missing.db", "no/such/dir/store.db", "sqlite:///nowhere/x.db"]))
def test_read_commands_on_a_missing_store_create_nothing(inside, capsys, command, where):
    base = inside["dirs"]["cwd"]
    url = where if where.startswith("sqlite") else str(base / where)
    code, out, err = call(inside, [*command.split(), "--store", url], capsys)
    assert code == 2 and "no store at" in err and not out


@SETTINGS
@given(values=st.fixed_dictionaries({}, optional=STUDY_KEYS))
def test_generated_study_files(inside, capsys, values, tmp_path_factory):
    lines = [f"{k} = {_toml(v)}" for k, v in values.items()]
    lines += ['[[environment]]', 'spec = "native"', '[[benchmark]]', 'name = "pi"']
    path = tmp_path_factory.mktemp("study") / "s.toml"       # outside the watched dirs
    path.write_text("\n".join(lines) + "\n")
    code, out, err = call(inside, ["run", str(path), "--dry-run"], capsys)
    if _expect_bad(values):       # the first problem is said: it names one of the keys
        assert code == 2, (values, out, err)
        assert any(key in err for key in values), (values, err)


@pytest.mark.parametrize("argv, words", [
    (["compare", "--alpha", "0", "R", "R"], "--alpha 0 is out of range"),
    (["report", "--threshold", "-5"], "--threshold -5 is out of range"),
    (["compare", "--min-change", "-5", "R", "R"], "--min-change -5 is out of range"),
    (["compare", "--alpha", "1.5", "R", "R"], "--alpha 1.5 is out of range"),
    (["report", "--format", "json", "-o", "NOWHERE/r.json"], "cannot write it"),
    (["runs", "--store", "NOWHERE/store.db"], "no store at"),
])
def test_the_issues_inputs(inside, capsys, argv, words):
    nowhere = str(inside["dirs"]["cwd"] / "no-such-dir")
    argv = [inside["run_id"] if a == "R" else a.replace("NOWHERE", nowhere) for a in argv]
    code, out, err = call(inside, argv, capsys)
    assert code == 2 and words in err and out == ""


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def _expect_bad(values: dict) -> str | None:
    """The key a study file must be refused for, by the ranges of core/defaults.py."""
    from virtbench.core import defaults
    for key, rng in (("alpha", defaults.ALPHA_RANGE), ("threshold", defaults.THRESHOLD_RANGE)):
        if key in values and not rng.contains(float(values[key])):
            return key
    return "colour" if "colour" in values else None
