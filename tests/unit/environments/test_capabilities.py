"""What each environment kind says it can offer (from its options, before anything starts),
and the matching of a benchmark's needs against it."""
import os
import pytest
from virtbench.measure import benchmarks
from virtbench.core.capabilities import NAMES, Capabilities, can, cannot, cannot_run
from virtbench.measure.environments import KINDS, create
from virtbench.measure.environments.base import ABILITIES, Environment
from virtbench.core.errors import VirtbenchError
from capkit import ROOT, SPECS, _declared, _implements  # noqa: F401


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
                   for name, b in benchmarks.REGISTRY.items()
                   if name != "tcp-g2g" and b.family != "lifecycle")
    # bare metal has no VMM or sandbox to start, weigh, save or move
    assert "virtbench starts itself" in cannot_run(native, benchmarks.get("boot").needs)
    assert "no VMM or sandbox" in cannot_run(native, benchmarks.get("footprint").needs)


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


def test_a_kind_that_declares_a_capability_implements_its_methods():
    missing = {(cls.__name__, cap, m) for cls, caps in _declared().items() for cap in caps
               for m in ABILITIES[cap] if not _implements(cls, m)}
    assert missing == set(), "declared can, but the base's refusal is what runs"


def test_every_kind_class_is_covered_by_the_specs():
    import virtbench.measure.environments  # noqa: F401  (every kind and libvirt's two forms)
    found, todo = set(), [Environment]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("virtbench.") and sub.__name__ != "InstanceGroup":
                found.add(sub)           # a group hands its instances to the benchmark
    assert found == set(_declared())


@pytest.mark.parametrize("spec, call, words", [
    ("ssh:host=h", lambda e: e.net_path(), "ssh: network benchmarks need peer=ADDR"),
    ("gvisor:network=none", lambda e: e.net_path(), "network=none has no network"),
    ("container", lambda e: e.ssh_target(), "no sshd is started in the container"),
    ("ssh:host=h", lambda e: e.pause(), "the target is not virtbench's to pause"),
    ("container", lambda e: e.profiled_trial(None, {}), "a container has no exits"),
])
def test_what_a_kind_cannot_is_refused_in_the_records_words(spec, call, words):
    env = create(spec)
    with pytest.raises(VirtbenchError) as exc:
        call(env)
    assert words in str(exc.value)
    answer = {"net_path": env.capabilities().net_path, "ssh_target": env.capabilities().ssh_target,
              "pause": env.capabilities().pause,
              "profiled_trial": env.capabilities().exit_profile}
    assert str(exc.value) in {a.reason for a in answer.values()}


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
