"""What differs between two environments: the facts of their fingerprints. Pure.

An environment is given as the store keeps it, a plain mapping: `kind`, `spec`, `options`
(as resolved), `metadata` (its fingerprint, knobs and tunings read back); beside it, its
run's host facts (`host_facts`): the host name, virtbench's kernel build, and what the run's
bare-metal environment says of the host (CPU, microcode, OS, kernel). `differ(reference,
environment)` returns the facts whose values differ, each with its plain name and both
values ("QEMU 7.2.22 → 10.0.2"): the reference's first, the environment's after the arrow.
It serves a report (each environment against its reference), `compare RUN_A RUN_B` (one
environment in two runs: run A is the reference) and a history (consecutive runs of one
environment).

The facts (FACTS, in the order every format lists them): first the environment's own -- the
accelerator, QEMU (its version, from QMP, its binary), firmware, machine type, the guest's
CPU model, the guest's Linux (release, Debian suite, OS), the image recipe, a container's
runtime and engine, then each option as resolved or as written in the spec (`name` aside: a
label is no fact), each knob and each tuning as read back -- then the host's: host name,
host kernel, host OS, host CPU, microcode, transparent huge pages, virtbench's kernels (the
C kernels' sources hash and the compiler that built them).

The rule, by the kinds of the two sides:
- Same kind (a guest against another guest, bare metal against its twin, one environment
  in two runs): every fact counts. A fact recorded on one side only is "unrecorded": a
  store written before virtbench recorded it says nothing of it, so it is listed apart and
  never counted as a difference. An option written in one side's spec only (`instances=2`)
  is a difference against the other's default.
- Different kinds: the kind difference is said plainly, first ("a QEMU guest (TCG) vs bare
  metal"), and stands for every fact only one kind has (a guest's QEMU, firmware, guest
  Linux, options). The host facts still count (in one run they are equal; across runs a
  new host kernel is news). When both kinds are QEMU guests (qemu, libvirt, nested), their
  QEMU facts recorded on both sides count too; options never do (another kind, other
  options).

Changes and separation. Facts set by one option (QEMU's version and binary by `binary`;
guest Linux, its suite and the image recipe by `linux`) are one change; every other fact is
a change of its own. More than one change at once confounds them: the options that differ
on both sides (`separable`) can be taken apart by a study with one environment per option
(analysis/separate.py); the other changes (a host's kernel, microcode) cannot, in one run.

The line (PairDifferences.line, what the text formats print): "q10 vs qemu: QEMU 7.2.22 →
10.0.2; everything else equal" -- one fact per change (its first in FACTS order, the
others in --wide, Markdown and JSON), at most MAX_SHOWN changes, then how many more.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ....foundations.model.differences import Fact, PairDifferences

BARE = {"native"}
CONTAINERS = {"container", "gvisor"}
QEMU_GUESTS = {"qemu", "libvirt", "nested"}
KIND_WORDS = {"native": "bare metal", "qemu": "a QEMU guest", "libvirt": "a libvirt domain",
              "nested": "a guest inside a guest", "container": "a container",
              "gvisor": "a gVisor sandbox", "ssh": "a machine over SSH"}
MAX_SHOWN = 3
NOT_OPTIONS = {"name"}                      # a label, not a fact
DEFAULTS = {"instances": "1"}               # an option every kind takes, unwritten
NOT_KNOBS = {"scratch_file"}                # a path made new by every boot
KNOB_OPTIONS = {"iothreads": "iothread", "iothread": "iothread", "disk_queues": "queues",
                "nic_queues": "queues", "nic_mq": "queues", "guest_disk_queues": "queues",
                "guest_nic_queues": "queues", "cpu": "cpu", "cpu_model_id": "cpu",
                "backing_protocol": "backing"}


@dataclass(frozen=True)
class Side:
    """One side of a comparison: an environment (kind, spec, options, metadata) and its
    run's host facts."""

    kind: str
    spec_options: Mapping[str, str]
    options: Mapping[str, Any]
    metadata: Mapping[str, Any]
    host: Mapping[str, Any]

    @classmethod
    def of(cls, env: Mapping, host: Mapping | None = None) -> "Side":
        spec = str(env.get("spec") or "")
        _, _, rest = spec.partition(":")
        spec_options = dict(item.split("=", 1) for item in rest.split(",") if "=" in item)
        return cls(kind=str(env.get("kind") or spec.partition(":")[0]),
                   spec_options=spec_options, options=dict(env.get("options") or {}),
                   metadata=dict(env.get("metadata") or {}), host=dict(host or {}))

    @property
    def guest(self) -> bool:
        return self.kind not in BARE | CONTAINERS

    @property
    def sees_host(self) -> bool:
        """Does its own fingerprint describe the host (bare metal, a container)?"""
        return self.kind in BARE | CONTAINERS


