"""`--bench NAME[:key=value,...]` and `--dry-run`, as the command line sees them."""
from pathlib import Path
from runkit import forbid_building_probing_starting
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.study import design as study, flags as study_flags
from virtbench.core.errors import VirtbenchError
from virtbench.execution.run.runner import prepare

REPO = Path(__file__).resolve().parents[3]


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("text, parsed", [
    ("pi", ("pi", {})),
    ("pi:", ("pi", {})),
    ("pi:k=17", ("pi", {"k": "17"})),
    ("tcp:direction=receive,streams=10", ("tcp", {"direction": "receive", "streams": "10"})),
    # a list stays one value: pieces without '=' continue the previous value
    ("scp:ciphers=aes128-ctr,3des-cbc,size_mb=64",
     ("scp", {"ciphers": "aes128-ctr,3des-cbc", "size_mb": "64"})),
])
def test_bench_spec_parsing(text, parsed):
    assert study_flags.parse_bench_spec(text) == parsed


@pytest.mark.parametrize("text, words", [
    (":k=17", "no benchmark name"),
    ("pi:=3", "is not key=value"),
    ("pi:k=1,k=2", "parameter k given twice"),
    ("pi:k=abc", "--bench pi:k=abc: benchmark pi: parameter k='abc' should be an integer"),
    ("pi:kk=3", "unknown parameter kk; valid parameters: k"),
    ("pi:k=40", "k=40 is out of range; use 6 to 28"),
    ("bonnie:direct=maybe", "should be true or false"),
    ("tcp:direction=sideways", "direction=sideways is not valid"),
])
def test_bad_bench_specs(text, words):
    with pytest.raises(VirtbenchError, match=words.replace("(", r"\(").replace("[", r"\[")):
        study_flags.bench_case(text)


def test_values_are_parsed_to_the_declared_types_and_labelled():
    case = study_flags.bench_case("tcp:direction=receive,streams=10")
    assert case.params == {"direction": "receive", "streams": 10}
    assert case.label == "tcp[direction=receive,streams=10]"
    assert study_flags.bench_case("pi:k=17").params == {"k": 17}
    assert study_flags.bench_case("pi:k=17").label == "pi[k=17]"
    assert study_flags.bench_case("bonnie:direct=false").params == {"direct": False}
    assert study_flags.bench_case("himeno:target_seconds=2").params == {"target_seconds": 2.0}
    assert study_flags.bench_case("pi:k=20").label == "pi"          # the default is no parameter


def test_two_parametrisations_are_two_rows_and_a_repeat_is_refused():
    s = study_flags.with_flags(None, study_flags.StudyFlags(bench=["pi:k=17", "pi:k=18", "pi"]))
    assert [c.label for c in s.benchmarks] == ["pi[k=17]", "pi[k=18]", "pi"]
    study.validate(s)
    s = study_flags.with_flags(None, study_flags.StudyFlags(bench=["pi", "pi:k=20"]))
    with pytest.raises(VirtbenchError, match="appears twice"):
        study.validate(s)


def test_bench_without_params_picks_the_study_benchmarks_by_label_or_name():
    riken = study.load(REPO / "studies" / "riken-2012.toml")
    s = study_flags.with_flags(riken, study_flags.StudyFlags(
        bench=["tcp-1-send", "stream", "pi:k=17"]))
    assert [c.label for c in s.benchmarks] == ["tcp-1-send", "stream-1p", "stream-4p", "pi[k=17]"]
    assert "nettcp" in s.benchmarks[0].method_note


def test_quick_may_not_silently_override_a_bench_parameter(capsys, store_url):
    code, _, err = run_cli(capsys, "run", "--bench", "pi:k=17", "--quick", "--dry-run")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--bench pi:k=17: --quick sets k=16, which would override your k=17" in err
    # a parameter --quick does not set is fine with --quick
    code, out, err = run_cli(capsys, "run", "--bench", "tcp:direction=receive", "--quick",
                             "--dry-run")
    assert code == 0, err
    assert "benchmark tcp[direction=receive]: streams=1, direction=receive" in out


@pytest.mark.parametrize("argv, words", [
    (["--bench", "pi:k=abc"], "should be an integer"),
    (["--bench", "stream:procesess=4"], "unknown parameter procesess"),
    (["--bench", "pi:k=99"], "out of range"),
])
def test_bad_bench_flags_exit_2_one_line_nothing_stored(capsys, store_url, argv, words):
    code, _, err = run_cli(capsys, "run", *argv)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert not Path(store_url[len("sqlite:///"):]).exists()


def test_dry_run_builds_probes_and_starts_nothing(capsys, store_url, monkeypatch):
    called = forbid_building_probing_starting(monkeypatch)
    code, out, err = run_cli(capsys, "run", str(REPO / "studies" / "quick.toml"), "--dry-run")
    assert code == 0, err
    assert called == []
    assert "(5 trials + 1 warm-up) x 2 environment(s) x 3 benchmark(s) = 36 trials" in out
    assert "nothing was built, probed or started" in out
    assert not Path(store_url[len("sqlite:///"):]).exists()
    # the same through the API
    prepared = prepare(study.load(REPO / "studies" / "quick.toml"), dry_run=True)
    assert called == [] and len(prepared.envs) == 2 and len(prepared.cases) == 3


def test_dry_run_shows_method_notes(capsys, store_url):
    code, out, err = run_cli(capsys, "run", str(REPO / "studies" / "zhang-kvm-io.toml"),
                             "--env", "native", "--dry-run")
    assert code == 0, err
    assert "benchmark tcp-rr: protocol=tcp, seconds=10, size=14" in out
    assert "method note: netperf TCP_RR" in out
