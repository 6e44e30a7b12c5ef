"""The live part of tests/unit/core/test_warning_kinds.py: its tests that need root and this host.

One catalogue of warnings (virtbench/core/warning_kinds.py): every kind emitted anywhere in the
package is in it, every entry is emitted somewhere and documented in docs/warnings.md, the
messages have the form it gives, and reports carry each warning's severity and anchor.
"""
from __future__ import annotations
import re
from runkit import Flaky, Quiet, run_study
from virtbench.results import analysis
from virtbench.foundations import stats
from virtbench.core.warning_kinds import CATALOGUE
from virtbench.foundations.store import Store


def _pattern(message_form: str) -> re.Pattern:
    """A kind's message form as a regex: {fields} and "..." match anything."""
    forms = []
    for form in message_form.split(" | "):
        parts = re.split(r"\{\w+\}|\.\.\.", form)
        forms.append(".+?".join(re.escape(p) for p in parts))
    return re.compile("^(?:" + "|".join(forms) + ")$", re.S)


def test_messages_have_the_form_the_catalogue_gives(tmp_path):
    from storekit import open_fixture
    from virtbench.results.analysis.references import References
    from virtbench.measure.benchmarks.memory import cache_rule_warning
    messages = []
    for name in ("real", "failures", "published", "profiles"):
        store, ids = open_fixture(name, tmp_path)
        for run_id in ids:
            messages += [(w.kind, w.message) for w in analysis.analyze_run(store, run_id).warnings]
    store = Store(f"sqlite:///{tmp_path / 'dead.db'}")
    out = run_study(store, [Quiet("dead")], {"flaky": Flaky(fail_on={1, 2})}, trials=2)
    messages += [(w.kind, w.message) for w in analysis.analyze_run(store, out.run_id).warnings]
    messages += stats.noise_warnings([100.0] * 11 + [300.0])
    messages += stats.noise_warnings([100.0] * 10 + [300.0, 301.0])
    refs = References("native", [{"label": "native"}, {"label": "q/x2"}])
    messages.append(("no_like_for_like_baseline", refs.for_row("q/x2", "t", {"t"}).note))
    messages.append(("stream-cache-rule", cache_rule_warning(
        {"cache_rule": False, "llc_bytes": 32 * 2**20, "array_bytes": 16e6, "processes": 1})))
    seen = {kind for kind, _ in messages}
    assert {"few_samples", "high_cv", "outlier", "failed_trials", "all_trials_failed",
            "baseline_virtualized", "environment_note", "stream-cache-rule",
            "no_like_for_like_baseline"} <= seen
    wrong = [(k, m) for k, m in messages if not _pattern(CATALOGUE[k].message).match(m)]
    assert wrong == []
