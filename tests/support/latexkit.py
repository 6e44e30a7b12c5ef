"""pdflatex for the live tests: compile a LaTeX report, read its text back, render its pages
to PNG (Debian's texlive-latex-recommended and poppler-utils; `bash scripts/setup.sh --all`
installs them)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

TOOLS = ("pdflatex", "pdftoppm", "pdftotext")
needs_latex = pytest.mark.skipif(
    not all(shutil.which(t) for t in TOOLS),
    reason="pdflatex, pdftoppm and pdftotext: apt-get install texlive-latex-recommended "
           "poppler-utils")


def compile_tex(tex: str, where: Path) -> tuple[Path, str]:
    """(the PDF, its text) of `tex`, compiled in `where`; fails with pdflatex's error, or
    when a line runs into the margin."""
    (where / "report.tex").write_text(tex)
    for _ in range(2):                     # twice: the labels settle
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                               "report.tex"], cwd=where, capture_output=True, text=True,
                              timeout=120)
        log = (where / "report.log").read_text(errors="replace")
        errors = [line for line in log.splitlines() if line.startswith("!")]
        assert done.returncode == 0 and not errors, errors or done.stdout[-2000:]
    assert "Overfull \\hbox" not in log, log[log.index("Overfull \\hbox"):][:600]
    text = subprocess.run(["pdftotext", "-layout", "report.pdf", "-"], cwd=where,
                          capture_output=True, text=True, check=True, timeout=60).stdout
    return where / "report.pdf", text


def png_pages(pdf: Path) -> list[Path]:
    """The PDF's pages as PNG files beside it (50 dpi), each checked to be a PNG."""
    subprocess.run(["pdftoppm", "-png", "-r", "50", pdf.name, "page"], cwd=pdf.parent,
                   check=True, timeout=60)
    pages = sorted(pdf.parent.glob("page*.png"))
    assert pages and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pages)
    return pages
