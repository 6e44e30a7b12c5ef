"""The live part of tests/unit/environments/test_capabilities.py: its tests that need root and this host.

What each environment kind says it can offer (from its options, before anything starts),
and the matching of a benchmark's needs against it.
"""
import os
import pytest
from virtbench.environments import create
from virtbench.environments.base import ABILITIES, Environment

ROOT = os.geteuid() == 0


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


# specs that construct without I/O, covering each kind's option-dependent answers
SPECS = ("native", "qemu", "qemu:accel=tcg", "ssh:host=h", "ssh:host=h,peer=p,user=joe",
         "libvirt:uri=qemu:///system", "libvirt:uri=test:///default,domain=d",
         "libvirt:uri=test:///default,domain=d,peer=p", "container", "container:network=bridge",
         "gvisor", "gvisor:network=none", "nested")


def _implements(cls, method: str) -> bool:
    return getattr(cls, method) is not getattr(Environment, method)


def _declared() -> dict[type, set[str]]:
    """Each kind's class and the capabilities (of ABILITIES) it declares for some spec."""
    out: dict[type, set[str]] = {}
    for spec in SPECS:
        env = create(spec)
        caps = env.capabilities()
        out.setdefault(type(env), set()).update(c for c in ABILITIES if getattr(caps, c))
    return out


def test_a_kind_that_implements_an_ability_declares_it_for_some_spec():
    undeclared = {(cls.__name__, cap) for cls, caps in _declared().items()
                  for cap, methods in ABILITIES.items()
                  if cap not in caps and any(_implements(cls, m) for m in methods)}
    assert undeclared == set(), "implemented, but no spec of the kind says it can"
