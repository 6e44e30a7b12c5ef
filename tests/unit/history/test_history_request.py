"""What history is asked (results/history/request.py HistoryRequest): checked where it is
made, each bad value one line naming the flag; its filters pick the series named."""
from __future__ import annotations

import pytest

from virtbench.core import defaults
from virtbench.core.errors import VirtbenchError
from virtbench.results.history import HistoryRequest
from virtbench.results.history.series import SeriesKey


@pytest.mark.parametrize("changes, says", [
    ({"threshold_pct": 0.0}, "--threshold 0 is out of range"),
    ({"threshold_pct": float("nan")}, "--threshold nan is out of range"),
    ({"alpha": 0.7}, "--alpha 0.7 is out of range"),
    ({"correction": "bonferroni"}, "--correction bonferroni: use holm or bh")])
def test_a_bad_setting_is_one_line_where_the_request_is_made(changes, says):
    with pytest.raises(VirtbenchError) as err:
        HistoryRequest(**changes)
    assert str(err.value).startswith(says) and "\n" not in str(err.value)


def test_its_defaults_are_the_methods_and_its_filters_pick_the_series_named():
    asked = HistoryRequest()
    assert (asked.threshold_pct, asked.alpha, asked.correction) == \
        (defaults.THRESHOLD_PCT, defaults.ALPHA, defaults.CORRECTION)
    key = SeriesKey("value", "h", "vm", None, "pi[k=17]", "{}", False, "seconds")
    assert asked.wanted(key)
    assert HistoryRequest(environments=["vm"], metrics=["seconds"]).wanted(key)
    assert not HistoryRequest(environments=["native"]).wanted(key)
    assert not HistoryRequest(benchmarks=["pi"]).wanted(key)
    assert not HistoryRequest(metrics=["rate"]).wanted(key)
