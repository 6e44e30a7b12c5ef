"""Pure parsers of what the cpu-suite's programs print (Debian 12's versions).

Each returns the figures that show the run did its whole work, or raises ParseError (one
line) on output that lacks them: an interrupted run, a failed one, an error text. Tested on
output captured here (tests/fixtures/workloads/<tool>/).
"""
from __future__ import annotations

import re

from ...base import ParseError


def parse_stockfish_bench(text: str) -> dict[str, float]:
    """`stockfish bench ...` (its summary is on stderr): nodes searched and nodes per second."""
    nodes = re.search(r"^Nodes searched\s*:\s*(\d+)\s*$", text, re.M)
    rate = re.search(r"^Nodes/second\s*:\s*(\d+)\s*$", text, re.M)
    if not nodes or not rate:
        raise ParseError("no 'Nodes searched' and 'Nodes/second' lines: stockfish bench "
                         "did not finish")
    if int(nodes.group(1)) == 0:
        raise ParseError("stockfish bench searched 0 nodes")
    return {"nodes": float(nodes.group(1)), "nodes_per_s": float(rate.group(1))}


def parse_hmmsearch(text: str) -> dict[str, float]:
    """hmmsearch's standard output: targets searched, hits above the inclusion threshold,
    and how many of those are the planted relatives (named `planted...`)."""
    if not re.search(r"^\[ok\]\s*$", text, re.M):
        raise ParseError("no '[ok]' line: hmmsearch did not finish")
    targets = re.search(r"^Target sequences:\s+(\d+)", text, re.M)
    table = re.search(r"^Scores for complete sequences.*?\n(.*?)\n\s*\n", text, re.M | re.S)
    if not targets or not table:
        raise ParseError("no 'Target sequences' line or hit table in hmmsearch's output")
    names = []
    for line in table.group(1).splitlines():
        if "inclusion threshold" in line:
            break
        fields = line.split()
        if len(fields) >= 9 and _is_number(fields[0]):    # not a header or a rule
            names.append(fields[8])
    return {"targets": float(targets.group(1)), "included": float(len(names)),
            "included_planted": float(sum(n.startswith("planted") for n in names))}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_povray(text: str) -> dict[str, float]:
    """povray's statistics (stderr): the image size, the pixels rendered, the rays traced."""
    if not re.search(r"^POV-Ray finished\s*$", text, re.M):
        raise ParseError("no 'POV-Ray finished' line: the render did not finish")
    size = re.search(r"^Image Resolution (\d+) x (\d+)", text, re.M)
    rendered = re.findall(r"Rendered (\d+) of (\d+) pixels", text)
    rays = re.search(r"^Rays:\s+(\d+)", text, re.M)
    if not size or not rendered or not rays:
        raise ParseError("no image resolution, 'Rendered N of M pixels' or 'Rays:' line in "
                         "povray's statistics")
    done, total = map(int, rendered[-1])
    if done != total:
        raise ParseError(f"povray rendered {done} of {total} pixels")
    return {"width": float(size.group(1)), "height": float(size.group(2)),
            "pixels": float(done), "rays": float(rays.group(1))}


def parse_x264(text: str) -> dict[str, float]:
    """x264's last line (stderr): `encoded N frames, F fps, R kb/s`."""
    found = re.search(r"^encoded (\d+) frames, ([\d.]+) fps, ([\d.]+) kb/s", text, re.M)
    if not found:
        raise ParseError("no 'encoded N frames' line: x264 did not finish")
    return {"frames": float(found.group(1)), "fps": float(found.group(2)),
            "kbps": float(found.group(3))}


def parse_gtp(text: str) -> dict[str, float]:
    """A GTP session's responses (gnugo --mode gtp): how many, how many were errors
    (`? ...`), and the moves among them (a board point or PASS)."""
    responses = re.findall(r"^([=?])(\d*)[ \t]*(.*)$", text, re.M)
    if not responses:
        raise ParseError("no GTP responses ('= ...' lines) in the output")
    errors = [body for mark, _, body in responses if mark == "?"]
    moves = sum(bool(re.fullmatch(r"[A-HJ-T]\d{1,2}|PASS", body.strip(), re.I))
                for mark, _, body in responses if mark == "=")
    return {"responses": float(len(responses)), "errors": float(len(errors)),
            "moves": float(moves)}
