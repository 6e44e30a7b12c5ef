"""Text that reaches a configuration file or a command line, checked for what it may hold
(pure; docs/security.md, "Text that reaches a file or a command line").

A value the user gives (a mirror, a study's name or labels, an environment's options, a
benchmark's parameter, a targets.toml entry, a store URL) ends up as a line of a file (an apt
source, sshd's or libvirt's configuration) or as an argument of a program (QEMU, ssh, podman,
iperf3). A newline there starts another line: a second apt source, `[trusted=yes]` and all;
another control character (a carriage return, an escape, NUL) hides or cuts what follows.
So no such value may hold one: `text_problem` says what a value holds that it may not, and
the callers (the study's schema, environments/spec.py, the command's flags) refuse it in one
line naming the thing and the fix, before anything is written."""
from __future__ import annotations

import argparse
import unicodedata
from urllib.parse import urlsplit

from .errors import VirtbenchError

# control characters (C0, DEL, C1: newline, carriage return, tab, escape, NUL) and the
# Unicode line and paragraph separators
REFUSED_CATEGORIES = ("Cc", "Zl", "Zp")
PROSE_ALLOWED = "\n\t"          # prose (a note, a description) may span lines
NAMES = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\0": "a NUL character",
         "\x1b": "an escape character"}
ONE_LINE = "write it on one line without control characters"

MIRROR_SCHEMES = ("http", "https", "file")
STORE_FIX = ("give a store URL (sqlite:///PATH or postgresql://...) or leave --store out "
             "for the default")


def _named(ch: str) -> str:
    kind = "a control character" if unicodedata.category(ch) == "Cc" else "a line separator"
    return NAMES.get(ch) or f"{kind} (U+{ord(ch):04X})"


def text_problem(value: str, prose: bool = False) -> str | None:
    """What `value` holds that no line of a file and no argument may ("holds a newline"),
    or None. `prose`: a newline or a tab is fine (a note, shown, never written into a
    configuration); any other control character is not."""
    for ch in value:
        if unicodedata.category(ch) in REFUSED_CATEGORIES and \
                not (prose and ch in PROSE_ALLOWED):
            return f"holds {_named(ch)}"
    return None


def check_text(what: str, value: str, fix: str = ONE_LINE, prose: bool = False) -> str:
    """`value` if text_problem finds nothing in it, else VirtbenchError, one line:
    `{what} {value!r} holds a newline; {fix}`."""
    problem = text_problem(value, prose)
    if problem:
        raise VirtbenchError(f"{what} {value!r} {problem}; {fix}")
    return value


def url_problem(value: str, schemes: tuple[str, ...] = MIRROR_SCHEMES) -> str | None:
    """What keeps `value` from being one URL of `schemes` (nothing else: no space, no
    control character, no apt option in brackets before it), or None."""
    problem = text_problem(value)
    if problem:
        return problem
    if any(ch.isspace() for ch in value):
        return "holds a space"
    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError as exc:
        return f"is not a URL ({exc})"
    if parts.scheme not in schemes:
        if not parts.scheme:
            return "has no scheme"
        return f"has scheme {parts.scheme!r}, not {', '.join(schemes[:-1])} or {schemes[-1]}"
    if parts.scheme != "file" and not host:
        return "names no host"
    if parts.scheme == "file" and not parts.path.startswith("/"):
        return "names no absolute directory"
    return None


def check_url(what: str, value: str, fix: str,
              schemes: tuple[str, ...] = MIRROR_SCHEMES) -> str:
    """`value` if it is one URL of `schemes`, else VirtbenchError, one line."""
    problem = url_problem(value, schemes)
    if problem:
        raise VirtbenchError(f"{what} {value!r} {problem}; {fix}")
    return value


def store_flag_problem(value: str) -> str | None:
    """What is wrong with `--store VALUE` (the whole line, naming the flag), or None. An
    empty value is not the default store: it is refused, so that `--store "$UNSET"` never
    reads or writes another store than the one meant."""
    if not value.strip():
        return f"--store {value!r}: {STORE_FIX}"
    problem = text_problem(value)
    if problem:
        return f"--store {value!r} {problem}; {STORE_FIX}"
    return None


def store_flag(value: str) -> str:
    """The type of every command's --store (argparse): the value, or one line naming it."""
    problem = store_flag_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def line_flag(flag: str):
    """The type of a flag whose value reaches a study (--env, --bench, --baseline): the
    value, or one line naming the flag when it holds a newline or a control character."""
    def parse(value: str) -> str:
        problem = text_problem(value)
        if problem:
            raise argparse.ArgumentTypeError(f"{flag} {value!r} {problem}; {ONE_LINE}")
        return value
    return parse
