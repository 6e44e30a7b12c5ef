"""Duet mode: each block's pair run at once on disjoint CPUs, paired by time (a real native
run), and the pure parts (which slots pair, how much two intervals overlap)."""
from __future__ import annotations
import pytest
from virtbench.execution.run.duet import overlap, pairs
from virtbench.study.design import PlannedTrial, plan


def test_each_slot_pairs_with_the_other_environment_s_of_its_block_and_case():
    slots = plan(["native", "twin"], ["pi", "stream"], 2, seed=3)
    units = pairs(slots)
    assert len(units) == 4 and all(len(u) == 2 for u in units)
    for a, b in units:
        assert (a.trial, a.benchmark) == (b.trial, b.benchmark)
        assert {a.environment, b.environment} == {"native", "twin"}
    # the units keep the plan's order: the first slot of each unit in plan order
    firsts = [u[0].seq for u in units]
    assert firsts == sorted(firsts)


def test_a_slot_whose_partner_is_done_runs_alone():
    slots = [PlannedTrial(0, 0, "native", "pi"), PlannedTrial(1, 0, "twin", "stream"),
             PlannedTrial(2, 0, "twin", "pi")]
    assert [tuple(s.seq for s in u) for u in pairs(slots)] == [(0, 2), (1,)]


@pytest.mark.parametrize("a, b, share", [((0, 1), (0, 1), 1.0), ((0, 1), (0.5, 1.5), 0.5),
                                         ((0, 1), (2, 3), 0.0), ((0, 2), (0.5, 1.5), 0.5)])
def test_overlap_is_the_shared_part_of_the_longer(a, b, share):
    assert overlap(a, b) == pytest.approx(share)
