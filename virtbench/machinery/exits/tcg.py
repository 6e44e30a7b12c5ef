"""Would-be exits under TCG: our QEMU plugin (plugin/vbexits.c), built and checked here,
its snapshots taken over its control socket, and the counts turned into an ExitProfile.

Use: so = build_plugin(); check_plugin(so); env.extra_argv = plugin_argv(so, control) before
the guest boots; PluginControl(control).snapshot(before) ... trial ... snapshot(after);
to_profile(diff(before, after), kallsyms_text, duration_s). The boot's own I/O is in both
snapshots and cancels out. TcgSession bundles the plumbing of one profiled boot.

Cost (bench/profiling_cost.py): only kernel-half code is instrumented (MMIO and caller rings);
user-space work runs as fast as without the plugin.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import VirtbenchError
from ..kernels.build import cache_dir
from ...foundations.model.profile import FunctionRow, ReasonRow
from .exit_profile import ExitProfile, shares
from .symbols import SymbolTable, caller_of, is_accessor, parse_kallsyms

PLUGIN_SOURCE = Path(__file__).resolve().parent / "plugin" / "vbexits.c"
PLUGIN_API_VERSION = 1
REASONS = ("pio", "mmio")
KALLSYMS_ARGV = ["cat", "/proc/kallsyms"]   # run in the guest, in the profiled boot
CFLAGS = ["-shared", "-fPIC", "-O2", "-Wall"]


# -- the plugin: build and check ----------------------------------------------------------
def plugin_hash(source: Path = PLUGIN_SOURCE) -> str:
    """The source, the headers beside it and the flags: what the build depends on."""
    h = hashlib.sha256(" ".join(CFLAGS).encode())
    for path in [source, *sorted(source.parent.glob("*.h"))]:
        h.update(b"\0" + path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def build_plugin(force: bool = False, source: Path = PLUGIN_SOURCE) -> Path:
    """Build vbexits.so once per source hash under the cache directory; return its path."""
    out = cache_dir() / "plugins" / plugin_hash(source) / "vbexits.so"
    if out.exists() and not force:
        return out
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise VirtbenchError("a C compiler is needed to build the TCG profiling plugin; "
                             "install it with: apt-get install gcc")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"vbexits.so.{os.getpid()}.tmp")
    argv = [cc, *CFLAGS, f"-I{PLUGIN_SOURCE.parent}", "-o", str(tmp), str(source), "-lpthread"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        errors = [ln for ln in proc.stderr.splitlines() if "error" in ln] or \
            proc.stderr.strip().splitlines() or ["(no output)"]
        raise VirtbenchError(f"building the TCG plugin failed: {errors[0].strip()}; run "
                             f"`{' '.join(argv[:-4])} -o vbexits.so {source} -lpthread` "
                             "to see the whole error")
    os.replace(tmp, out)
    return out


def explain_load_failure(stderr: str) -> str:
    """QEMU's complaint about a plugin -> one line naming the fix (pure). QEMU's loader
    (plugins/loader.c) says "plugin requires API version N, but this QEMU supports only up
    to version M" or "... only a minimum version of M"."""
    text = stderr.strip()
    m = re.search(r"requires API version (\d+), but this QEMU supports only up to version "
                  r"(\d+)", text)
    if m:
        return (f"this QEMU takes TCG plugin API versions up to {m.group(2)}, but the plugin "
                f"asks for version {m.group(1)}; rebuild the plugin for API version "
                f"{m.group(2)} or use a QEMU that takes version {m.group(1)}")
    m = re.search(r"requires API version (\d+), but this QEMU supports only a minimum "
                  r"version of (\d+)", text)
    if m:
        return (f"this QEMU takes TCG plugin API versions from {m.group(2)} on, but "
                f"virtbench's plugin is written for version {m.group(1)} (QEMU 4.2 to 8.x); "
                "use such a QEMU for --profile exits")
    if re.search(r"-plugin: invalid option|plugin.*not (?:compiled|supported)", text):
        return ("this QEMU has no TCG plugin support (-plugin); use a QEMU built with "
                "--enable-plugins (Debian's qemu-system-x86 is) for --profile exits")
    last = text.splitlines()[-1].strip() if text else "no message"
    return f"QEMU could not load the TCG plugin: {last}"


