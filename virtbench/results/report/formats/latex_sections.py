"""The LaTeX report's words around its tables (`--format latex`): the run, a tune run's
design and refinement, the headline, what differs from the reference, the method notes,
the inconclusive verdicts, the study's claims, the published figures not measured and the
warnings, each an unnumbered subsection with a list, said by the same pieces as the
Markdown report (fmt/) and escaped by fmt/latex_escape.py. Pure: lines of LaTeX."""
from __future__ import annotations

from ....foundations.model import RunReport
from ..fmt import differences, header, headline, lists, published, tune
from ..fmt.latex_escape import escape


def items(lines: list[str], emphasise_top: bool = False) -> list[str]:
    """An itemize of `lines`; a line indented by two spaces is an item of a list nested
    under the line before it; `emphasise_top`: the outer items in bold. Ragged right: a
    line of long names (`qemu-kvm/virtio-blk/virtio-net`) breaks where it can, never runs
    into the margin."""
    out, nested = [r"\begin{itemize}\raggedright"], False
    for line in lines:
        inner = line.startswith("  ")
        if inner and not nested:
            out.append(r"\begin{itemize}")
        elif nested and not inner:
            out.append(r"\end{itemize}")
        nested = inner
        text = escape(line.strip())
        out.append(rf"\item {text}" if inner or not emphasise_top
                   else rf"\item \textbf{{{text}}}")
    if nested:
        out.append(r"\end{itemize}")
    return out + [r"\end{itemize}", ""]


def section(title: str, lines: list[str], emphasise_top: bool = False) -> list[str]:
    """`\\subsection*{title}` and its list; nothing when there are no lines."""
    if not lines:
        return []
    return [rf"\subsection*{{{escape(title)}}}", *items(lines, emphasise_top)]


def run_lines(report: RunReport) -> list[str]:
    """The run in a small list under the title: its id, study, baseline, threshold, alpha,
    seed, analysis, and each environment's CPU, kernel and accelerator."""
    return [r"{\small", *items(header.header_lines(report)), "}", ""]


def tune_section(report: RunReport) -> list[str]:
    """A tune run's headline in bold, then its design, aliases, refinement, trade-off and
    note (the effects are the tune table's rows, formats/latex.py)."""
    lines = tune.lines(report)
    if not lines:
        return []
    effects = {f"{e.benchmark} · {e.metric}:" for e in [*report.tune.knobs,
                                                          *report.tune.interactions]}
    rest = [line for line in lines[1:] if not line.startswith(tuple(effects))]
    return [r"\subsection*{Tune}", rf"\textbf{{{escape(lines[0])}}}", "", *items(rest)]


def headline_section(report: RunReport) -> list[str]:
    return section("Headline", headline.lines(report), emphasise_top=True)


def differences_section(report: RunReport) -> list[str]:
    return section("What differs from the reference", differences.lines(report, wide=True))


def method_notes_section(report: RunReport) -> list[str]:
    return section("Method notes", lists.method_note_lines(report) if report.method_notes
                   else [])


def closing_sections(report: RunReport) -> list[str]:
    """After the benchmark tables: inconclusive verdicts, the study's claims, the published
    figures not measured here, the warnings (one item per kind)."""
    return (section("Inconclusive verdicts", lists.inconclusive_lines(report))
            + section("Claims of the study's source, checked on this run",
                      lists.claim_lines(report))
            + section("Published figures not measured in this run",
                      published.published_only_lines(report))
            + section("Warnings", [f"{g.kind}: {g.line}" for g in lists.groups(report)]))
