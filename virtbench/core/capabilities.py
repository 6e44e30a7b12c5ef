"""What an environment can offer a benchmark, declared before anything starts.

An environment answers `capabilities()` from its kind and options alone (no I/O), so the
runner can decide at plan time which (environment, benchmark) cases can run. Every answer is
`Can` or `Cannot`; a `Cannot` carries one line saying why and naming the fix. A benchmark
declares the capabilities it needs by name (`Benchmark.needs`, see requirements()), and
`cannot_run` matches the two: benchmarks never look at an environment's kind, and never find
out by calling a hook and catching what it raises.

This module sits below environments and benchmarks (which must not import each other), so
both can name it.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Iterable


@dataclass(frozen=True)
class Answer:
    """One capability: can it (and what form it takes), or why not and how to get it."""

    can: bool
    how: str = ""          # the form it takes when it can (scratch: "disk" or "directory")
    reason: str = ""       # when it cannot: one line naming the fix

    def __bool__(self) -> bool:
        return self.can


def can(how: str = "") -> Answer:
    return Answer(True, how=how)


def cannot(reason: str) -> Answer:
    if not reason:
        raise ValueError("a Cannot needs its reason")
    return Answer(False, reason=reason)


@dataclass(frozen=True)
class Capabilities:
    """One field per capability a benchmark may need (the names `needs` uses)."""

    scratch: Answer          # a place on the storage under test: how = "disk" (one virtbench
                             # made: its file system is ours to remount) | "directory"
    scratch_device: Answer   # the block device under test, to read (hdparm)
    net_path: Answer         # a network path whose host side virtbench runs servers on
    remote_peer: Answer      # a second machine one hop behind the host (ping-hops' split)
    ssh_target: Answer       # an sshd reachable from the host side (scp)
    pause: Answer            # can be stopped while another environment measures
    drop_caches: Answer      # its page cache can be dropped (disk benchmarks, cache=out)
    memory_size: Answer      # how much memory a benchmark may use is known
    pairing: Answer          # two instances joined guest to guest (tcp-g2g)
    pair_end: Answer         # can be one end of such a pair (its host side is virtbench's)
    exit_profile: Answer     # a profiled trial says why (--profile exits): how = kvm | tcg
    direct_io: Answer        # O_DIRECT reaches the storage under test (not a sandbox's cache)
    guest_root_io: Answer    # root in a guest of a device model: an I/O port write and an MMIO
                             # read reach emulated devices, never real hardware (primitives)
    # the life cycle's costs (benchmarks boot, footprint, snapshot, migrate; docs/lifecycle.md)
    boot_phases: Answer      # a fresh copy of it can be started and its start cut into phases
    footprint: Answer        # the host memory it takes (its VMM's or sandbox's processes)
    snapshot: Answer         # a running copy saved to a file and restored
    migrate: Answer          # a running copy live-migrated to a second VMM on this host
    # a benchmark's Debian packages (Benchmark.packages) put in by virtbench: an environment
    # whose tree it builds runs a variant of that tree with them (image/variant.py); the
    # others say where to install them, and their missing programs are refused before a run
    packages: Answer

    @classmethod
    def none(cls, who: str) -> "Capabilities":
        """The conservative answer: nothing, each with a reason naming `who`."""
        return cls(
            scratch=cannot(f"{who} has no scratch storage for disk benchmarks"),
            scratch_device=cannot(f"{who} has no block device under test"),
            net_path=cannot(f"{who} has no network path for network benchmarks"),
            remote_peer=cannot(f"{who} has no remote peer behind the host for ping-hops"),
            ssh_target=cannot(f"{who} has no sshd for transfer benchmarks"),
            pause=cannot(f"{who} cannot be paused"),
            drop_caches=cannot(f"{who} cannot drop its page cache; use cache=in"),
            memory_size=cannot(f"{who} does not say how much memory it has"),
            pairing=cannot(f"{who}: guest-to-guest benchmarks need two instances of one "
                           "environment; add instances=2 to its spec"),
            pair_end=cannot(f"{who} cannot be one end of a guest-to-guest pair"),
            exit_profile=cannot(f"{who}: exit profiles need a guest whose hypervisor virtbench "
                                "runs (qemu)"),
            # not an offer but a property of the I/O path: every kernel honours O_DIRECT
            # unless a kind says otherwise (gVisor's sentry does not)
            direct_io=can("O_DIRECT is honoured by the kernel under the scratch directory"),
            guest_root_io=cannot(f"{who}: the ioport primitives write an I/O port and read a "
                                 "device register, which only root in a guest virtbench boots "
                                 "may do (there they reach an emulated device)"),
            boot_phases=cannot(f"{who}: boot phases need an environment virtbench starts "
                               "itself (qemu, container, gvisor)"),
            footprint=cannot(f"{who}: its host memory is not virtbench's to read (it runs "
                             "no VMM or sandbox process here); use qemu, libvirt (a domain "
                             "virtbench defines), container or gvisor"),
            snapshot=cannot(f"{who}: snapshot and restore need a VMM virtbench runs (qemu)"),
            migrate=cannot(f"{who}: live migration needs a VMM virtbench runs (qemu)"),
            packages=cannot(f"{who}: virtbench does not build its tree; install a "
                            "benchmark's packages there yourself"),
        )

    def with_(self, **answers: Answer) -> "Capabilities":
        return replace(self, **answers)


NAMES: tuple[str, ...] = tuple(f.name for f in fields(Capabilities))


def cannot_run(caps: Capabilities, needs: Iterable[str]) -> str | None:
    """Why an environment with `caps` cannot run a benchmark needing `needs` (the first
    missing capability's reason), or None when it can. An unknown need is a programming
    error (KeyError), never a silent pass."""
    for need in needs:
        if need not in NAMES:
            raise KeyError(f"unknown capability {need!r}; known: {', '.join(NAMES)}")
        answer = getattr(caps, need)
        if not answer:
            return answer.reason
    return None
