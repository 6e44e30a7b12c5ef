"""Parsers of our kernels' result lines, on output captured from the real binaries."""
import pytest

from virtbench.machinery.kernels.build import source_dir

from virtbench.measure.benchmarks import REGISTRY, ParseError


def test_himeno_parser(fixture_text):
    assert REGISTRY["himeno"].parse(fixture_text("kernels", "himeno-s-t2.stdout")) == {
        "mflops": 1804.778}
    assert REGISTRY["himeno"].parse(fixture_text("kernels", "himeno-xs-n48.stdout")) == {
        "mflops": 1464.857}


@pytest.mark.parametrize("fixture, words", [
    ("himeno-xs-corrupt.stdout", "differs from the reference"),
    ("himeno-xs-n50-unverified.stdout", "could not be checked"),
])
def test_a_wrong_or_unchecked_residual_is_no_result(fixture_text, fixture, words):
    with pytest.raises(ParseError, match=words):
        REGISTRY["himeno"].parse(fixture_text("kernels", fixture))


def test_stream_parser_takes_the_aggregate(fixture_text):
    one = REGISTRY["stream"].parse(fixture_text("kernels", "stream-1p.stdout"))
    assert set(one) == {"copy_mb_s", "scale_mb_s", "add_mb_s", "triad_mb_s"}
    two = REGISTRY["stream"].parse(fixture_text("kernels", "stream-2p.stdout"))
    assert two == {"copy_mb_s": 10401.355, "scale_mb_s": 11066.698, "add_mb_s": 13044.284,
                   "triad_mb_s": 12784.355}


def test_pi_parser_and_a_wrong_digit_is_no_result(fixture_text):
    assert REGISTRY["pi"].parse(fixture_text("kernels", "pi-k16.stdout"))["seconds"] > 0
    with pytest.raises(ParseError, match="did not verify"):
        REGISTRY["pi"].parse(fixture_text("kernels", "pi-corrupt.stdout"))


@pytest.mark.parametrize("name, text, words", [
    ("himeno", "", "no JSON result line"),
    ("himeno", "Segmentation fault\n", "no JSON result line"),
    ("himeno", '{"kernel":"himeno","mflops":', "malformed JSON"),
    ("himeno", '{"kernel":"stream","mflops":1}', "not a himeno result"),
    ("himeno", '{"kernel":"himeno","verified":true,"mflops":"fast"}', "non-numeric 'mflops'"),
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
    from virtbench.machinery.kernels import build as kernels
    binary = kernels.build() / "cyclepi"
    ok = subprocess.run([str(binary), "-n", "100000"], capture_output=True, text=True)
    assert ok.returncode == 0
    assert REGISTRY["cyclepi"].parse(ok.stdout)["cycles"] > 0
    bad = subprocess.run([str(binary), "-n", "12"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_stream_cache_rule_warning_on_real_output(fixture_text):
    one = fixture_text("kernels", "stream-1p.stdout")   # 80 MB arrays, 32 MiB L3: rule broken
    kinds = REGISTRY["stream"].extra_warnings(one)
    assert [k for k, _ in kinds] == ["stream-cache-rule"]
    assert "elements >= 16777216" in kinds[0][1]
    two = fixture_text("kernels", "stream-2p.stdout")   # 2 x 80 MB >= 4 x 32 MiB: rule holds
    assert REGISTRY["stream"].extra_warnings(two) == []


def test_himeno_bounds_match_the_kernels_residual_table():
    import re
    from pathlib import Path
    from virtbench.measure.benchmarks.cpu import HIMENO_MAX_CHECKED, himeno_checked_count
    header = (source_dir() / "himeno_gosa.h").read_text()
    rows = re.findall(r'\{"(XS|S|M|L)", (\d+), ', header)
    most = {}
    for size, n in rows:
        assert himeno_checked_count(int(n)), n
        most[size] = max(most.get(size, 0), int(n))
    assert most == HIMENO_MAX_CHECKED


@pytest.mark.parametrize("params, ok", [
    ({"size": "M", "iterations": 8192}, True),
    ({"size": "M", "iterations": 10240}, False),      # a checked form, beyond M's table
    ({"size": "XS", "iterations": 10240}, True),
    ({"size": "S", "iterations": 50}, False),         # not a checked form
])
def test_himeno_iterations_must_have_a_reference_residual(params, ok):
    from virtbench.core.errors import VirtbenchError
    bench = REGISTRY["himeno"]
    if ok:
        assert bench.params(params)["iterations"] == params["iterations"]
    else:
        with pytest.raises(VirtbenchError, match="no reference residual"):
            bench.params(params)


def test_memory_needs_of_the_kernels():
    assert REGISTRY["himeno"].memory_need(REGISTRY["himeno"].params()) == 14 * 4 * 129 * 129 * 257
    assert REGISTRY["stream"].memory_need(REGISTRY["stream"].params()) == 240_000_000


def test_himeno_layout_parameter_reaches_the_kernel_and_the_label(fixture_text):
    from virtbench.core.errors import VirtbenchError
    from virtbench.study.design import default_label
    himeno = REGISTRY["himeno"]
    assert himeno.params()["layout"] == "padded"          # the reference's, by default

    class Env:
        def kernel_path(self, name):
            return f"/k/{name}"

    assert himeno.argv(himeno.params(), Env())[:5] == ["/k/himeno", "-s", "M", "-l", "padded"]
    packed = himeno.params({"layout": "packed"})
    assert himeno.argv(packed, Env())[3:5] == ["-l", "packed"]
    # size L's padded arrays are their own program (1.9 GB of static arrays)
    assert himeno.argv(himeno.params({"size": "L"}), Env())[0] == "/k/himeno-l"
    assert himeno.argv(himeno.params({"size": "L", "layout": "packed"}), Env())[0] == "/k/himeno"
    # the faster variant is never mistaken for the reference's figures: its label says so
    assert default_label("himeno", packed) == "himeno[layout=packed]"
    assert default_label("himeno", himeno.params()) == "himeno"
    with pytest.raises(VirtbenchError, match="layout=static is not valid"):
        himeno.params({"layout": "static"})
    # the padded layout holds one more plane per axis
    assert himeno.memory_need(himeno.params()) == 14 * 4 * 129 * 129 * 257
    assert himeno.memory_need(packed) == 14 * 4 * 128 * 128 * 256
    # both layouts' real output parses
    assert himeno.parse(fixture_text("kernels", "himeno-s-packed-n96.stdout")) == {"mflops": 2934.613}
    assert himeno.parse(fixture_text("kernels", "himeno-s-padded-t1.stdout")) == {"mflops": 4135.394}