def check_plugin(so: Path, qemu: str = "qemu-system-x86_64", timeout: float = 30,
                 env: dict | None = None, qemu_args: list[str] | tuple = ()) -> None:
    """Try-load the plugin in a machine-less QEMU (~0.2 s); one line if QEMU refuses it.
    `env`, `qemu_args`: what another QEMU needs (its modules directory, its -L)."""
    argv = [qemu, *qemu_args, "-M", "none", "-display", "none", "-nodefaults", "-monitor", "stdio",
            "-plugin", f"file={so}"]
    try:
        proc = subprocess.run(argv, input="quit\n", capture_output=True, text=True,
                              timeout=timeout, env=env)
    except FileNotFoundError:
        raise VirtbenchError(f"{qemu} not found; install it with: apt-get install "
                             "qemu-system-x86") from None
    except subprocess.TimeoutExpired:
        raise VirtbenchError(f"try-loading the TCG plugin in {qemu} did not finish within "
                             f"{timeout:.0f} s") from None
    if proc.returncode != 0:
        raise VirtbenchError(explain_load_failure(proc.stderr))


def plugin_argv(so: Path | str, control: Path | str | None = None,
                out: Path | str | None = None, all_code: bool = False,
                callers: bool = True, mmio: bool = True, learn: bool = True,
                autosettle_s: int = 0) -> list[str]:
    """The `-plugin file=...` fragment for QEMU's argv (a qemu environment's extra_argv).
    all_code: user space too; callers=False: no TB ring; mmio=False: port I/O only;
    learn=False: settle() drops no memory callbacks; autosettle_s: the plugin settles by
    itself every so many seconds while it learns (0: only when asked)."""
    spec = f"file={so}"
    for name, value in (("control", control), ("out", out)):
        if value is not None:
            if "," in str(value):
                raise VirtbenchError(f"plugin {name} path {value} holds a comma, which QEMU's "
                                     "option parser splits on; use a path without commas")
            spec += f",{name}={value}"
    if all_code:
        spec += ",all=on"
    if not callers:
        spec += ",callers=off"
    if not mmio:
        spec += ",mmio=off"
    if not learn:
        spec += ",learn=off"
    if autosettle_s:
        spec += f",autosettle={int(autosettle_s)}"
    return ["-plugin", spec]


# -- counts: the dump format ---------------------------------------------------------------
@dataclass
class Site:
    """Would-be exits at one guest PC to one device: how many, and the TB rings seen
    (newest TB start PC first) with their counts."""

    kind: str
    pc: int
    device: str
    count: int
    rings: dict[tuple[int, ...], int] = field(default_factory=dict)
    ring_other: int = 0

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.kind, self.pc, self.device)


Counts = dict[tuple[str, int, str], Site]


