"""How much of a report to show and how wide (`virtbench report --wide`, --quiet, --verbose,
the terminal's width). The table reads all of it; the other formats read the verbosity."""
from __future__ import annotations

import os
from dataclasses import dataclass

COMPACT_WIDTH = 100      # the compact terminal report fits this many columns
WIDE_WIDTH = 200         # --wide written to a pipe or a file, when COLUMNS does not say


@dataclass(frozen=True)
class View:
    wide: bool = False            # every column: the per-benchmark detail tables
    width: int | None = None      # the columns the text is laid out in (None: 100, wide 200)
    verbosity: str = "normal"     # quiet, normal, verbose (report/fmt/lists.py VERBOSITIES)

    @property
    def columns(self) -> int:
        return self.width or (WIDE_WIDTH if self.wide else COMPACT_WIDTH)


def width_for(is_tty: bool, wide: bool, environ=None) -> int | None:
    """The console width: the terminal's own (None: rich asks it) on a terminal; else COLUMNS
    when set (a pipe honours the width it is given); else the compact report's 100 columns,
    or 200 for --wide."""
    if is_tty:
        return None
    columns = (os.environ if environ is None else environ).get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return WIDE_WIDTH if wide else COMPACT_WIDTH
