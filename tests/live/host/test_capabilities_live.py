"""The live part of tests/unit/environments/test_capabilities.py: its tests that need root and this host.

What each environment kind says it can offer (from its options, before anything starts),
and the matching of a benchmark's needs against it.
"""
import pytest
from virtbench.measure.environments import create
from virtbench.measure.environments.base import ABILITIES
from capkit import ROOT, SPECS, _declared, _implements  # noqa: F401


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


def test_a_kind_that_implements_an_ability_declares_it_for_some_spec():
    undeclared = {(cls.__name__, cap) for cls, caps in _declared().items()
                  for cap, methods in ABILITIES.items()
                  if cap not in caps and any(_implements(cls, m) for m in methods)}
    assert undeclared == set(), "implemented, but no spec of the kind says it can"
