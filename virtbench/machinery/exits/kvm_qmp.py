"""KVM's own counters through QMP `query-stats` (QEMU >= 7.1 on a kernel with binary stats), pure.

A vCPU reply is one entry per vCPU: {"provider": "kvm", "qom-path": "/machine/unattached/device[0]",
"stats": [{"name": "exits", "value": 4277}, ...]}; a VM reply has no "qom-path". Values are counters (int),
booleans or histograms (lists): only the counters are summed. Under TCG the reply is an empty list.
The counters of an exit profile are the difference between a reply taken before the trial and one after.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from virtbench.machinery.exits.kvm_stat import KvmProfileError
from virtbench.foundations.model.profile import ReasonRow

EXIT_COUNTERS = ("exits", "io_exits", "mmio_exits", "halt_exits", "irq_exits", "irq_window_exits",
                 "nmi_window_exits", "signal_exits", "request_irq_exits", "insn_emulation", "hypercalls")


def query_stats_command(target: str = "vcpu", names: tuple[str, ...] | None = EXIT_COUNTERS) -> dict:
    """The QMP command asking KVM for `names` (all of its statistics with names=None)."""
    provider: dict = {"provider": "kvm"}
    if names:
        provider["names"] = list(names)
    return {"execute": "query-stats", "arguments": {"target": target, "providers": [provider]}}


@dataclass
class KvmStats:
    per_path: dict[str, dict[str, int]] = field(default_factory=dict)   # qom-path ("vm" for a VM reply)
    skipped: set[str] = field(default_factory=set)                      # names whose values are not counters

    @property
    def totals(self) -> dict[str, int]:
        """Each counter summed over the vCPUs (or the VM's own)."""
        out: dict[str, int] = {}
        for counters in self.per_path.values():
            for name, value in counters.items():
                out[name] = out.get(name, 0) + value
        return out


def parse_query_stats(reply: str | dict | list, provider: str = "kvm") -> KvmStats:
    """`reply` as QEMU sent it (JSON text, the decoded object, or its "return" list)."""
    data = _decode(reply)
    if isinstance(data, dict) and "error" in data:
        err = data["error"]
        raise KvmProfileError(f"QMP query-stats failed: {err.get('desc', err)}; "
                              "query-stats needs QEMU 7.1 or later")
    entries = data.get("return") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise KvmProfileError(f"QMP query-stats: no list of statistics in the reply ({str(data)[:80]!r})")
    stats = KvmStats()
    for entry in entries:
        if entry.get("provider") != provider:
            continue
        counters = stats.per_path.setdefault(entry.get("qom-path", "vm"), {})
        for item in entry.get("stats", []):
            value = item.get("value")
            if isinstance(value, int) and not isinstance(value, bool):
                counters[item["name"]] = value
            else:
                stats.skipped.add(item["name"])
    return stats


def counter_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """after - before for the counters in both; a counter going down means the two are not one VM's."""
    delta = {}
    for name in sorted(before.keys() & after.keys()):
        d = after[name] - before[name]
        if d < 0:
            raise KvmProfileError(
                f"QMP query-stats: {name} went down ({before[name]} -> {after[name]}): the two replies are not "
                "from the same running VM; take both from one QEMU, before and after the trial")
        delta[name] = d
    return delta


def diff_query_stats(before: str | dict | list | KvmStats, after: str | dict | list | KvmStats) -> dict[str, int]:
    """KVM's counters over a trial: the vCPU totals of `after` minus those of `before`."""
    b = before if isinstance(before, KvmStats) else parse_query_stats(before)
    a = after if isinstance(after, KvmStats) else parse_query_stats(after)
    return counter_delta(b.totals, a.totals)


# KVM's per-reason exit counters (each a part of "exits"); signal_exits and request_irq_exits count returns
# to QEMU, not VM exits, and are left out.
REASON_COUNTERS = {"io_exits": "io", "mmio_exits": "mmio", "halt_exits": "halt", "irq_exits": "irq",
                   "irq_window_exits": "irq_window", "nmi_window_exits": "nmi_window"}


def counter_reason_rows(delta: dict[str, int]) -> list[ReasonRow]:
    """Exits by reason from KVM's counters over a trial: io, mmio, halt, irq, irq_window, nmi_window and
    "other" (exits not in those), most first, zero counts left out. [] without the "exits" counter."""
    total = delta.get("exits")
    if not total:
        return []
    counts = {label: delta[name] for name, label in REASON_COUNTERS.items() if delta.get(name)}
    counts["other"] = max(total - sum(counts.values()), 0)
    rows = [ReasonRow(reason=label, count=n, share_pct=round(100.0 * n / total, 2)) for label, n in counts.items() if n]
    return sorted(rows, key=lambda r: (-r.count, r.reason))


def counter_notes(delta: dict[str, int]) -> list[str]:
    """One note for a profile: the exit counters of EXIT_COUNTERS that the reply had."""
    present = [f"{n}={delta[n]}" for n in EXIT_COUNTERS if n in delta]
    return [f"KVM counters over the trial (query-stats): {', '.join(present)}"] if present else []


def _decode(reply: str | dict | list):
    if isinstance(reply, (dict, list)):
        return reply
    try:
        return json.loads(reply)
    except (TypeError, ValueError) as e:
        raise KvmProfileError(f"QMP query-stats: the reply is not JSON ({e}): {str(reply)[:80]!r}") from None