def parse(text: str) -> Counts:
    """A vbexits dump -> {(kind, pc, device): Site} (pure). One line on bad input."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("vbexits 1"):
        raise VirtbenchError("not a vbexits dump (no 'vbexits 1' header); take snapshots "
                             "with the plugin built by this virtbench")
    m = re.fullmatch(r"vbexits 1(?: depth=(\d+))?", lines[0].strip())
    if not m:
        raise VirtbenchError(f"not a vbexits dump (header {lines[0][:40]!r}); take snapshots "
                             "with the plugin built by this virtbench")
    depth = int(m.group(1)) if m.group(1) else None
    counts: Counts = {}
    site: Site | None = None
    ended = False
    for n, line in enumerate(lines[1:], start=2):
        word, _, rest = line.partition(" ")
        try:
            if word == "site":
                kind, pc, count, device = rest.split(" ", 3)
                if kind not in REASONS:
                    raise ValueError(kind)
                site = Site(kind, int(pc, 16), device, int(count))
                counts[site.key] = site
            elif word == "ring" and site is not None:
                count, *pcs = rest.split()
                if depth is not None and len(pcs) != depth:
                    raise ValueError("ring depth")
                site.rings[tuple(int(p, 16) for p in pcs)] = int(count)
            elif word == "ring-other" and site is not None:
                site.ring_other = int(rest)
            elif word == "stats":
                pass                              # parse_stats() reads it
            elif word == "end":
                if int(rest) != len(counts):
                    raise ValueError("site count")
                ended = True
            else:
                raise ValueError(word)
        except ValueError:
            raise VirtbenchError(f"vbexits dump line {n} is malformed ({line[:60]!r}); take "
                                 "the snapshot again") from None
    if not ended:
        raise VirtbenchError("vbexits dump is truncated (no 'end' line); take the snapshot "
                             "again")
    return counts


def parse_stats(text: str) -> dict[str, int]:
    """The plugin's own counters from a dump's `stats` line (pure): translations,
    mem_callbacks (instructions given a memory callback), settles, learned."""
    for line in text.splitlines():
        if line.startswith("stats "):
            return {k: int(v) for k, _, v in (w.partition("=") for w in line.split()[1:])}
    return {}


def diff(before: Counts, after: Counts) -> Counts:
    """What happened between two snapshots of one QEMU (pure): after - before, sites with
    no events left out."""
    out: Counts = {}
    for key, a in after.items():
        b = before.get(key)
        count = a.count - (b.count if b else 0)
        if count < 0:
            raise VirtbenchError("the 'after' snapshot holds fewer events than 'before': "
                                 "both must come from the same QEMU, before first")
        if count == 0:
            continue
        rings = {}
        for ring, c in a.rings.items():
            d = c - (b.rings.get(ring, 0) if b else 0)
            if d > 0:
                rings[ring] = d
        other = a.ring_other - (b.ring_other if b else 0)
        out[key] = Site(a.kind, a.pc, a.device, count, rings, max(other, 0))
    return out


# -- counts -> ExitProfile ---------------------------------------------------------------------
def function_rows(counts: Counts, table: SymbolTable) -> list[tuple[int, str, str | None, str | None, int]]:
    """(pc, device, function, caller, count) per site and caller, most first (pure).
    A generic accessor's events split by caller (from the TB rings); events whose ring did
    not fit the plugin's table, or held no other function, have caller None."""
    agg: dict[tuple[int, str, str | None, str | None], int] = {}
    for site in counts.values():
        loc = table.lookup(site.pc)
        function = str(loc) if loc else None
        by_caller: dict[str | None, int] = {}
        if loc is None or not is_accessor(loc.name):
            by_caller[None] = site.count
        else:
            for ring, c in site.rings.items():
                who = caller_of(table, site.pc, ring)
                by_caller[who] = by_caller.get(who, 0) + c
            rest = site.count - sum(by_caller.values())
            if rest > 0:
                by_caller[None] = by_caller.get(None, 0) + rest
        for who, c in by_caller.items():
            key = (site.pc, site.device, function, who)
            agg[key] = agg.get(key, 0) + c
    rows = [(pc, dev, fn, who, c) for (pc, dev, fn, who), c in agg.items()]
    rows.sort(key=lambda r: (-r[4], r[0], r[1], r[3] or ""))
    return rows


# reasons in a profile: port I/O, MMIO to emulated devices, and the local APIC's MMIO apart
# (the timer of Zhang et al. Table 1; under KVM an in-kernel APIC, not a device model)
PROFILE_REASONS = ("pio", "mmio", "apic")


def reason_of(site: "Site") -> str:
    """pio, apic (MMIO to the local APIC's region) or mmio (any other device) (pure)."""
    if site.kind == "mmio" and (site.device or "").startswith("apic"):
        return "apic"
    return site.kind


def to_profile(counts: Counts, kallsyms: str | SymbolTable, duration_s: float,
               top: int = 20) -> ExitProfile:
    """Would-be exits -> ExitProfile (source "tcg"): by reason (pio, mmio, apic) and the `top`
    guest functions (address, function+offset, caller for accessors, count, share, device)."""
    table = kallsyms if isinstance(kallsyms, SymbolTable) else parse_kallsyms(kallsyms)
    per_reason = {r: 0 for r in PROFILE_REASONS}
    for site in counts.values():
        per_reason[reason_of(site)] += site.count
    total = sum(per_reason.values())
    pct = shares(per_reason)
    by_reason = [ReasonRow(reason=r, count=per_reason[r], share_pct=round(pct[r], 2)) for r in PROFILE_REASONS]
    rows = function_rows(counts, table)
    by_function = [FunctionRow(address=f"{pc:#018x}", function=fn, caller=who, count=c,
                               share_pct=round(100.0 * c / total, 2) if total else 0.0,
                               device=dev)
                   for pc, dev, fn, who, c in rows[:top]]
    notes = ["would-be exits under TCG: port I/O instructions executed and MMIO accesses "
             "to emulated devices, counted by virtbench's QEMU plugin; a KVM guest would "
             "exit on most of these, but not on all (e.g. virtio notifies via ioeventfd "
             "still exit, APIC accesses may be accelerated)"]
    lost = sum(c for _, _, fn, who, c in rows
               if who is None and fn and is_accessor(fn.split("+")[0]))
    if lost:
        notes.append(f"{lost} events in generic accessors ({100.0 * lost / total:.1f} %) have "
                     "no caller: their TB ring held no other function")
    if len(rows) > top:
        rest = sum(r[4] for r in rows[top:])
        notes.append(f"{len(rows) - top} more guest sites with {rest} events not shown")
    return ExitProfile(source="tcg", duration_s=duration_s, by_reason=by_reason,
                   by_function=by_function, notes=notes)


