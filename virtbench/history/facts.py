"""Which fingerprint facts changed between two runs of a series: INTERIM.

`changed_facts` is the one place the history asks "did a fact change here?". It reads a few
keys of each environment's stored metadata and its options. It is to be replaced, in this
one function, by the fact finder (virtbench/analysis/differences.py) once that is merged:
`changed_facts` then returns what it finds, as HistoryFact records.
"""
from __future__ import annotations

from ..model.history import HistoryFact

# (the fact's name, the metadata keys that hold it, first present wins)
FACT_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("qemu_version", ("qemu_version",)),
    ("guest_kernel", ("guest_kernel", "guest_kernel_package")),
    ("host_kernel", ("host_kernel",)),
    ("kernel", ("kernel",)),
    ("firmware", ("firmware", "bios")),
    ("cpu_model", ("cpu_model",)),
    ("microcode", ("microcode",)),
    ("accel", ("accel",)),
    ("knobs", ("knobs_read",)),
    ("tunings", ("tunings",)),
)


def _value(md: dict, keys: tuple[str, ...]):
    for k in keys:
        if md.get(k) is not None:
            return md[k]
    return None


def changed_facts(before: dict, after: dict, where: str = "environment") -> list[HistoryFact]:
    """The facts that differ between two environments as stored (dicts with "metadata" and
    "options"); pure. A fact neither run recorded is no change."""
    out = []
    md_a, md_b = before.get("metadata") or {}, after.get("metadata") or {}
    for name, keys in FACT_KEYS:
        a, b = _value(md_a, keys), _value(md_b, keys)
        if a != b:
            out.append(HistoryFact(key=name, where=where, before=a, after=b))
    opt_a, opt_b = before.get("options") or {}, after.get("options") or {}
    for k in sorted(set(opt_a) | set(opt_b)):
        if k != "name" and opt_a.get(k) != opt_b.get(k):
            out.append(HistoryFact(key=f"option {k}", where=where, before=opt_a.get(k),
                                   after=opt_b.get(k)))
    return out
