"""The study flags are declared once (study/flagset.py StudyFlags, issue 38): the parser's
study flags are exactly its fields, in its order, with the help its fields declare; no other
list of their names (a tuple, a signature) is left in virtbench/; the help states the
defaults read from core/defaults.py, never typed; a StudyFlags is checked where it is made
(a bad value one line, exit 2)."""
from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.interface.cli import commands as cli
from virtbench.interface.cli.parser import add_study_flags, build_parser
from virtbench.study.flags import with_flags
from virtbench.study.flagset import StudyFlags, flag_of

ROOT = Path(__file__).resolve().parents[3] / "virtbench"
NAMES = [f.name for f in fields(StudyFlags)]
FLAGS = [flag_of(n) for n in NAMES]
MOST_NAMES = 3     # a literal or a signature naming more of them lists the flags again


def subparser(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for word in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    return parser


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.option_strings[0]: a for a in parser._actions if a.option_strings}


def test_the_parsers_study_flags_are_exactly_the_fields_in_their_order():
    parser = argparse.ArgumentParser(add_help=False)
    add_study_flags(parser)
    assert list(options(parser)) == FLAGS
    assert [a.dest for a in options(parser).values()] == NAMES     # read back by field name
    for path in (("run",), ("fleet", "run")):
        got = options(subparser(build_parser(), *path))
        assert set(FLAGS) <= set(got), path
        for f in fields(StudyFlags):
            assert got[flag_of(f.name)].help == f.metadata["help"], (path, f.name)


def test_what_run_parses_becomes_the_study_flags_by_name():
    args = build_parser().parse_args(
        ["run", "--env", "native", "--bench", "pi", "--trials", "auto", "--min-trials",
         "4", "--max-trials", "9", "--budget", "15m", "--resolution", "5%", "--min-section",
         "0.2", "--duet", "--baseline", "native", "--quick", "--seed", "7", "--profile",
         "exits", "--analysis", "unpaired", "--correction", "bh"])
    assert StudyFlags.from_args(args) == StudyFlags(
        env=["native"], bench=["pi"], trials="auto", min_trials=4, max_trials=9,
        budget="15m", resolution=5.0, min_section=0.2, duet=True, baseline="native",
        quick=True, seed=7, profile="exits", analysis="unpaired", correction="bh")
    s = with_flags(None, StudyFlags.from_args(args))
    assert (s.adaptive, s.min_trials, s.max_trials, s.budget_s, s.resolution_pct,
            s.min_section_s, s.duet, s.seed, s.analysis, s.correction) == \
        (True, 4, 9, 900.0, 5.0, 0.2, True, 7, "unpaired", "bh")


def name_lists(root: Path = ROOT) -> list[str]:
    """Where outside StudyFlags a tuple, list or set of strings, or a function's parameters,
    names more than MOST_NAMES study flags (by field name or flag)."""
    known, found = set(NAMES) | set(FLAGS), []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root.parent)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                named = {e.value for e in node.elts if isinstance(e, ast.Constant)} & known
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                named = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} & known
            else:
                continue
            if len(named) > MOST_NAMES:
                found.append(f"{where}:{node.lineno} {sorted(named)}")
    return sorted(found)


def test_the_scan_sees_a_second_list_of_the_names(tmp_path):
    pkg = tmp_path / "virtbench"
    pkg.mkdir()
    (pkg / "m.py").write_text('FLAGS = ("envs", "trials", "seed", "quick", "duet")\n'
                              "def with_flags(study, trials=None, seed=None, quick=False,\n"
                              "               duet=False):\n    pass\n"
                              'FEW = ["trials", "seed", "--quick"]\n')
    assert name_lists(pkg) == ["virtbench/m.py:1 ['duet', 'quick', 'seed', 'trials']",
                               "virtbench/m.py:2 ['duet', 'quick', 'seed', 'trials']"]


def test_the_names_are_listed_once_in_virtbench():
    assert name_lists() == []


def test_no_parser_of_run_or_fleet_run_types_a_study_flag():
    """The functions that build `run`'s and `fleet run`'s flags add none by its name."""
    builders = {"parser.py": ("add_study_flags", "add_study_flag", "add_run_parsers",
                              "add_fleet_run_flags"), "commands.py": ("add_parsers",)}
    for where, names in (("interface/cli/parser.py", builders["parser.py"]),
                         ("execution/fleet/commands.py", builders["commands.py"])):
        tree = ast.parse((ROOT / where).read_text())
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                   and n.name in names):
            typed = {c.value for c in ast.walk(fn) if isinstance(c, ast.Constant)} & set(FLAGS)
            assert typed == set(), f"{where} {fn.name}: {sorted(typed)}"


