"""Text as LaTeX: every character pdflatex reads as markup said as itself, the report's
symbols (✓ ✗ × ○ ↑ ↓ · ≥ ± µ ...) as the commands that draw them, and labels for \\label{}.
Pure; formats/latex.py uses it (docs/reports.md, "LaTeX").

The document these go into loads fontenc (T1) and amssymb: Latin-1 letters pass
through as themselves; any other character with no command here is written `?` (pdflatex
stops on a character it has no glyph for)."""
from __future__ import annotations

import re

SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "_": r"\_", "%": r"\%", "&": r"\&",
    "#": r"\#", "$": r"\$", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "[": "{[}", "]": "{]}",      # braced: a cell opening with [ is not \\'s optional argument
}
SYMBOLS = {
    "✓": r"\ensuremath{\checkmark}", "✗": r"\ensuremath{\boxtimes}", "×": r"\ensuremath{\times}",
    "○": r"\ensuremath{\bigcirc}",
    "↑": r"\ensuremath{\uparrow}", "↓": r"\ensuremath{\downarrow}",
    "→": r"\ensuremath{\rightarrow}", "↳": r"\ensuremath{\hookrightarrow}",
    "·": r"\ensuremath{\cdot}", "—": "---", "–": "--", "−": r"\ensuremath{-}",
    "≥": r"\ensuremath{\geq}", "≤": r"\ensuremath{\leq}", "±": r"\ensuremath{\pm}",
    "µ": r"\ensuremath{\mu}", "μ": r"\ensuremath{\mu}", "…": r"\ldots{}",
    "\n": " ", "\t": " ", "\r": " ",
}
UNKNOWN = "?"


def _char(c: str) -> str:
    if c in SPECIAL:
        return SPECIAL[c]
    if c in SYMBOLS:
        return SYMBOLS[c]
    if ord(c) < 32 or ord(c) == 127:
        return ""
    return c if ord(c) < 256 else UNKNOWN


def escape(text: object) -> str:
    """`text` (str() of it) as LaTeX that prints it: `qemu-tcg/ide/e1000` stays as it is,
    `pi[k=17]` is `pi{[}k=17{]}` (a bracket after a row's `\\\\` would be read as its
    optional argument), `a_b` is `a\\_b`, `--verbose` is `-{}-verbose` (two hyphens in a row
    would print as a dash)."""
    s = str(text)
    return "".join(_char(c) + ("{}" if c == "-" and s[i + 1:i + 2] == "-" else "")
                   for i, c in enumerate(s))


def label(text: str) -> str:
    """A \\label{} key for `text`: lower case letters, digits and `-` only
    (`qemu-tcg/ide/e1000 · pi` -> `qemu-tcg-ide-e1000-pi`)."""
    key = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
    return key or "x"
