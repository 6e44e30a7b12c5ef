"""Decisions, claims and the runner's reasons in words (report/words/decisions.py), from the
figures the statistics give."""
from math import log

import numpy as np

from virtbench.core.decisions import Decided
from virtbench.results.report.words import decisions as prose
from virtbench.foundations.stats import claims as sc
from virtbench.foundations.stats import decision as dc
from virtbench.foundations.stats import multiplicity as mt
from virtbench.foundations.stats import sequential as sq
from virtbench.foundations.stats.decision import UnpairedBecause


def _blocks(ratio, sd, n, seed):
    d = log(ratio) + np.random.default_rng(seed).normal(0, sd, n)
    return {b: float(np.exp(x)) for b, x in enumerate(d)}, {b: 1.0 for b in range(n)}


def test_each_decision_says_how_far_from_its_reference_and_what_decides_it():
    env, ref = _blocks(1.3, 0.05, 12, 1)
    d = dc.decide_paired(env, ref, False)
    fail = prose.decision_message(d, "native")
    assert fail.startswith(f"{d.overhead_pct:.1f} % worse than native: beyond ±10 % (95 % "
                           f"interval +{(d.ci_low - 1) * 100:.1f} % to ")
    env, ref = _blocks(1.0, 0.01, 12, 1)
    passed = prose.decision_message(dc.decide_paired(env, ref, False))
    assert ": equivalent within ±10 % (90 % interval" in passed
    assert "than the reference" in passed and "no difference detected (p " in passed
    env, ref = _blocks(1.05, 0.01, 12, 1)
    differs = prose.decision_message(dc.decide_paired(env, ref, False))
    assert "a real difference (p " in differs and "< 0.05) but within ±10 %" in differs


def test_an_undecided_row_says_how_many_blocks_would_decide_and_how_they_were_counted():
    for seed in range(20):
        env, ref = _blocks(1.06, 0.04, 6, seed)
        d = dc.decide_paired(env, ref, higher_is_better=False)
        if d.decision == Decided.INCONCLUSIVE:
            break
    msg = prose.decision_message(d)
    assert "undecided after 6 blocks" in msg
    assert f"about {d.blocks_needed} blocks would decide ({dc.NEED_HOW_PAIRED})" in msg


def test_the_notes_are_said_after_the_callers_note():
    one = dc.decide_paired({1: 1.0}, {1: 1.0, 2: 1.0}, False)
    assert prose.decision_message(one).endswith(
        "no practical number of blocks decides; fewer than 2 blocks with both values: "
        "no interval")
    env, ref = _blocks(1.0, 0.03, 5, 2)
    five = prose.decision_message(dc.decide_paired(env, ref, False))
    assert five.endswith("with 5 blocks the sign-flip test cannot reach p < 0.05 "
                         "(smallest p 0.0625)")
    few = dc.decide_unpaired([1.0, 1.1, 0.9], [1.0, 1.05, 0.95], False)
    assert prose.decision_message(few, "native", UnpairedBecause.OTHER_RUN).endswith(
        "; another run's row (no common blocks): compared unpaired (ratio of trimmed means); "
        "with 3 vs 3 samples the permutation test cannot reach p < 0.05 (smallest p 0.2)")
    for why, said in prose.UNPAIRED.items():
        assert said in prose.decision_message(few, "native", why)


def test_sequential_rows_say_sequence_and_the_runners_minimum():
    env, ref = _blocks(1.3, 0.05, 12, 1)
    assert "95 % sequence" in prose.decision_message(sq.decide_sequential(env, ref, False))
    env, ref = _blocks(1.0, 0.05, 5, 1)
    assert prose.decision_message(sq.decide_sequential(env, ref, False)).endswith(
        "; 5 of at least 6 blocks")
    assert prose.decision_message(sq.decide_sequential({}, {}, False)).endswith(
        "; no blocks with both values")
    same = sq.decide_sequential(ref, ref, False)
    assert prose.decision_message(same, "native").startswith("the same as native to 0.1 %")


