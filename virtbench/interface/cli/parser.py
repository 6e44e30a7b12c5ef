"""The `virtbench` command's arguments: every subcommand and flag, with their help, and one
line for a usage error (exit 2). Only what building the parser needs is imported here (tests/
test_cli_startup.py), so `virtbench --version` and `--help` start without the analysis."""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import fields

from ... import __version__
from ...results import report
from ...core import defaults, ranges, suggest
from ...core.text import store_flag
from ...study.flagset import CORRECTIONS, StudyFlags, flag_field, flag_of
from . import artifact, density, figures, qemu, storecmd, tune
from ...execution.fleet import commands as fleet_commands

EXIT_OK, EXIT_FAILED_TRIALS, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
COMPARE_ALPHA, COMPARE_MIN_CHANGE_PCT = 0.01, 5.0     # compare's own: stricter than a run's


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2 like every other bad input."""

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)   # for error()'s hints
        return super().parse_known_args(args, namespace)

    def error(self, message):
        # a flag's own check already names it: "argument --alpha: --alpha 1.5 is ..." once
        message = re.sub(r"^argument (\S+): (?=\1 )", "", message)
        message = _with_suggestion(message, self)
        self.exit(EXIT_BAD_INPUT, f"virtbench: {message} (see `{self.prog} --help`)\n")


def _with_suggestion(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's message with "did you mean" for a mistyped flag or choice (Python 3.11's
    argparse has none)."""
    if "did you mean" in message or "maybe you meant" in message:
        return message
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if choice:
        return message + suggest.did_you_mean(choice[1], re.findall(r"'([^']*)'", choice[2]))
    if message.startswith("unrecognized arguments: "):
        flags = _flags_of(parser, getattr(parser, "_argv", []))
        for word in message[len("unrecognized arguments: "):].split():
            flag = word.split("=", 1)[0]
            hint = suggest.nearest(flag, flags) if flag.startswith("-") else None
            if hint:
                return f"{message} (did you mean {hint}?)"
    return message


def _flags_of(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """The flags of the (sub)command `argv` names: `report ...` -> report's flags."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for i, word in enumerate(argv):
                if word in action.choices:
                    return _flags_of(action.choices[word], argv[i + 1:])
    return [f for action in parser._actions for f in action.option_strings]


def _in_range(flag: str, rng):
    """An argparse type: a number within `rng` (core/defaults.py), else one line naming
    `flag` and the range."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a number; give {rng.what} {rng.phrase()}, e.g. "
                f"{flag} {rng.example}") from None
        why = ranges.problem(flag, value, rng)
        if why:
            raise argparse.ArgumentTypeError(why)
        return value
    return parse


SERIES_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def _series(text: str) -> str:
    """--series NAME: letters, digits, '.', '_', '-', 100 at most, a letter or digit first."""
    if not SERIES_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a series name; use letters, digits, '.', '_' and '-' (up to "
            "100, a letter or digit first), e.g. --series nightly")
    return text


def _positive(flag: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of runs of 1 "
                                             f"or more, e.g. {flag} 3")
        return value
    return parse


HISTORY_FORMATS = ("table", "markdown", "json", "html")


def add_history_parser(sub) -> None:
    """`virtbench history`: runs lined up into series, the changes found in each."""
    h = sub.add_parser("history", help="results over time: the store's runs lined up into "
                                       "series (host, environment, benchmark, metric), the "
                                       "changes found and the facts that changed there")
    h.add_argument("--series", type=_series, metavar="NAME",
                   help="only the runs tagged with run --series NAME")
    h.add_argument("--host", metavar="NAME", help="only the runs of this host")
    h.add_argument("--env", action="append", metavar="LABEL",
                   help="only this environment's series; repeat for several")
    h.add_argument("--bench", action="append", metavar="LABEL",
                   help="only this benchmark case's series (its label, e.g. pi[k=17])")
    h.add_argument("--metric", action="append", metavar="NAME", help="only this metric")
    h.add_argument("--format", default="table", choices=HISTORY_FORMATS)
    h.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE instead of stdout; --format html: the directory DIR "
                        "virtbench makes for the pages (index.html, one page per series)")
    h.add_argument("--threshold", type=_in_range("--threshold", defaults.THRESHOLD_RANGE),
                   default=defaults.THRESHOLD_PCT,
                   help="no change means within ±this %% (default %(default)g)")
    h.add_argument("--alpha", type=_in_range("--alpha", defaults.ALPHA_RANGE),
                   default=defaults.ALPHA, help="significance level (default %(default)g)")
    h.add_argument("--correction", choices=CORRECTIONS, default=defaults.CORRECTION,
                   help="the correction over every fact point tested (default %(default)s)")
    h.add_argument("--fail-on", choices=("change", "regression"),
                   help="exit 3 when a confirmed change (regression: a confirmed change for "
                        "the worse) is in the last N runs (--last; default: any run)")
    h.add_argument("--last", type=_positive("--last"), metavar="N",
                   help="with --fail-on: only changes whose first run after is one of the "
                        "last N runs read")
    h.add_argument("--store", type=store_flag, metavar="URL")


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"--port {text!r} is not a port; give 0 to 65535 "
                                         "(0: any free port)")
    return int(text)


