"""What each environment kind says it can offer (from its options, before anything starts),
and the matching of a benchmark's needs against it."""
import os

import pytest

from virtbench import benchmarks
from virtbench.capabilities import NAMES, Capabilities, can, cannot, cannot_run
from virtbench.environments import KINDS, create
from virtbench.environments.base import Environment
from virtbench.errors import VirtbenchError

ROOT = os.geteuid() == 0


def test_a_cannot_needs_its_reason_and_is_false():
    assert not cannot("x: do y")
    assert can("disk") and can("disk").how == "disk"
    with pytest.raises(ValueError):
        cannot("")


def test_the_base_offers_nothing_and_says_why_for_each():
    caps = Capabilities.none("environment x")
    for name in NAMES:
        if name == "direct_io":    # a property of the I/O path, not an offer: see below
            continue
        answer = getattr(caps, name)
        assert not answer and answer.reason.startswith("environment x"), name


def test_direct_io_is_assumed_of_a_kernel_and_denied_by_gvisor_only():
    assert Capabilities.none("environment x").direct_io
    assert create("native").capabilities().direct_io
    assert create("container").capabilities().direct_io
    gv = create("gvisor").capabilities().direct_io
    assert not gv and "ignores O_DIRECT" in gv.reason


def test_cannot_run_gives_the_first_missing_reason_and_rejects_unknown_needs():
    caps = Capabilities.none("e").with_(net_path=can(), scratch=cannot("e: scratch=DIR"))
    assert cannot_run(caps, ()) is None
    assert cannot_run(caps, ("net_path",)) is None
    assert cannot_run(caps, ("net_path", "scratch", "pause")) == "e: scratch=DIR"
    with pytest.raises(KeyError, match="unknown capability 'netpath'"):
        cannot_run(caps, ("netpath",))


def test_every_benchmark_needs_only_known_capabilities():
    for name, bench in benchmarks.REGISTRY.items():
        for need in bench.requirements(bench.params()):
            assert need in NAMES, (name, need)


def test_native():
    caps = create("native").capabilities()
    assert caps.scratch.how == "directory" and caps.scratch_device and caps.memory_size
    assert not caps.pause and "never paused" in caps.pause.reason
    assert bool(caps.net_path) == bool(caps.remote_peer) == bool(caps.ssh_target) == ROOT
    assert bool(caps.drop_caches) == ROOT
    assert not caps.pairing and "instances=2" in caps.pairing.reason


def test_native_without_root_says_run_as_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    caps = create("native").capabilities()
    assert not caps.net_path and "run virtbench as root" in caps.net_path.reason
    assert not caps.drop_caches and "cache=in" in caps.drop_caches.reason


def test_qemu_has_everything_but_pairing_alone():
    caps = create("qemu:disk=ide,mem=512M").capabilities()      # no boot, no probe
    assert caps.scratch.how == "disk" and "ide" in caps.scratch_device.how
    for name in ("net_path", "remote_peer", "ssh_target", "pause", "drop_caches",
                 "memory_size", "pair_end"):
        assert getattr(caps, name), name
    assert caps.memory_size.how == "mem=512M"
    assert not caps.pairing


def test_ssh_without_peer_has_no_network_path_and_says_how_to_get_one():
    caps = create("ssh:host=192.0.2.1,name=g").capabilities()      # no connection made
    assert not caps.net_path
    assert caps.net_path.reason == ("ssh: network benchmarks need peer=ADDR, this host's "
                                    "address as the target reaches it")
    assert caps.scratch.how == "directory" and caps.drop_caches and caps.memory_size
    assert not caps.remote_peer and "ping-hops" in caps.remote_peer.reason
    assert not caps.pause and not caps.ssh_target and not caps.pair_end


def test_ssh_with_peer_user_and_device_scratch():
    caps = create("ssh:host=h,peer=192.0.2.9,user=joe,scratch=/dev/sdb").capabilities()
    assert caps.net_path and "192.0.2.9" in caps.net_path.how
    assert not caps.drop_caches and "set user=root" in caps.drop_caches.reason
    assert not caps.scratch and "scratch=DIR" in caps.scratch.reason
    assert not caps.remote_peer          # a peer is not a remote machine behind the host


@pytest.mark.skipif(not ROOT, reason="pair_end of native needs root")
@pytest.mark.parametrize("spec, pairs, words", [
    ("native:instances=2", True, ""),
    ("native:instances=3", False, "exactly 2 instances, not 3"),
    ("ssh:host=h,peer=p,instances=2", False, "no host-side namespace"),
    ("ssh:host=h,instances=2", False, "peer=ADDR"),
])
def test_a_group_pairs_two_instances_with_joinable_paths(spec, pairs, words):
    caps = create(spec).capabilities()
    assert bool(caps.pairing) == pairs
    assert words in caps.pairing.reason
    group = create(spec)
    assert group.capabilities().scratch == group.members[0].capabilities().scratch