def _md(key: str) -> Callable[[Side], Any]:
    return lambda s: s.metadata.get(key)


def _first(*readers: Callable[[Side], Any]) -> Callable[[Side], Any]:
    def read(s: Side) -> Any:
        for r in readers:
            v = r(s)
            if v not in (None, "", [], {}):
                return v
        return None
    return read


def _guest_md(key: str) -> Callable[[Side], Any]:
    return lambda s: s.metadata.get(key) if s.guest else None


def _host_md(key: str) -> Callable[[Side], Any]:
    """The host's fact: its own fingerprint's where it describes the host, else the run's."""
    return lambda s: s.metadata.get(key) if s.sees_host and s.metadata.get(key) not in (
        None, "") else s.host.get(key)


def _qemu_binary(s: Side) -> Any:
    argv = s.metadata.get("qemu_argv") or []
    return s.metadata.get("qemu_binary") or (argv[0] if argv else None)


def _runtime(s: Side) -> Any:
    rt = s.metadata.get("runtime") if s.kind in CONTAINERS else None
    version = s.metadata.get("runtime_version")
    return f"{rt} {version}" if rt and version else rt


@dataclass(frozen=True)
class FactKind:
    """A row of the fact table: identity, plain name, layer, the option that sets it, how to
    read it from a side; `detail`: said in the line only when its change has no other fact."""

    key: str
    name: str
    layer: str
    option: str | None
    read: Callable[[Side], Any]
    detail: bool = False


FACTS: tuple[FactKind, ...] = (
    FactKind("accel", "accelerator", "environment", "accel", _md("accel")),
    FactKind("qemu_version", "QEMU", "environment", "binary", _md("qemu_version")),
    FactKind("qemu_version_qmp", "QEMU (QMP)", "environment", "binary",
             _md("qemu_version_qmp"), detail=True),
    FactKind("qemu_binary", "QEMU binary", "environment", "binary", _qemu_binary, detail=True),
    FactKind("firmware", "firmware", "environment", "firmware", _md("firmware")),
    FactKind("machine", "machine type", "environment", "machine", _guest_md("machine")),
    FactKind("guest_cpu", "guest CPU", "environment", "cpu", _guest_md("cpu_model")),
    FactKind("guest_linux", "guest Linux", "environment", "linux",
             _first(_guest_md("guest_kernel"), _guest_md("guest_kernel_package"))),
    FactKind("guest_linux_suite", "guest Linux suite", "environment", "linux",
             _md("guest_linux_suite")),
    FactKind("guest_os", "guest OS", "environment", "linux", _guest_md("os"), detail=True),
    FactKind("image_recipe", "image recipe", "environment", "linux", _md("image_recipe"),
             detail=True),
    FactKind("runtime", "container runtime", "environment", "runtime", _runtime),
    FactKind("engine_version", "container engine", "environment", "engine",
             lambda s: s.metadata.get("engine_version") if s.kind in CONTAINERS else None),
    FactKind("host", "host", "host", None, lambda s: s.host.get("hostname")),
    FactKind("host_kernel", "host kernel", "host", None,
             _first(_md("host_kernel"), lambda s: s.host.get("host_kernel"))),
    FactKind("host_os", "host OS", "host", None, _host_md("os")),
    FactKind("host_cpu", "host CPU", "host", None, _host_md("cpu_model")),
    FactKind("microcode", "microcode", "host", None, _host_md("microcode")),
    FactKind("host_thp", "host THP", "host", None,
             _first(_md("host_thp"), lambda s: s.host.get("host_thp"))),
    FactKind("kernels_build", "virtbench's kernels", "host", None,
             lambda s: s.host.get("kernels_build")),
)
HOST_KEYS = {f.key for f in FACTS if f.layer == "host"}