def add_serve_parser(sub) -> None:
    """`virtbench serve`: the web view over a store, read-only."""
    s = sub.add_parser("serve", help="a read-only web view of the store: runs, a run's "
                                     "report, series over time, two runs compared")
    s.add_argument("--store", type=store_flag, metavar="URL")
    s.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (default %(default)s; any other is "
                        "reachable without authentication)")
    s.add_argument("--port", type=_port, default=8080,
                   help="the port (default %(default)s; 0: any free one, printed)")


def add_study_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that shape a study, `run`'s and `fleet run`'s alike: exactly the fields of
    StudyFlags (study/flagset.py), in its order, each with the help its field declares."""
    for f in fields(StudyFlags):
        add_study_flag(parser, f)


def add_study_flag(parser: argparse.ArgumentParser, f) -> None:
    """The flag of one StudyFlags field (`min_trials` -> `--min-trials`)."""
    shown = {k: v for k, v in f.metadata.items() if k != "reads"}
    flag = flag_of(f.name)
    if "reads" in f.metadata:
        shown["type"] = f.metadata["reads"](flag)
    parser.add_argument(flag, **shown)


def add_analysis_flag(parser: argparse.ArgumentParser) -> None:
    """--analysis as the study flag declares it (report re-analyses a stored run by it)."""
    add_study_flag(parser, flag_field("analysis"))


def add_correction_flag(parser: argparse.ArgumentParser) -> None:
    """--correction as the study flag declares it."""
    add_study_flag(parser, flag_field("correction"))


def add_verbosity_flags(parser: argparse.ArgumentParser) -> None:
    """--quiet and --verbose: how much of a run's report is printed (report/fmt/lists.py)."""
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--quiet", dest="verbosity", action="store_const", const="quiet",
                     default="normal", help="the report's header and verdicts only, the "
                                            "warnings as one line of counts")
    how.add_argument("--verbose", dest="verbosity", action="store_const", const="verbose",
                     help="every warning, with its raw details (the report's default: one "
                          "line per kind of warning)")


def add_wide_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wide", action="store_true",
                        help="the report at the end with every column (as report --wide)")


def add_fleet_run_flags(parser: argparse.ArgumentParser) -> None:
    """`fleet run`'s study flags, and --wide, which it has always taken (it prints no
    report)."""
    add_study_flags(parser)
    add_wide_flag(parser)


def add_envs_parsers(sub) -> None:
    """`virtbench envs` and `virtbench benchmarks`: what this host can run."""
    envs = sub.add_parser("envs", help="every environment kind, whether it is usable here, "
                                       "and why not (cached probes; --probe to probe again)")
    envs.add_argument("--probe", action="store_true",
                      help="probe every kind again now (boots a short KVM probe, starts "
                           "sandboxes) instead of showing the cached answers")
    sub.add_parser("benchmarks", help="every benchmark: family, metrics, tools it needs")


def add_image_parser(sub) -> None:
    """`virtbench image build|prune`: the guest image."""
    img = sub.add_parser("image", help="the guest image")
    img_sub = img.add_subparsers(dest="image_command", required=True, parser_class=_Parser)
    build = img_sub.add_parser("build", help="build or reuse the cached guest image")
    build.add_argument("--force", action="store_true", help="rebuild even if cached")
    build.add_argument("--variant", choices=("guest", "host"), default="guest",
                       help="guest: the image every guest boots (default); host: that image "
                            "plus QEMU, perf and virtbench itself, a guest that hosts guests")
    from ...machinery.image.suites import SUITES
    build.add_argument("--linux", choices=tuple(SUITES), default=None, metavar="SUITE",
                       help="the Debian suite the guest's kernel comes from (the rest stays "
                            "bookworm's): " + ", ".join(SUITES) + "; what qemu:linux=SUITE "
                            "boots")
    img_sub.add_parser("prune", help="delete cached images of other recipes")