def test_needs_per_benchmark():
    ssh = create("ssh:host=h,name=g").capabilities()
    native = create("native").capabilities()
    why = {name: cannot_run(ssh, b.requirements(b.params()))
           for name, b in benchmarks.REGISTRY.items()}
    assert why["pi"] is None and why["stream"] is None and why["dd-write"] is None
    assert "peer=ADDR" in why["tcp"] and "peer=ADDR" in why["rr"]
    assert "ping-hops needs a remote machine" in why["ping-hops"]   # peer= would not help
    assert "instances=2" in why["tcp-g2g"]
    assert why["scp"] is not None
    if ROOT:
        assert all(cannot_run(native, b.requirements(b.params())) is None
                   for name, b in benchmarks.REGISTRY.items() if name != "tcp-g2g")


def test_disk_benchmarks_need_cache_dropping_only_with_cache_out():
    dd = benchmarks.get("dd-write")
    assert "drop_caches" in dd.requirements(dd.params({"cache": "out"}))
    assert "drop_caches" not in dd.requirements(dd.params({"cache": "in"}))
    joe = create("ssh:host=h,user=joe").capabilities()
    assert cannot_run(joe, dd.requirements(dd.params({"cache": "in"}))) is None
    assert "set user=root" in cannot_run(joe, dd.requirements(dd.params({"cache": "out"})))


def test_every_kind_answers_without_io(monkeypatch):
    """capabilities() is a plan-time question: no subprocess, no agent, no connection."""
    import subprocess

    def no(*a, **k):
        raise AssertionError("capabilities() did I/O")

    monkeypatch.setattr(subprocess, "run", no)
    monkeypatch.setattr(subprocess, "Popen", no)
    monkeypatch.setattr(Environment, "exec", no)
    specs = {"ssh": "ssh:host=h"}          # kinds with a required option
    answered = 0
    for kind in KINDS:
        try:
            env = create(specs.get(kind, kind))
        except VirtbenchError:
            continue                            # a kind that needs options not given here
        assert isinstance(env.capabilities(), Capabilities)
        answered += 1
    assert answered >= 3


# -- a kind that implements a hook declares it -----------------------------------------------

HOOK_CAPABILITY = {"scratch_dir": "scratch", "scratch_device": "scratch_device",
                   "net_path": "net_path", "ssh_target": "ssh_target", "pause": "pause",
                   "drop_caches": "drop_caches", "memory_bytes": "memory_size",
                   "pair_path": "pairing"}

# class: why it does not declare yet. An exception that no longer happens fails the test.
UNDECLARED: dict[str, str] = {}


def _kind_classes():
    import virtbench.environments  # noqa: F401  (every kind, the group, libvirt's forms)
    from virtbench.environments import group  # noqa: F401
    found, todo = [], [Environment]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("virtbench."):
                found.append(sub)
    return found


def _undeclared():
    """Classes that implement a capability hook but inherit the base's 'can nothing'."""
    out = {}
    for cls in _kind_classes():
        if cls.capabilities is not Environment.capabilities:
            continue
        hooks = [h for h in HOOK_CAPABILITY
                 if getattr(cls, h, None) is not getattr(Environment, h, None)]
        if hooks:
            out[f"{cls.__module__}.{cls.__qualname__}"] = hooks
    return out


def test_a_kind_that_implements_a_hook_declares_what_it_offers():
    missing = {k: v for k, v in _undeclared().items() if k not in UNDECLARED}
    assert missing == {}, ("these kinds implement hooks but say they can nothing "
                           f"(override capabilities()): {missing}")


def test_every_undeclared_exception_still_happens():
    stale = sorted(set(UNDECLARED) - set(_undeclared()))
    assert stale == [], f"these kinds declare now; remove them from UNDECLARED: {stale}"


def test_only_a_guest_virtbench_boots_offers_root_io_and_each_kind_says_why_not():
    """The ioport primitives write an I/O port and read a device register: only in a qemu
    (or libvirt-defined) guest; every other kind says why in its own words."""
    assert create("qemu").capabilities().guest_root_io
    assert "0xed" in create("qemu").capabilities().guest_root_io.how
    why = {spec: create(spec).capabilities().guest_root_io
           for spec in ("native", "container", "gvisor", "ssh:host=h")}
    assert not any(why.values())
    assert "host's own hardware" in why["native"].reason
    assert "shares the host's kernel" in why["container"].reason
    assert "sentry" in why["gvisor"].reason
    assert "bare metal" in why["ssh:host=h"].reason


def test_primitives_need_root_io_only_when_ioport_is_named():
    prim = benchmarks.get("primitives")
    native = create("native").capabilities()
    assert cannot_run(native, prim.requirements(prim.params())) is None
    assert cannot_run(native, prim.requirements(prim.params({"only": "syscall,timer"}))) is None
    why = cannot_run(native, prim.requirements(prim.params({"only": "syscall,ioport"})))
    assert why and "host's own hardware" in why
    assert cannot_run(create("qemu").capabilities(),
                      prim.requirements(prim.params({"only": "ioport"}))) is None
