"""`virtbench compare`'s verdicts in words: why each change from run A to run B is worse,
better, the same or inconclusive (CompareRow.message), from stats/change.py's figures."""
from __future__ import annotations

from ....core.decisions import CompareVerdict
from ....foundations.stats.change import ChangeBasis, ChangeVerdict


def _pc(x: float) -> str:
    return f"{x:.0f} %"


def need_text(n: int | None, n_a: int | None, n_b: int | None, cv_known: bool = True) -> str:
    """The trials per side that would decide, or why there is no such number."""
    if n is None and not cv_known:
        return "the noise cannot be estimated (a mean of 0), so neither can the trials needed"
    if n is None:
        return "the noise is too high for any practical number of trials; quieten the host"
    return f"run at least {n} trials per side (has {n_a} vs {n_b})"


def change_message(v: ChangeVerdict) -> str:
    """The compare verdict in words: the change and the p behind it, or why it is not
    decided and what would decide it."""
    b, alpha, least = v.basis, v.alpha, v.min_change_pct
    if b == ChangeBasis.NO_TEST:
        return "fewer than 2 samples a side: no test"
    if b == ChangeBasis.ALPHA_UNREACHABLE:
        return (f"no number of trials lets the test reach alpha {alpha:g} (its smallest p is "
                f"{v.smallest_p:.2g}); raise alpha")
    if b == ChangeBasis.FEW_SAMPLES:
        return ("fewer than 2 samples a side: no test; "
                + need_text(v.trials_needed, v.n_a, v.n_b))
    if b == ChangeBasis.COUNTS_UNREACHABLE:
        return (f"with {v.n_a} vs {v.n_b} trials the smallest p the test can give is "
                f"{v.smallest_p:.3g}, not below alpha {alpha:g}; "
                + need_text(v.trials_needed, v.n_a, v.n_b))
    if b == ChangeBasis.BEYOND:
        return f"B {abs(v.change_pct):.1f} % {v.direction} than A (p {v.p_value:.3g})"
    if b == ChangeBasis.WITHIN:
        return f"significant but within ±{least:g} % ({v.change_pct:+.1f} %)"
    if b == ChangeBasis.POWERED:
        return f"no change beyond ±{least:g} % (power {_pc(v.power * 100)})"
    msg = f"not significant (p {v.p_value:.3g} >= {alpha:g})"
    if v.n_a is None or v.n_b is None:
        return msg
    power = "unknown" if v.power is None else "only " + _pc(v.power * 100)
    return (f"{msg} and {power} power to see a {least:g} % change; "
            + need_text(v.trials_needed, v.n_a, v.n_b, v.cv_known))


def zero_message(verdict: CompareVerdict, p: float | None) -> str:
    """A change from a trimmed mean of 0 in A (no retransmits, say): no % change; the test
    alone decides."""
    decided = verdict in (CompareVerdict.WORSE, CompareVerdict.BETTER)
    return "A's trimmed mean is 0: no % change; " + (f"B is {verdict} (p {p:.3g})" if decided
                                                      else "no significant difference")


def differ_warning(keys: list[str]) -> str:
    """Runs whose metadata differ in `keys`: a change may come from those."""
    return (f"the runs differ in {', '.join(keys)}: a change may come from these, not from "
            "what you meant to compare; check the list of differing metadata")


def same_run_warning(run_id: str) -> str:
    """Two environments of one run compared as two runs: the test ignores their blocks."""
    return (f"A and B are the same run ({run_id}): compare's test is unpaired; `virtbench "
            f"report {run_id} --baseline LABEL` compares its environments block by block")
