"""One p per verdict: the p shown beside a verdict is the p of the claim it makes, and a
pass, fail or differs never stands beside an adjusted p above alpha (issue 30)."""
import pytest
from storekit import open_fixture

from virtbench.core.decisions import Decided
from virtbench.results import analysis
from virtbench.results.report.fmt import tables
from virtbench.results.report.fmt.verdicts import comparisons


@pytest.mark.parametrize("name", ["real", "failures", "published", "profiles"])
def test_every_decided_verdict_of_the_saved_runs_shows_an_adjusted_p_below_alpha(tmp_path, name):
    store, ids = open_fixture(name, tmp_path)
    seen = 0
    for run_id in ids:
        report = analysis.analyze_run(store, run_id)
        for r in report.results:
            for vs in comparisons(r):
                assert vs.verdict_claim in ("band", "difference")
                shown = tables.comparison_cells(r, vs, report.run.correction)
                if vs.verdict in (Decided.PASS, Decided.FAIL, Decided.DIFFERS):
                    seen += 1
                    assert vs.verdict_p_adjusted is not None and \
                        vs.verdict_p_adjusted < vs.alpha, (r.environment, r.metric, vs)
                    assert vs.verdict_p <= vs.verdict_p_adjusted
                # the table's p columns are the verdict's own
                assert shown[3] == tables.numbers.p(vs.verdict_p)
                assert shown[4] == tables.numbers.p(vs.verdict_p_adjusted)
                want = "difference" if vs.verdict == Decided.DIFFERS else None
                if want:
                    assert vs.verdict_claim == want and vs.verdict_p == vs.p_value
                if vs.verdict in (Decided.PASS, Decided.FAIL) and vs.p_band is not None:
                    assert vs.verdict_claim == "band" and vs.verdict_p == vs.p_band
    if name == "real":
        assert seen > 0          # the saved runs do hold decided verdicts to check


def test_a_report_made_before_verdicts_named_their_claim_shows_the_p_of_no_difference():
    from virtbench.foundations.model import VsReference
    old = VsReference(p_value=0.2, p_holm=0.6, p_bh=0.4, verdict="inconclusive")
    assert tables.verdict_p(old) == 0.2
    assert tables.adjusted_p(old, "holm") == 0.6 and tables.adjusted_p(old, "bh") == 0.4
