"""A study's [[claim]] tables: what its published paper claims, in a form a run can check.

    [[claim]]
    text = "AHCI reads 4 KiB at queue depth 32 at least 1.5 times as fast as IDE"
    source = "CDM table"
    benchmark = "cdm"                       # a [[benchmark]] label
    metric = "rnd4k_qd32_read_mb_s"         # one of that benchmark's metrics
    environments = { ahci = "qemu:disk=ahci,cache=writeback", ide = "qemu:disk=ide,cache=writeback" }
    holds_if = "ahci / ide >= 1.5"

`environments` names the study's environments (by their spec, as [[published]] does) for
`holds_if`, one of:
- `A / B >= k` (or `>`, `<=`, `<`): the ratio of A's to B's value of the metric;
- `A > B > C` (or `<`): an ordering of the values, each neighbour against the next;
- `A == B`: within ±threshold of each other (the study's, or `within = 5` %).
Names are letters, digits, `_`, `-` and `.`, starting with a letter or `_`. The analysis
(analysis/claims.py) checks each on the run with the statistics of the verdicts.
Types and ranges are checked by study_schema.ClaimTable; this module checks what refers to
the rest of the study and parses `holds_if`. Pure."""
from __future__ import annotations

import re

from ..measure import benchmarks
from ..core.errors import VirtbenchError

NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"
_RATIO = re.compile(rf"^\s*({NAME})\s*/\s*({NAME})\s*(>=|<=|>|<)\s*({_NUMBER})\s*$")
_WITHIN = re.compile(rf"^\s*({NAME})\s*==\s*({NAME})\s*$")
_NAME_ONLY = re.compile(rf"^{NAME}$")
FORMS = '"ahci / ide >= 1.5", "virtio > e1000 > rtl8139" or "kvm == xen"'


def parse_relation(text: str) -> dict:
    """`holds_if` as {"kind": "ratio", "left", "right", "op" (">=" | "<="), "bound"} |
    {"kind": "order", "names": [...], "op" (">" | "<")} | {"kind": "within", "left",
    "right"}; VirtbenchError naming the forms when it is none of them."""
    m = _RATIO.match(text)
    if m:
        bound = float(m[4])
        if bound <= 0:
            raise VirtbenchError(f"holds_if {text!r}: the bound of a ratio must be above 0")
        return {"kind": "ratio", "left": m[1], "right": m[2],
                "op": ">=" if m[3].startswith(">") else "<=", "bound": bound}
    m = _WITHIN.match(text)
    if m:
        return {"kind": "within", "left": m[1], "right": m[2]}
    ops = set(re.findall(r"[<>]", text))
    names = [n.strip() for n in re.split(r"[<>]", text)]
    if len(ops) == 1 and len(names) >= 2 and all(_NAME_ONLY.match(n) for n in names) \
            and "=" not in text:
        return {"kind": "order", "names": names, "op": ops.pop()}
    raise VirtbenchError(f"holds_if {text!r} is not a relation; write e.g. {FORMS}")


def relation_names(relation: dict) -> list[str]:
    return relation["names"] if relation["kind"] == "order" else \
        [relation["left"], relation["right"]]


def claims(entries: list, spec_of, specs: set[str], labels: set[str],
           bench_of: dict[str, str]) -> list[dict]:
    """The study's claims, checked and parsed (ClaimTable has checked types): each as the
    run stores it. `spec_of(text)` normalises a spec (VirtbenchError if it does not parse);
    `specs` the study's environment specs (normalised), `labels` its benchmark labels,
    `bench_of` label -> benchmark name."""
    out = []
    for i, c in enumerate(entries, 1):
        where = f"claim[{i}]"
        try:
            relation = parse_relation(c.holds_if)
        except VirtbenchError as exc:
            raise VirtbenchError(f"{where}: {exc}") from None
        envs = {}
        for name, spec in c.environments.items():
            if not _NAME_ONLY.match(name):
                raise VirtbenchError(f"{where}: environments: {name!r} is not a name; use "
                                     "letters, digits, _ - . (e.g. ahci = \"qemu:disk=ahci\")")
            try:
                norm = spec_of(spec)
            except VirtbenchError as exc:
                raise VirtbenchError(f"{where}: environments: {name}: {exc}") from None
            if norm not in specs:
                raise VirtbenchError(f"{where}: environments: {name} = {spec!r} is not the spec "
                                     "of any [[environment]] of this study; copy its spec")
            envs[name] = norm
        missing = [n for n in relation_names(relation) if n not in envs]
        if missing:
            raise VirtbenchError(f"{where}: holds_if names {missing[0]!r}, which environments "
                                 f"does not define (it defines {', '.join(envs) or 'none'})")
        if len(set(relation_names(relation))) != len(relation_names(relation)):
            raise VirtbenchError(f"{where}: holds_if {c.holds_if!r} names an environment "
                                 "twice; compare different ones")
        if c.within is not None and relation["kind"] != "within":
            raise VirtbenchError(f"{where}: within = {c.within:g} applies to holds_if "
                                 "\"A == B\" only; drop it")
        if c.benchmark not in labels:
            raise VirtbenchError(f"{where}: benchmark {c.benchmark!r} is not the label of any "
                                 f"[[benchmark]] (labels: {', '.join(sorted(labels))})")
        bench = benchmarks.REGISTRY.get(bench_of[c.benchmark])
        metrics = [m.name for m in bench.metrics] if bench else []
        if metrics and c.metric not in metrics:
            raise VirtbenchError(f"{where}: metric {c.metric!r} is not a metric of "
                                 f"{c.benchmark} ({', '.join(metrics)})")
        if relation["kind"] == "within":
            relation["within_pct"] = c.within
        out.append({"text": c.text, "source": c.source, "benchmark": c.benchmark,
                    "metric": c.metric, "environments": envs, "holds_if": c.holds_if,
                    "relation": relation, "note": c.note})
    return out