TYPED_DEFAULT = "default "     # followed by a digit in a string constant: a typed default


@pytest.mark.parametrize("where", ["study/flagset.py", "interface/cli/parser.py",
                                   "interface/cli/density.py"])
def test_no_help_types_a_default(where):
    """`(default 12)` is computed (an f-string of core/defaults.py, or %(default)), never
    written as a number in a string."""
    typed = [c.value for c in ast.walk(ast.parse((ROOT / where).read_text()))
             if isinstance(c, ast.Constant) and isinstance(c.value, str)
             and any(part[:1].isdigit() for part in c.value.split(TYPED_DEFAULT)[1:])]
    assert typed == []


def test_the_help_states_the_defaults_core_defaults_holds():
    """With other defaults in core/defaults.py the help says those: read, not typed."""
    probe = (
        "import json; from virtbench.core import defaults as d\n"
        "d.TRIALS, d.MIN_TRIALS, d.MAX_TRIALS, d.MIN_SECTION_S = 13, 7, 61, 0.25\n"
        "d.ANALYSIS, d.CORRECTION = 'unpaired', 'bh'\n"
        "d.DENSITY_MAX_GUESTS, d.DENSITY_TRIALS, d.DENSITY_FLOOR = 9, 4, 0.6\n"
        "d.DENSITY_MIN_GAIN, d.DENSITY_MAX_S = 0.07, 1800.0\n"
        "from virtbench.interface.cli.parser import build_parser\n"
        "p = build_parser(); sub = [a for a in p._actions if hasattr(a, 'choices') and "
        "isinstance(a.choices, dict)][0].choices\n"
        "def helps(cmd): return {a.option_strings[0]: a.help % vars(a) if '%(' in a.help "
        "else a.help for a in sub[cmd]._actions if a.option_strings and a.help}\n"
        "print(json.dumps({c: helps(c) for c in ('run', 'density')}))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True)
    helps = json.loads(out.stdout)
    run, density = helps["run"], helps["density"]
    assert "(default 13)" in run["--trials"] and "(default 7)" in run["--min-trials"]
    assert "(default 61)" in run["--max-trials"] and "(default 0.25;" in run["--min-section"]
    assert run["--analysis"].startswith("how verdicts are made: unpaired (default")
    assert "(default: the study's, bh)" in run["--correction"]
    assert "(default 9)" in density["--max"] and "(default 4)" in density["--trials"]
    assert "(default 0.6)" in density["--floor"] and "(default 0.07)" in density["--min-gain"]
    assert "(default 1800)" in density["--max-time"]


@pytest.mark.parametrize("given, says", [
    ({"seed": -1}, "--seed -1: give 0 or more, e.g. --seed 42"),
    ({"min_section": 4000.0}, "--min-section 4000: give 0 (off) to 3600 seconds"),
    ({"min_trials": 1}, "--min-trials 1: give 2 to 100000 blocks, e.g. --min-trials 6"),
    ({"max_trials": 100_001}, "--max-trials 100001: give 2 to 100000 blocks"),
    ({"budget": "soon"}, "--budget 'soon' is not a duration; write e.g. 15m"),
    ({"analysis": "bayes"}, "--analysis bayes: use paired or unpaired"),
    ({"correction": "bonferroni"}, "--correction bonferroni: use holm or bh")])
def test_the_study_flags_are_checked_where_they_are_made(given, says):
    with pytest.raises(VirtbenchError) as err:
        StudyFlags(**given)
    assert str(err.value).startswith(says) and "\n" not in str(err.value)


@pytest.mark.parametrize("argv, says", [
    (["--seed", "-3"], "virtbench: --seed -3: give 0 or more"),
    (["--min-trials", "1"], "virtbench: --min-trials 1: give 2 to 100000 blocks"),
    (["--max-trials", "100001"], "virtbench: --max-trials 100001: give 2 to 100000 blocks"),
    (["--min-section", "3601"], "virtbench: --min-section 3601: give 0 (off) to 3600")])
@pytest.mark.parametrize("command", [["run", "--dry-run"], ["fleet", "run", "--host", "a"]])
def test_a_bad_study_flag_is_one_line_and_exit_2(capsys, store_url, command, argv, says):
    if command[0] == "fleet":
        pytest.importorskip("celery")
        pytest.importorskip("redis")
    assert cli.main([*command, "--bench", "pi", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(says) and len(err.strip().splitlines()) == 1