def host_facts(run: Mapping | None, environments: list[Mapping]) -> dict[str, Any]:
    """A run's host facts: its host name and kernel build (RunInfo's `host`,
    `kernels_build`), and what its bare-metal environment's fingerprint says of the host
    (the first `native` one; none: the guests' own records of it, `host_kernel`)."""
    run = run or {}
    out: dict[str, Any] = {"hostname": run.get("host"),
                           "kernels_build": run.get("kernels_build")}
    bare = next((e for e in environments if e.get("kind") in BARE), None)
    md = dict((bare or {}).get("metadata") or {})
    for key in ("cpu_model", "microcode", "os", "host_kernel", "host_thp"):
        out[key] = md.get(key)
    return out


def text(value: Any) -> str:
    """A fact's value as said: lists joined, mappings as key=value, whole floats bare."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(text(v) for v in value) or "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={text(v)}" for k, v in value.items()) or "none"
    return "none" if value is None else str(value)


def _same(a: Any, b: Any) -> bool:
    return a == b or text(a) == text(b)


def _options(a: Side, b: Side) -> list[tuple[FactKind, Any, Any, bool]]:
    """(fact, a, b, recorded on both) per option of either side: resolved, else as written;
    a key written in one spec only stands against the other's default."""
    rows = []
    keys = dict.fromkeys([*a.options, *a.spec_options, *b.options, *b.spec_options])
    for key in keys:
        if key in NOT_OPTIONS:
            continue
        va = a.options.get(key, a.spec_options.get(key))
        vb = b.options.get(key, b.spec_options.get(key))
        in_spec = key in a.spec_options or key in b.spec_options
        default = DEFAULTS.get(key, "default")
        # an option left at an empty default ("" for qemu:binary=) is its default, not unrecorded
        va = default if va in (None, "") and in_spec else va
        vb = default if vb in (None, "") and in_spec else vb
        rows.append((FactKind(f"option:{key}", key, "environment", key, lambda s: None),
                     va, vb, True))
    return rows


def _read_back(a: Side, b: Side, field: str, prefix: str, options: Mapping[str, str] | None
               ) -> list[tuple[FactKind, Any, Any, bool]]:
    ma, mb = a.metadata.get(field) or {}, b.metadata.get(field) or {}
    rows = []
    for key in dict.fromkeys([*ma, *mb]):
        if key in NOT_KNOBS:
            continue
        option = options.get(key) if options is not None else key
        rows.append((FactKind(f"{prefix}:{key}", f"{key} (read back)", "environment", option,
                              lambda s: None), ma.get(key), mb.get(key), True))
    return rows


def _candidates(a: Side, b: Side) -> list[tuple[FactKind, Any, Any]]:
    """Every fact the rule lets count, with both values."""
    same_kind = a.kind == b.kind
    both_qemu = a.kind in QEMU_GUESTS and b.kind in QEMU_GUESTS
    rows = [(f, f.read(a), f.read(b)) for f in FACTS
            if f.layer == "host" or same_kind or both_qemu]
    if same_kind or both_qemu:
        extra = _read_back(a, b, "knobs_read", "knob", KNOB_OPTIONS) + \
            _read_back(a, b, "tunings", "tuning", None)
        if same_kind:
            extra = _options(a, b) + extra
        rows += [(f, va, vb) for f, va, vb, _ in extra]
    return rows