def add_run_parsers(sub) -> None:
    """`virtbench run` (a study, its flags on top; --replay an artifact's), `virtbench runs`
    (the stored runs), and `export` and `import` (a run as an artifact, and back)."""
    run = sub.add_parser("run", help="run a study")
    run.add_argument("study", nargs="?", help="a study file (TOML)")
    add_study_flags(run)
    add_wide_flag(run)
    run.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    run.add_argument("--resume", metavar="RUN_ID", help="finish an interrupted run")
    artifact.add_replay_flag(run)
    run.add_argument("--retry-failed", action="store_true",
                     help="with --resume: also run again the trials that failed "
                          "(the failed rows are kept as superseded)")
    run.add_argument("--store", type=store_flag, metavar="URL",
                     help="sqlite:///file or postgresql://...")
    run.add_argument("--series", type=_series, metavar="NAME",
                     help="tag the run into the named series NAME (virtbench history "
                          "--series NAME lines them up)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_verbosity_flags(run)
    runs = sub.add_parser("runs", help="list the runs in the store")
    runs.add_argument("--store", type=store_flag, metavar="URL")
    artifact.add_parsers(sub)           # export and import: a run as an artifact, and back


def _add_run_view_flags(parser: argparse.ArgumentParser) -> None:
    """--wide and the verbosity flags: how a command that runs a study shows its report."""
    add_wide_flag(parser)
    add_verbosity_flags(parser)


def add_report_parser(sub) -> None:
    """`virtbench report`: a stored run (or a fleet run) analysed and rendered."""
    rep = sub.add_parser("report", help="report a run (default: the latest)")
    rep.add_argument("run_id", nargs="?", metavar="RUN_ID")
    rep.add_argument("--format", default="table", choices=report.FORMATS)
    rep.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    rep.add_argument("--threshold", type=_in_range("--threshold", defaults.THRESHOLD_RANGE),
                     help="verdict threshold in %% (default: the study's)")
    rep.add_argument("--baseline", metavar="LABEL",
                     help="re-analyse the stored run against another of its environments "
                          "(default: the run's baseline); nothing is run again")
    add_analysis_flag(rep)
    add_correction_flag(rep)
    rep.add_argument("--profile", action="store_true",
                     help="only the run's exit profiles (recorded by run --profile exits)")
    rep.add_argument("--wide", action="store_true",
                     help="every column: the per-benchmark tables with trimmed mean, median, "
                          "CV, intervals, p, MDC and the published rule (the terminal report "
                          "is compact by default: headline, verdicts with values)")
    rep.add_argument("--separate", action="store_true",
                     help="print the study (TOML) that separates the changes an environment "
                          "makes at once against its reference: one environment per option "
                          "that differs (`virtbench report RUN --separate > separate.toml`, "
                          "then `virtbench run separate.toml`)")
    rep.add_argument("--fleet", metavar="FLEET_ID",
                     help="a fleet run: its hosts side by side (labels HOST:LABEL; each host "
                          "against the first host's same environment)")
    rep.add_argument("--store", type=store_flag, metavar="URL")
    add_verbosity_flags(rep)


def add_compare_parser(sub) -> None:
    """`virtbench compare`: two runs (or two hosts of a fleet run) A/B."""
    cmp = sub.add_parser("compare", help="A/B two runs with significance")
    cmp.add_argument("run_a", metavar="RUN_A", nargs="?")
    cmp.add_argument("run_b", metavar="RUN_B", nargs="?")
    cmp.add_argument("--fleet", metavar="FLEET_ID",
                     help="compare two hosts of a fleet run: RUN_A and RUN_B are then host "
                          "names (default: its first two hosts)")
    cmp.add_argument("--format", default="table", choices=report.FORMATS)
    cmp.add_argument("-o", "--output", metavar="FILE")
    cmp.add_argument("--alpha", type=_in_range("--alpha", defaults.ALPHA_RANGE),
                     default=COMPARE_ALPHA, help="significance level (default %(default)g)")
    cmp.add_argument("--min-change", type=_in_range("--min-change", defaults.MIN_CHANGE_RANGE),
                     default=COMPARE_MIN_CHANGE_PCT,
                     help="smallest change in %% that counts (default %(default)g)")
    cmp.add_argument("--pair", action="append", metavar="LABEL_A=LABEL_B",
                     help="compare environment LABEL_A of run A with LABEL_B of run B "
                          "(default: same labels; one environment each pairs by itself); "
                          "split at the '=' that gives a label of each run")
    cmp.add_argument("--with", dest="with_labels", action="append", metavar="LABEL_B",
                     help="with --pair LABEL_A: the label of run B to pair it with, whole "
                          "(for labels holding '=' either way); one per --pair")
    cmp.add_argument("--store", type=store_flag, metavar="URL")


def build_parser() -> argparse.ArgumentParser:
    """The `virtbench` command: each subcommand's parser is built by its own function."""
    p = _Parser(prog="virtbench", description="What does virtualization cost me, and why?")
    p.add_argument("--version", action="version", version=f"virtbench {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_envs_parsers(sub)
    add_image_parser(sub)
    add_run_parsers(sub)
    add_report_parser(sub)
    add_compare_parser(sub)
    add_history_parser(sub)
    add_serve_parser(sub)
    fleet_commands.add_parsers(sub, add_fleet_run_flags)
    density.add_parser(sub)
    figures.add_parser(sub)
    tune.add_parser(sub, add_study_flags, _add_run_view_flags)
    qemu.add_parser(sub, _Parser)
    storecmd.add_parser(sub, _Parser)
    return p
