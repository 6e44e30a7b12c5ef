"""The result model holds the classifications as core/decisions.py's enum members and writes
their words: the JSON report keeps its strings, and its schema lists the same words."""
import json

import pytest
from pydantic import ValidationError

from virtbench.core.decisions import ClaimStatus, CompareVerdict, Decided, Direction
from virtbench.foundations.model import (ClaimLink, CompareRow, PublishedRule, RunReport,
                                         VsReference)
from virtbench.foundations.model.schema import report_schema


def test_a_decision_read_from_its_word_is_the_enum_and_writes_the_word():
    vs = VsReference(verdict="differs, within threshold", direction="worse")
    assert vs.verdict is Decided.DIFFERS and vs.direction is Direction.WORSE
    dumped = json.loads(vs.model_dump_json())
    assert dumped["verdict"] == "differs, within threshold" and dumped["direction"] == "worse"
    assert json.loads(json.dumps(vs.model_dump()))["verdict"] == "differs, within threshold"
    assert VsReference().verdict is Decided.INCONCLUSIVE
    assert PublishedRule(verdict="fail").verdict is Decided.FAIL
    assert CompareRow(verdict="same").verdict is CompareVerdict.SAME
    assert ClaimLink(status="does not hold").status is ClaimStatus.NOT_HOLDS


def test_a_word_outside_the_vocabulary_is_refused():
    with pytest.raises(ValidationError):
        VsReference(verdict="passed")
    with pytest.raises(ValidationError):
        PublishedRule(verdict="inconclusive")       # the published rule is pass or fail


def test_a_report_read_back_compares_through_the_enum():
    report = RunReport.of({"results": [{"environment": "guest", "vs_baseline": {
        "verdict": "fail", "direction": "better"}}]})
    vs = report.results[0].vs_baseline
    assert vs.verdict == Decided.FAIL and vs.direction == Direction.BETTER


def test_the_schema_lists_each_enums_words():
    defs = report_schema()["$defs"]
    assert defs["VsReference"]["properties"]["verdict"]["enum"] == [str(d) for d in Decided]
    assert defs["CompareRow"]["properties"]["verdict"]["enum"] == [
        str(v) for v in CompareVerdict]
    assert defs["ClaimLink"]["properties"]["status"]["enum"] == [str(s) for s in ClaimStatus]
