"""A paper figure as the bytes of a file (docs/papers.md): its formats (pdf, svg, png), the
metadata each carries (the run's id, virtbench's version, the first environment's
fingerprint digest), and file names safe for any label (`qemu-tcg/ide/e1000`, `pi[k=17]`).

PDF with TrueType fonts embedded (pdf.fonttype 42), SVG with its text as paths (no font
needed to show it), PNG at 300 dpi with the metadata as text chunks. No date is written: the
same report gives the same bytes. Pure: bytes out, nothing written (the CLI writes them)."""
from __future__ import annotations

import hashlib
import io
import json
import re

import matplotlib

from .... import __version__
from ....core.errors import VirtbenchError
from ....foundations.model import RunReport
from .style import PAPER_RC, PaperFigure

FORMATS = ("pdf", "svg", "png")
PNG_DPI = 300
NAME_MAX = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def formats(text: str) -> list[str]:
    """--format pdf,svg,png as a list in the order given, once each; one line for a bad one."""
    asked = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in asked if f not in FORMATS]
    if bad or not asked:
        raise VirtbenchError(f"figures --format {text}: give one or more of "
                             f"{','.join(FORMATS)}, comma-separated (e.g. --format pdf,png)")
    return list(dict.fromkeys(asked))


def safe_name(name: str) -> str:
    """A file name's stem for `name`: runs of anything but letters, digits, `.`, `_` and `-`
    become `_`; no leading dot or dash (never hidden, never `..`, never a flag); at most
    NAME_MAX characters."""
    stem = _UNSAFE.sub("_", name).lstrip(".-")[:NAME_MAX].rstrip("_")
    return stem or "figure"


def file_names(names: list[str], fmt: str) -> list[str]:
    """Each figure's file name in format `fmt`, in order: two names that become the same
    stem get `-2`, `-3`... (case folded: one file on a case-insensitive file system)."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        stem = safe_name(name)
        key = stem.lower()
        seen[key] = seen.get(key, 0) + 1
        out.append(f"{stem}.{fmt}" if seen[key] == 1 else f"{stem}-{seen[key]}.{fmt}")
    return out


def fingerprint_digest(report: RunReport) -> str | None:
    """The first environment's fingerprint digest: its own `digest` when the fingerprint
    has one, else the SHA-256 (16 hex digits) of the fingerprint as canonical JSON; None
    when the report has no environment or its fingerprint is empty."""
    if not report.environments or not report.environments[0].metadata:
        return None
    meta = report.environments[0].metadata
    if isinstance(meta.get("digest"), str):
        return meta["digest"]
    text = json.dumps(meta, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def description(report: RunReport) -> str:
    """The line every file carries: run, virtbench's versions, fingerprint."""
    parts = [f"virtbench run {report.run.id}", f"virtbench {__version__}"]
    if report.run.virtbench_version and report.run.virtbench_version != __version__:
        parts.append(f"run by virtbench {report.run.virtbench_version}")
    digest = fingerprint_digest(report)
    if digest:
        parts.append(f"fingerprint {digest} ({report.environments[0].label})")
    return "; ".join(parts)


def metadata(report: RunReport, name: str, fmt: str) -> dict[str, str | None]:
    """savefig(metadata=...) for `fmt`: PDF's Info (Title, Subject, Keywords, Creator), SVG's
    Dublin Core (Title, Description, Identifier, Creator), PNG's text chunks."""
    said, creator = description(report), f"virtbench {__version__}"
    if fmt == "pdf":
        return {"Title": name, "Subject": said, "Keywords": f"virtbench run {report.run.id}",
                "Creator": creator, "CreationDate": None}
    if fmt == "svg":
        return {"Title": name, "Description": said, "Identifier": report.run.id,
                "Creator": creator, "Date": None}
    return {"Title": name, "Description": said, "Software": creator}


def render(fig: PaperFigure, fmt: str, report: RunReport) -> bytes:
    """The figure as the bytes of a `fmt` file, its metadata in."""
    buf = io.BytesIO()
    with matplotlib.rc_context(PAPER_RC):
        fig.figure.savefig(buf, format=fmt, metadata=metadata(report, fig.name, fmt),
                           dpi=PNG_DPI if fmt == "png" else "figure")
    return buf.getvalue()


def rendered(figs: list[PaperFigure], fmts: list[str], report: RunReport
             ) -> list[tuple[str, bytes]]:
    """Every figure in every format: (file name, bytes), by format then figure."""
    out = []
    for fmt in fmts:
        names = file_names([f.name for f in figs], fmt)
        out += [(n, render(f, fmt, report)) for n, f in zip(names, figs)]
    return out