# -- the control socket ------------------------------------------------------------------------
class PluginControl:
    """Talks to a running plugin over its control socket."""

    def __init__(self, path: Path | str):
        self.path = str(path)

    def _request(self, line: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(max(0.1, deadline - time.monotonic()))
                    s.connect(self.path)
                    s.sendall(line.encode() + b"\n")
                    reply = b""
                    while not reply.endswith(b"\n"):
                        chunk = s.recv(4096)
                        if not chunk:
                            break
                        reply += chunk
                    return reply.decode(errors="replace").strip()
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() >= deadline:
                    raise VirtbenchError(f"the TCG plugin's control socket {self.path} did not "
                                         "answer; was QEMU started with plugin_argv(...)?") \
                        from None
                time.sleep(0.05)
            except socket.timeout:
                raise VirtbenchError(f"the TCG plugin did not answer within {timeout:.0f} s "
                                     f"on {self.path}") from None

    def settle(self, timeout: float = 30.0) -> None:
        """Have the plugin drop the memory callbacks of instructions it has seen touch only
        RAM (QEMU retranslates): what follows runs cheaper, MMIO still counted. A settle
        of the plugin's own (autosettle) under way is waited for, then this one is made (CI
        saw "a settle is already under way" between two profiled trials)."""
        deadline = time.monotonic() + timeout
        while True:
            reply = self._request("settle", max(0.1, deadline - time.monotonic()))
            if reply == "ok":
                return
            if "already under way" not in reply or time.monotonic() >= deadline:
                raise VirtbenchError(f"the TCG plugin could not settle: {reply or 'no reply'}")
            time.sleep(0.1)

    def snapshot(self, dest: Path | str, timeout: float = 30.0) -> Counts:
        """Have the plugin write its cumulative counts to `dest` (atomically) and parse them."""
        dest = Path(dest).resolve()
        reply = self._request(f"dump {dest}", timeout)
        if reply != "ok":
            raise VirtbenchError(f"the TCG plugin could not take a snapshot: "
                                 f"{reply.removeprefix('error ') or 'no reply'}")
        return parse(dest.read_text())


class TcgSession:
    """One profiled boot's plumbing: the checked plugin, a private directory for the control
    socket and the snapshots. `argv` goes into the environment's extra_argv before start();
    mark() before the trial, since_mark() after it gives the trial's counts."""

    def __init__(self, qemu: str = "qemu-system-x86_64", autosettle_s: int = 2,
                 workdir: Path | None = None, qemu_env: dict | None = None,
                 qemu_args: list[str] | tuple = ()):
        """`workdir`: a private directory the caller made (and will have swept after a crash);
        by default a new private one in the work root (guest/watch.py). `qemu_env`,
        `qemu_args`: what another QEMU needs to start (its modules directory, its -L)."""
        from ..host import watch
        self.so = build_plugin()
        check_plugin(self.so, qemu, env=qemu_env, qemu_args=qemu_args)
        self.dir = workdir or watch.private_dir("vbexits-")
        self.control = PluginControl(self.dir / "ctl.sock")
        # autosettle: the boot sheds its RAM-only callbacks as it goes (boot ~20 % faster)
        self.argv = plugin_argv(self.so, self.dir / "ctl.sock", autosettle_s=autosettle_s)
        self._mark: Counts | None = None

    def mark(self, timeout: float = 30.0) -> None:
        """Before the trial: settle (drop what the boot showed to be RAM-only), snapshot."""
        self.control.settle(timeout)
        self._mark = self.control.snapshot(self.dir / "mark", timeout)

    def since_mark(self, timeout: float = 30.0) -> Counts:
        if self._mark is None:
            raise VirtbenchError("TcgSession.since_mark() without mark() first")
        return diff(self._mark, self.control.snapshot(self.dir / "now", timeout))

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