def test_what_the_familys_correction_takes_back_is_said_after_the_decision():
    rows = [dc.decide_paired(*_blocks(1.04, 0.02, 6, 1), False),      # differs, p 1/32
            dc.decide_paired(*_blocks(1.0, 0.01, 12, 3), False),
            dc.decide_paired(*_blocks(1.0, 0.05, 6, 6), False),       # narrow pass
            dc.decide_paired(*_blocks(1.0, 0.05, 6, 13), False)]
    fam = mt.adjust_family(rows, "holm")
    msg = prose.decision_message(fam[0])
    assert msg.startswith(prose.decision_message(rows[0]) + "; not significant after Holm "
                          "over 4 rows (adjusted p ")
    need = mt.blocks_for_a_difference(4, 0.05)
    assert msg.endswith(f"; the sign-flip test can reach that from {need} blocks: pass")
    narrow = prose.decision_message(fam[2])
    assert "; not within ±10 % after Holm over 4 rows (adjusted p " in narrow
    assert f"; about {fam[2].blocks_needed} blocks would decide at alpha 0.05/4: " \
           "inconclusive" in narrow
    bh = prose.decision_message(mt.adjust_family(rows, "bh")[0])
    assert "; not significant after Benjamini-Hochberg over 4 rows" in bh


def test_the_runners_reasons_name_the_reference():
    rows = {"few": sq.RowState(*_blocks(1.0, 0.05, 4, 1), higher_is_better=False),
            "noisy": sq.RowState(*_blocks(1.05, 0.2, 8, 3), higher_is_better=False)}
    todo = sq.still_undecided(rows)
    assert prose.undecided_reason(todo["few"]) == "4 of at least 6 blocks"
    assert prose.undecided_reason(todo["noisy"], "native") == prose.decision_message(
        todo["noisy"].decision, "native")
    running = sq.Undecided(14, 6, sq.decide_sequential(*_blocks(1.0, 0.01, 14, 5), False), 5.0)
    assert running.decision.decision == Decided.PASS
    assert "; running on until a change of 5 % is ruled out too (95 % sequence " in \
        prose.undecided_reason(running)


def test_claims_say_the_ratio_against_the_claimed_bound():
    held = sc.ratio_relation(*_blocks(3.0, 0.05, 6, 8), sc.AT_LEAST, 1.5)
    assert prose.relation_message(held) == (
        f"ratio {held.estimate:.3f} (90 % interval {held.ci_low:.3f} to {held.ci_high:.3f}, "
        "6 blocks); claimed at least 1.5")
    assert prose.relation_message(sc.ratio_relation({1: 2.0}, {1: 1.0}, sc.AT_MOST, 2)) == \
        "1 block(s) with both values: no interval"
    zero = sc.ratio_relation_unpaired([0, 0, 0], [1, 2, 3], sc.AT_LEAST, 1.5)
    assert prose.relation_message(zero).endswith(": no ratio")
    rng = np.random.default_rng(5)
    a, b = 3.0 * (1 + rng.normal(0, 0.03, 12)), 1 + rng.normal(0, 0.03, 12)
    assert "% bootstrap interval" in prose.relation_message(
        sc.ratio_relation_unpaired(a, b, sc.AT_LEAST, 1.5))
    env, ref = _blocks(1.01, 0.01, 10, 6)
    within = sc.within_relation(env, ref, 5, True)
    assert prose.relation_message(within, "xen") == prose.decision_message(within.decision,
                                                                             "xen")


def test_claims_holm_took_back_say_so():
    weak = [sc.ratio_relation(*_blocks(1.62, 0.08, 6, s), sc.AT_LEAST, 1.5) for s in (15, 18)]
    strong = sc.ratio_relation(*_blocks(3.0, 0.05, 6, 8), sc.AT_LEAST, 1.5)
    out = sc.adjust_claims([*weak, strong])
    msg = prose.relation_message(out[0])
    assert msg.startswith(prose.relation_message(weak[0]) + "; holds at p 0.0")
    assert "but not after Holm over 3 claims (adjusted p " in msg
    assert "would decide" not in msg


def test_small_counts_whose_interval_has_no_upper_end_say_no_interval():
    # counts of 0 to 3 (a TCP retransmit count over 4 trials in a TCG guest, 2026-11-29):
    # the unpaired bootstrap's resamples divide by a reference of 0, the interval's upper
    # end is unbounded (None); the message says so instead of failing
    d = dc.decide_unpaired([2.0, 2.0, 1.0, 2.0], [0.0, 1.0, 1.0, 1.0], False, 5.0, 0.05, 1)
    assert d.eq_ci_low is not None and d.eq_ci_high is None
    text = prose.decision_message(d)
    assert "no interval yet" in text and "\n" not in text
