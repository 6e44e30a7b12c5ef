"""HPC Challenge 1.5.0's hpccoutf.txt, read by pure functions.

hpcc appends one run's report to hpccoutf.txt: a section per test (`Begin of HPL section.`
... `End of HPL section.`), then `Begin of Summary section.`, key=value lines, `End of
Summary section.`. A test that did not run keeps hpcc's initial value in the summary (-1, or
-1 for HPL_Tflops: -1000 Gflop/s x 1e-3), so a value counts only when it is a finite number
above zero. `Success=0` means a test failed its own check (HPL's residual among them).

A run that did not finish (killed, an MPI abort, an input file HPL refused) has no summary:
the parser says which section it stopped in, in one line. A finished run whose HPL residual
check FAILED, or whose PTRANS or RandomAccess check failed, is refused the same way: its
figures come with the error as evidence (`ParseError.partial`), never as a result.

What the report alone cannot show: when HPL refuses hpccinf.txt, hpcc 1.5.0 says so on
stderr only, runs HPL's built-in defaults and finishes with Success=1 (captured here:
bad-grid-long). The trial therefore also checks the report's ranks and N against its plan
and reads HPL's complaint from stderr (hpcc.py `judged`).
"""
from __future__ import annotations

import math
import re

from ..base import ParseError

# metric -> (summary key, scale): what the benchmark reports, from the summary section
SUMMARY_KEYS: dict[str, tuple[str, float]] = {
    "hpl_gflops": ("HPL_Tflops", 1000.0),
    "dgemm_gflops": ("StarDGEMM_Gflops", 1.0),
    "randomaccess_gups": ("MPIRandomAccess_GUPs", 1.0),
    "ptrans_gbs": ("PTRANS_GBs", 1.0),
    "fft_gflops": ("MPIFFT_Gflops", 1.0),
    "ring_latency_us": ("RandomlyOrderedRingLatency_usec", 1.0),
    "ring_bandwidth_gbs": ("RandomlyOrderedRingBandwidth_GBytes", 1.0),
    "stream_triad_gbs": ("StarSTREAM_Triad", 1.0),
}
# b_eff's ring tests need two ranks: a one-rank run (a one-CPU guest with ranks=0) leaves them
# at -1, which is no failure; the trial goes without them and says so (hpcc.py)
RING = ("ring_latency_us", "ring_bandwidth_gbs")
# HPCC's own rule for RandomAccess: a run with more than 1 % of the table wrong failed
RANDOMACCESS_MAX_ERRORS = 0.01

SUMMARY = re.compile(r"^Begin of Summary section\.\s*$(.*?)^End of Summary section\.\s*$",
                     re.M | re.S)
BEGIN = re.compile(r"^Begin of (\w+) section\.\s*$", re.M)
HPL_CHECK = re.compile(r"^\|\|Ax-b\|\|_oo/\(eps\*\(.*\)\*N\)=\s*(\S+)\s+\.+\s+(PASSED|FAILED)\s*$",
                       re.M)
THRESHOLD = re.compile(r"residuals are less than\s+(\S+)")


def summary(text: str) -> dict[str, str]:
    """The summary section's key=value pairs (pure); ParseError when the run did not finish
    (no summary: the section it stopped in named) or the text holds more than one run."""
    found = SUMMARY.findall(text)
    if len(found) > 1:
        raise ParseError(f"hpccoutf.txt holds {len(found)} runs (hpcc appends to it); "
                         "a trial reads a file of its own run only")
    if not found:
        raise ParseError(stopped_where(text))
    pairs = {}
    for line in found[0].splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            pairs[key.strip()] = value.strip()
    return pairs


def stopped_where(text: str) -> str:
    """One line: why a report without a summary is no result (pure)."""
    sections = BEGIN.findall(text)
    if not text.strip():
        return "hpcc wrote no hpccoutf.txt (it did not start: see the trial's stderr)"
    if not sections:
        error = next((line.strip() for line in text.splitlines()
                      if "error" in line.lower() or "illegal" in line.lower()), None)
        return ("hpcc stopped before its first test"
                + (f": {error}" if error else " (its input file was refused or it was killed)"))
    return (f"no summary section: hpcc stopped in its {sections[-1]} section "
            "(interrupted or failed), so none of its figures is a result")


def figures(pairs: dict[str, str]) -> dict[str, float]:
    """The metrics the summary holds as finite numbers above zero (pure); a test hpcc did
    not run keeps its -1 and is left out."""
    out = {}
    for metric, (key, scale) in SUMMARY_KEYS.items():
        try:
            value = float(pairs[key]) * scale
        except (KeyError, ValueError):
            continue
        if math.isfinite(value) and value > 0:
            out[metric] = value
    return out