def differ(reference: Mapping, environment: Mapping, host_reference: Mapping | None = None,
           host_environment: Mapping | None = None) -> tuple[list[Fact], list[str]]:
    """The facts that differ between `reference` and `environment` (store mappings: kind,
    spec, options, metadata), environment facts first, and the names of the facts recorded
    on one side only, by the module's rule."""
    a, b = Side.of(reference, host_reference), Side.of(environment, host_environment)
    facts, unrecorded = [], []
    for f, va, vb in _candidates(a, b):
        missing = [v for v in (va, vb) if v in (None, "", [], {})]
        if len(missing) == 2 or _same(va, vb):
            continue
        if missing:
            if a.kind == b.kind:
                unrecorded.append(f.name)
            continue
        facts.append(Fact(key=f.key, name=f.name, layer=f.layer, a=va, b=vb, option=f.option,
                          words=f"{f.name} {text(va)} → {text(vb)}"))
    # an option whose change a fact of the table already says (firmware=, linux=, binary=)
    # is not said twice
    said = {f.option for f in facts if not f.key.startswith("option:")}
    return [f for f in facts if not (f.key.startswith("option:") and f.option in said)], \
        unrecorded


def kind_words(env: Mapping) -> str:
    """What an environment is, in a few words: "a QEMU guest (TCG)", "bare metal",
    "2 instances of bare metal"."""
    s = Side.of(env)
    words = KIND_WORDS.get(s.kind, f"a {s.kind} environment")
    engine = s.metadata.get("engine") if s.kind == "container" else None
    if engine:
        words = f"a {engine} container"
    how = s.metadata.get("accel") if s.guest else (
        s.metadata.get("runtime") if s.kind in CONTAINERS else None)
    if how:
        words += f" ({str(how).upper() if s.guest else how})"
    n = s.spec_options.get("instances")
    return f"{n} instances of {words}" if n and n != "1" else words


def _groups(facts: list[Fact]) -> dict[str, list[Fact]]:
    out: dict[str, list[Fact]] = {}
    for f in facts:
        out.setdefault(f.option or f.key, []).append(f)
    return out


def _shown(group: list[Fact]) -> Fact:
    detail = {f.key for f in FACTS if f.detail}
    return next((f for f in group if f.key not in detail), group[0])


def pair(label: str, reference_label: str, reference: Mapping, environment: Mapping,
         host_reference: Mapping | None = None, host_environment: Mapping | None = None,
         separate: str | None = None, head: str | None = None) -> PairDifferences:
    """`environment` (labelled `label`) against `reference`: the differing facts, how many
    changes they make, which options a study could separate, and the one line (`head`
    begins it: "LABEL vs REFERENCE" by default). `separate`: how to get the separating
    study, said when more than one change differs and an option makes them."""
    facts, unrecorded = differ(reference, environment, host_reference, host_environment)
    a, b = Side.of(reference), Side.of(environment)
    kinds = None if a.kind == b.kind else f"{kind_words(environment)} vs {kind_words(reference)}"
    groups = _groups(facts)
    separable = [k for k in groups if k in _option_keys(a, b)] if kinds is None else []
    parts = [_shown(g).words for g in groups.values()]
    said = parts[:MAX_SHOWN] + ([f"and {len(parts) - MAX_SHOWN} more (--wide)"]
                                if len(parts) > MAX_SHOWN else [])
    if kinds:
        body = [kinds] + said
    elif not facts:
        body = ["every recorded fact equal"]
    else:
        body = said + ["everything else equal"]
    if len(groups) > 1:
        body.append(f"{len(groups)} changes at once" +
                    (f"; to separate them: {separate}" if separate and separable else ""))
    if unrecorded:
        body.append(f"{len(unrecorded)} fact(s) recorded on one side only")
    return PairDifferences(environment=label, reference=reference_label, kinds=kinds,
                           facts=facts, unrecorded=unrecorded, changes=len(groups),
                           separable=separable,
                           line=(head or f"{label} vs {reference_label}") + ": "
                           + "; ".join(body))


def _option_keys(a: Side, b: Side) -> set[str]:
    """The options recorded on both sides (resolved or written) whose values differ."""
    keys = set()
    for f, va, vb, _ in _options(a, b):
        if va is not None and vb is not None and not _same(va, vb):
            keys.add(f.option)
    return keys
