"""Parsers of our kernels' result lines, on output captured from the real binaries."""
import pytest

from virtbench.benchmarks import REGISTRY, ParseError


def test_himeno_parser(fixture_text):
    assert REGISTRY["himeno"].parse(fixture_text("kernels", "himeno-s-t2.stdout")) == {
        "mflops": 5170.529}
    assert REGISTRY["himeno"].parse(fixture_text("kernels", "himeno-xs-n50.stdout")) == {
        "mflops": 5665.258}


def test_stream_parser_takes_the_aggregate(fixture_text):
    one = REGISTRY["stream"].parse(fixture_text("kernels", "stream-1p.stdout"))
    assert set(one) == {"copy_mb_s", "scale_mb_s", "add_mb_s", "triad_mb_s"}
    two = REGISTRY["stream"].parse(fixture_text("kernels", "stream-2p.stdout"))
    assert two == {"copy_mb_s": 46868.313, "scale_mb_s": 53515.814, "add_mb_s": 57375.735,
                   "triad_mb_s": 56733.564}


def test_pi_parser_and_a_wrong_digit_is_no_result(fixture_text):
    assert REGISTRY["pi"].parse(fixture_text("kernels", "pi-k16.stdout"))["seconds"] > 0
    with pytest.raises(ParseError, match="did not verify"):
        REGISTRY["pi"].parse(fixture_text("kernels", "pi-corrupt.stdout"))


@pytest.mark.parametrize("name, text, words", [
    ("himeno", "", "no JSON result line"),
    ("himeno", "Segmentation fault\n", "no JSON result line"),
    ("himeno", '{"kernel":"himeno","mflops":', "malformed JSON"),
    ("himeno", '{"kernel":"stream","mflops":1}', "not a himeno result"),
    ("himeno", '{"kernel":"himeno","mflops":"fast"}', "non-numeric 'mflops'"),
    ("stream", '{"kernel":"stream","validated":false,"aggregate":{}}', "validation"),
    ("stream", '{"kernel":"stream","validated":true}', "no aggregate"),
    ("pi", '{"kernel":"pi","verified":true}', "'seconds'"),
])
def test_garbage_is_a_parse_error(name, text, words):
    with pytest.raises(ParseError, match=words):
        REGISTRY[name].parse(text)


def test_quick_sizes_and_seed_defaults():
    assert REGISTRY["stream"].params() == {"elements": 10_000_000, "passes": 20, "processes": 1}
    assert REGISTRY["himeno"].params()["size"] == "M"
    assert REGISTRY["pi"].params() == {"k": 20}
    assert REGISTRY["pi"].params(quick=True) == {"k": 16}
    assert REGISTRY["stream"].params({"processes": 4}, quick=True)["processes"] == 4


def test_cyclepi_parser(fixture_text):
    v = REGISTRY["cyclepi"].parse(fixture_text("kernels", "cyclepi-n2e7.stdout"))
    assert v == {"cycles": 70383548.0, "seconds": 0.030604}
    bad = fixture_text("kernels", "cyclepi-n2e7.stdout").replace('"verified":true', '"verified":false')
    with pytest.raises(ParseError, match="wrong result"):
        REGISTRY["cyclepi"].parse(bad)


def test_cyclepi_kernel_runs_and_rejects_bad_arguments():
    import subprocess
    from virtbench import kernels
    binary = kernels.build() / "cyclepi"
    ok = subprocess.run([str(binary), "-n", "100000"], capture_output=True, text=True)
    assert ok.returncode == 0
    assert REGISTRY["cyclepi"].parse(ok.stdout)["cycles"] > 0
    bad = subprocess.run([str(binary), "-n", "12"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr
