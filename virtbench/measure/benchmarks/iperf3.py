"""Pure parsers of iperf3's client JSON (-J), per iperf3 version.

virtbench reads iperf3 3.1 to 3.21 (real output of 3.1.3, 3.5, 3.7, 3.9, 3.10.1, 3.11, 3.12,
3.16, 3.18 and 3.21 is in tests/fixtures/network). What changes between them, from
src/iperf_api.c (iperf_print_results, get_results) at each tag of github:esnet/iperf:

- start.version is "iperf X.Y[.Z]" in all of them; anything else is refused in one line.
- TCP: end.sum_sent / end.sum_received hold the sender's and the receiver's sums. From 3.7
  every sum carries "sender": true when the client sent those streams (send direction), false
  when the server did (-R, and the reverse half of --bidir); 3.1-3.6 have no flag and no
  --bidir, so test_start.reverse tells the direction.
- --bidir: 3.7-3.10 write sum_sent and sum_received *twice* in one object (the second pair with
  sender false), which a plain JSON reader collapses to the last pair; 3.11 renamed the reverse
  pair sum_sent_bidir_reverse / sum_received_bidir_reverse. Every pair is read here.
- UDP: up to 3.10 the client's JSON has one end.sum whose bits_per_second is the *sender's*
  rate (total_sent / sender_time); its lost_packets and jitter_ms are the receiver's (get_results
  copies the server's "errors" and "jitter"), lost_percent = receiver-lost / sent. 3.11 added
  end.sum_received (commit 0d078c4a): bytes the receiver counted over the receiver's time, and
  the same loss and jitter. Before 3.11 nothing in that JSON is the receiver's byte count and
  the sender's rate is not it, but the receiver's datagrams are there: end.sum.packets (the
  sender's count) less end.sum.lost_packets (the receiver's gaps in the sequence numbers), each
  start.test_start.blksize bytes, over end.sum.seconds (`udp_received_rate`). The client's
  intervals are the sender's and carry no loss, so end.sum is the only place. Datagrams still in
  flight when the test ends count as received: on 3.11 and 3.12 the computed rate is within
  0.1 % of the receiver's own sum_received (tests/unit/benchmarks/test_iperf3_versions.py).
"""
from __future__ import annotations

import json
import re

from .base import ParseError, number

MBIT = 1e6
READS = ((3, 1), (3, 21))           # the first and last iperf3 versions virtbench reads
FLAGGED = (3, 7)                    # sums carry "sender"; --bidir exists
UDP_RECEIVER_SUM = (3, 11)          # end.sum_received for UDP
_VERSION = re.compile(r"^iperf (\d+)\.(\d+)(?:\.(\d+))?")
_TCP_SUMS = ("sum_sent", "sum_received", "sum_sent_bidir_reverse", "sum_received_bidir_reverse")