def section(text: str, name: str) -> str:
    """The text between `Begin of NAME section.` and its end ('' when absent; pure)."""
    match = re.search(rf"^Begin of {name} section\.\s*$(.*?)^End of {name} section\.\s*$",
                      text, re.M | re.S)
    return match.group(1) if match else ""


def hpl_problem(text: str) -> str | None:
    """Why HPL's residual check does not count as passed, or None (pure)."""
    checks = HPL_CHECK.findall(section(text, "HPL"))
    if not checks:
        return "HPL printed no residual check (it did not solve its system)"
    failed = [resid for resid, verdict in checks if verdict == "FAILED"]
    if failed:
        limit = THRESHOLD.search(section(text, "HPL"))
        return (f"HPL's residual check FAILED (scaled residual {failed[0]}, threshold "
                f"{limit.group(1) if limit else '?'}): the solution is wrong, so its "
                "Gflop/s is no result")
    return None


def other_problem(text: str, pairs: dict[str, str]) -> str | None:
    """Why PTRANS or RandomAccess failed its own check, or None (pure)."""
    ptrans = re.search(r"^\s*(\d+) tests completed and failed residual checks",
                       section(text, "PTRANS"), re.M)
    if ptrans and int(ptrans.group(1)) > 0:
        return f"PTRANS failed its residual check in {ptrans.group(1)} test(s)"
    try:
        errors = float(pairs.get("MPIRandomAccess_ErrorsFraction", "0"))
    except ValueError:
        errors = math.inf
    if not errors <= RANDOMACCESS_MAX_ERRORS:
        return (f"MPIRandomAccess found {pairs.get('MPIRandomAccess_ErrorsFraction')} of its "
                "table wrong (HPCC allows 1 %)")
    if pairs.get("Success") != "1":
        return f"hpcc reports Success={pairs.get('Success', '(missing)')}: a test failed its check"
    return None


def parse_hpcc(text: str) -> dict[str, float]:
    """hpccoutf.txt -> the benchmark's metrics (pure). ParseError (one line) for a run that
    did not finish, failed a check, or lacks a metric; its figures as `partial`. A run on
    one rank has no ring metrics (RING), and lacks nothing for that."""
    pairs = summary(text)
    values = figures(pairs)
    problem = hpl_problem(text) or other_problem(text, pairs)
    if problem:
        raise ParseError(problem, partial=values)
    missing = [m for m in SUMMARY_KEYS if m not in values
               and not (m in RING and run_shape(pairs)[0] == 1)]
    if missing:
        key = SUMMARY_KEYS[missing[0]][0]
        raise ParseError(f"the summary has no positive {key} ({len(missing)} metric(s) "
                         "missing): that test did not run", partial=values)
    return values


def hpl_input_error(stderr: str) -> str | None:
    """HPL's complaint about its input (`HPL ERROR ... >>> Need at least 4 processes <<<` on
    stderr), or None (pure). hpcc 1.5.0 goes on with HPL's defaults after it (seen here), so
    a trial's error names the complaint."""
    match = re.search(r"^HPL ERROR .*\n>>> (.*?) <<<", stderr, re.M)
    return match.group(1).strip() if match else None


def run_shape(pairs: dict[str, str]) -> tuple[int, int]:
    """(MPI ranks, HPL's N) the summary says the run had; (-1, -1) where missing (pure)."""
    def integer(key):
        try:
            return int(pairs[key])
        except (KeyError, ValueError):
            return -1
    return integer("CommWorldProcs"), integer("HPL_N")


DASHES = re.compile(r"^-{20,}\s*$", re.M)


def mpi_start_error(stderr: str) -> str | None:
    """One line for an Open MPI that could not start (its first help block, between lines of
    dashes: the indented detail when it has one, else its first sentence), or None (pure).
    Seen here in gVisor: no CPU topology in its sysfs ("topology discovery failed"), and,
    given one, no PMIx listener."""
    blocks = DASHES.split(stderr)
    if len(blocks) < 3:
        return None
    block = blocks[1].strip()
    detail = [line.strip() for line in block.splitlines()
              if line.startswith("  ") and line.strip() and not line.strip().startswith("-->")]
    if detail:
        return f"Open MPI could not start: {detail[0]}"
    sentence = " ".join(block.split()).split(". ")[0].rstrip(".")
    return f"Open MPI could not start: {sentence}" if sentence else None
