"""core/text.py: what a value that reaches a file or a command line may hold (no newline, no
control character), a mirror that is one URL, a --store that is not empty."""
from __future__ import annotations

import argparse

import pytest

from virtbench.core import text
from virtbench.core.errors import VirtbenchError


@pytest.mark.parametrize("value", ["", "native", "qemu:disk=ide,nic=e1000", "pi[k=17]",
                                   "http://deb.debian.org/debian", "débit 日本", "a b",
                                   "aes128-ctr,chacha20-poly1305@openssh.com"])
def test_ordinary_text_passes(value):
    assert text.text_problem(value) is None
    assert text.check_text("thing", value) == value


@pytest.mark.parametrize("value, said", [
    ("a\nb", "holds a newline"), ("a\n", "holds a newline"), ("\nb", "holds a newline"),
    ("a\rb", "holds a carriage return"), ("a\tb", "holds a tab"),
    ("a\0b", "holds a NUL character"), ("\x1b[31mred", "holds an escape character"),
    ("a\x7fb", "holds a control character (U+007F)"),
    ("a\x85b", "holds a control character (U+0085)"),
    ("a\u2028b", "holds a line separator (U+2028)"),
    ("a\u2029b", "holds a line separator (U+2029)"),
])
def test_line_breaks_and_control_characters_are_named(value, said):
    assert text.text_problem(value) == said
    with pytest.raises(VirtbenchError) as exc:
        text.check_text("study name", value, "write it on one line")
    assert str(exc.value) == f"study name {value!r} {said}; write it on one line"
    assert exc.value.exit_code == 2 and "\n" not in str(exc.value)


def test_prose_may_span_lines_but_holds_no_other_control_character():
    assert text.text_problem("two\nlines\tand a tab", prose=True) is None
    assert text.text_problem("bell\x07", prose=True) == "holds a control character (U+0007)"
    assert text.text_problem("cr\r\n", prose=True) == "holds a carriage return"


@pytest.mark.parametrize("url", ["http://deb.debian.org/debian", "https://m.example/debian/",
                                 "file:///srv/repo", "http://[::1]:8080/debian",
                                 "http://user@mirror.example/d"])
def test_mirror_urls(url):
    assert text.url_problem(url) is None


@pytest.mark.parametrize("url, said", [
    ("http://m/debian\ndeb [trusted=yes] http://evil bookworm main", "holds a newline"),
    ("[trusted=yes] http://m/debian", "holds a space"),
    ("http://m/debian bookworm", "holds a space"),
    ("ftp://m/debian", "has scheme 'ftp', not http, https or file"),
    ("deb.debian.org/debian", "has no scheme"),
    ("http:///debian", "names no host"),
    ("file:relative/dir", "names no absolute directory"),
    ("http://[::1/debian", "is not a URL (Invalid IPv6 URL)"),
    ("", "has no scheme"),
])
def test_what_is_not_one_mirror_url(url, said):
    assert text.url_problem(url) == said
    with pytest.raises(VirtbenchError, match="; give one URL$"):
        text.check_url("--mirror", url, "give one URL")


@pytest.mark.parametrize("value", ["", " ", "\t"])
def test_an_empty_store_is_refused_not_read_as_the_default(value):
    line = (f"--store {value!r}: give a store URL (sqlite:///PATH or postgresql://...) or "
            "leave --store out for the default")
    assert text.store_flag_problem(value) == line
    with pytest.raises(argparse.ArgumentTypeError, match=r"leave --store out"):
        text.store_flag(value)


def test_a_store_url_on_one_line():
    assert text.store_flag("sqlite:////tmp/x.db") == "sqlite:////tmp/x.db"
    assert text.store_flag_problem("sqlite:////tmp/x.db\n") == (
        "--store 'sqlite:////tmp/x.db\\n' holds a newline; give a store URL "
        "(sqlite:///PATH or postgresql://...) or leave --store out for the default")


def test_a_flag_on_one_line():
    parse = text.line_flag("--env")
    assert parse("native") == "native"
    with pytest.raises(argparse.ArgumentTypeError,
                       match=r"^--env 'native\\n' holds a newline; write it on one line"):
        parse("native\n")
