import pytest

from virtbench.measure import environments
from virtbench.measure.benchmarks import REGISTRY, ParseError
from virtbench.measure.benchmarks.application import parse_blast_outfmt7


def test_blast_outfmt7_parser(fixture_text):
    assert parse_blast_outfmt7(fixture_text("blast", "blastn-outfmt7.stdout")) == {
        "queries": 5.0, "hits": 2 + 3 + 2 + 2 + 2}


def test_truncated_blast_output_is_a_parse_error(fixture_text):
    text = fixture_text("blast", "blastn-outfmt7.stdout")
    with pytest.raises(ParseError, match="did not finish"):
        parse_blast_outfmt7(text[: len(text) // 2])


def test_blast_end_to_end_in_native(tmp_path):
    bench = REGISTRY["blast"]
    params = bench.params({"sequences": 200, "queries": 3}, quick=True)
    with environments.create(f"native:scratch={tmp_path}") as env:
        first = bench.run_trial(env, params)
        assert first.ok, first.error
        assert first.values["seconds"] > 0
        second = bench.run_trial(env, params)      # the database is generated once
        assert second.ok
    assert len(list(tmp_path.glob("blast-*/db.n*"))) >= 3