class _Obj(dict):
    """A JSON object that also keeps every (key, value) pair in order, duplicates included."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.pairs = pairs


def version_text(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def iperf3_doc(stdout: str) -> tuple[_Obj, tuple[int, ...]]:
    """The client's JSON document and the iperf3 version that wrote it, or ParseError."""
    start = stdout.find("{")
    if start < 0:
        raise ParseError("no iperf3 JSON in the output")
    try:
        data = json.loads(stdout[start:], object_pairs_hook=_Obj)
    except ValueError as exc:
        raise ParseError(f"malformed iperf3 JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ParseError("iperf3 JSON is not an object")
    if data.get("error"):
        raise ParseError(f"iperf3: {data['error']}")
    text = (data.get("start") or {}).get("version")
    m = _VERSION.match(text) if isinstance(text, str) else None
    low, high = READS
    if not m:
        raise ParseError(f"iperf3 JSON names no version virtbench knows (start.version={text!r}); "
                         f"virtbench reads iperf3 {version_text(low)} to {version_text(high)}")
    version = tuple(int(g) for g in m.groups() if g is not None)
    if not low <= version[:2] <= high:
        raise ParseError(f"iperf3 {version_text(version)} is not one virtbench reads "
                         f"({version_text(low)} to {version_text(high)})")
    if not isinstance(data.get("end"), dict) or not data["end"]:
        raise ParseError(f"iperf3 {version_text(version)} JSON has no end summary")
    return data, version


def parse_iperf3_tcp(stdout: str) -> dict[str, float]:
    """Mbit/s per direction as the receiver counted it, and the senders' retransmits.

    send = environment -> host side (the client's streams), receive = host side -> environment
    (-R, or the reverse half of --bidir). retransmits is left out when a sender's sum has none.
    """
    data, version = iperf3_doc(stdout)
    ver = version_text(version)
    reverse = bool((data.get("start") or {}).get("test_start", {}).get("reverse"))
    received: dict[str, float] = {}
    sent: dict[str, dict] = {}
    for key, block in data["end"].pairs:
        if key not in _TCP_SUMS:
            continue
        if not isinstance(block, dict):
            raise ParseError(f"iperf3 {ver}: end.{key} is not an object")
        if "sender" in block:
            direction = "send" if block["sender"] else "receive"
        elif version < FLAGGED and not key.endswith("_bidir_reverse"):
            direction = "receive" if reverse else "send"
        else:
            raise ParseError(f"iperf3 {ver}: end.{key} has no sender flag")
        if key.startswith("sum_received"):
            if direction in received:
                raise ParseError(f"iperf3 {ver}: two receiver sums for the {direction} direction")
            received[direction] = number(block, "bits_per_second") / MBIT
        else:
            if direction in sent:
                raise ParseError(f"iperf3 {ver}: two sender sums for the {direction} direction")
            sent[direction] = block
    if not received or set(received) != set(sent):
        raise ParseError(f"iperf3 {ver} JSON lacks a sum_sent/sum_received pair "
                         f"(sender sums: {sorted(sent)}, receiver sums: {sorted(received)})")
    out = {f"{d}_mbit_s": v for d, v in received.items()}
    if all("retransmits" in b for b in sent.values()):
        out["retransmits"] = sum(number(b, "retransmits") for b in sent.values())
    return out


def udp_has_receiver_rate(version: tuple[int, ...]) -> bool:
    return version[:2] >= UDP_RECEIVER_SUM


UDP_METHOD = ("(end.sum.packets - end.sum.lost_packets) x start.test_start.blksize x 8 / "
              "end.sum.seconds")


def udp_received_rate(data: dict) -> float | None:
    """Bits per second the receiver got, from a pre-3.11 client JSON (see the module
    docstring): None when the JSON lacks a field the computation needs."""
    summary = data["end"].get("sum")
    test = ((data.get("start") or {}).get("test_start") or {})
    try:
        packets = number(summary, "packets")
        lost = number(summary, "lost_packets")
        seconds = number(summary, "seconds")
        blksize = number(test, "blksize")
    except ParseError:
        return None
    if seconds <= 0 or blksize <= 0 or not 0 <= lost <= packets:
        return None
    return (packets - lost) * blksize * 8 / seconds


def parse_iperf3_udp(stdout: str) -> dict[str, float]:
    """UDP as the receiver counted it: throughput, loss %, jitter ms. From 3.11 the throughput
    is end.sum_received's; before, it is computed from the datagrams (`udp_received_rate`)."""
    data, version = iperf3_doc(stdout)
    ver = version_text(version)
    end = data["end"]
    if udp_has_receiver_rate(version):
        summary = end.get("sum_received")
        if not isinstance(summary, dict):
            raise ParseError(f"iperf3 {ver} UDP JSON has no end.sum_received")
        return {"udp_mbit_s": number(summary, "bits_per_second") / MBIT,
                "loss_pct": number(summary, "lost_percent"),
                "jitter_ms": number(summary, "jitter_ms")}
    summary = end.get("sum")
    if not isinstance(summary, dict) or "lost_percent" not in summary:
        raise ParseError(f"iperf3 {ver} UDP JSON has no end.sum with the receiver's loss")
    out = {"loss_pct": number(summary, "lost_percent"), "jitter_ms": number(summary, "jitter_ms")}
    rate = udp_received_rate(data)
    if rate is not None:
        out["udp_mbit_s"] = rate / MBIT
    return out


def udp_warnings(stdout: str) -> list[tuple[str, str]]:
    """The note a pre-3.11 UDP result calls for: how its received throughput was computed, or
    that it could not be."""
    try:
        data, version = iperf3_doc(stdout)
    except ParseError:
        return []
    if udp_has_receiver_rate(version):
        return []
    ver = version_text(version)
    if udp_received_rate(data) is not None:
        return [("method", f"udp_mbit_s computed: iperf3 {ver} reports no receiver-side UDP "
                           f"throughput (3.11 added it), so it is {UDP_METHOD}, the receiver's "
                           "datagrams (loss_pct and jitter_ms are the receiver's)")]
    return [("unmeasured", f"iperf3 {ver} reports no receiver-side UDP "
                           "throughput (only the sender's rate; iperf3 3.11 added it) and its "
                           "JSON lacks the packets, lost packets, block size or time to compute "
                           "it: udp_mbit_s left out, loss_pct and jitter_ms are the receiver's")]
