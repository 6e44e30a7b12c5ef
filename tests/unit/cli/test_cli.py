"""The command line as users and scripts see it: exit codes, one-line errors, the reports."""
from pathlib import Path
import pytest
import sqlalchemy as sa
from virtbench.measure import benchmarks
from virtbench.interface.cli import commands as cli
from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.foundations.store import Store

REPO = Path(__file__).resolve().parents[3]


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, words", [
    (["run", "--bench", "nosuch"], "unknown benchmark 'nosuch'"),
    (["run", "--env", "nosuch", "--bench", "pi"], "unknown environment kind 'nosuch'"),
    (["run", "--env", "native:fast=yes", "--bench", "pi"], "unknown option fast"),
    (["run", "--bench", "pi", "--baseline", "qemu"], "baseline 'qemu' is not an environment"),
    (["run", "--bench", "himeno", "--trials", "0"], "trials must be at least 1"),
    (["run", "/nonexistent/study.toml"], "no such file"),
    (["run"], "nothing to run"),
    (["run", "--trials", "many"], "'many' is not a number of trials or auto"),
    (["run", "--bench", "pi", "--trials", "auto", "--budget", "soon"],
     "--budget 'soon' is not a duration; write e.g. 15m"),
    (["run", "--bench", "pi", "--budget", "15m"], "a budget bounds adaptive trials"),
    (["run", "--bench", "pi", "--trials", "auto", "--min-trials", "9", "--max-trials", "8"],
     "max_trials 8 is below min_trials 9"),
    (["run", "--bench", "pi", "--min-section", "-1"], "--min-section -1: give 0 (off) to 3600"),
    (["report", "--format", "pdf"], "invalid choice"),
    (["report", "--quiet", "--verbose"], "argument --verbose: not allowed with argument --quiet"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_stored(capsys, store_url, argv, words):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert words in err
    assert len(err.strip().splitlines()) == 1
    assert not Path(store_url[len("sqlite:///"):]).exists()


def test_malformed_study_file(capsys, store_url, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[benchmark]]\nname = 'stream'\nparams = { elements = }\n")
    code, _, err = run_cli(capsys, "run", str(bad))
    assert code == 2 and f"study {bad}: not valid TOML" in err


def test_report_of_an_empty_store(capsys, store_url):
    Store(store_url)
    code, _, err = run_cli(capsys, "report")
    assert code == 2 and "holds no runs yet" in err


@pytest.mark.parametrize("argv", [["report"], ["runs"], ["compare", "a", "b"],
                                  ["report", "--threshold", "5"]])
def test_read_commands_never_create_a_store(capsys, tmp_path, argv):
    where = tmp_path / "typo" / "store.db"
    code, out, err = run_cli(capsys, *argv, "--store", f"sqlite:///{where}")
    assert code == 2 and out == ""
    assert err == (f"virtbench: no store at {where}: run `virtbench run` first or pass "
                   "--store\n")
    assert list(tmp_path.iterdir()) == []


def test_run_ids_by_unique_prefix(capsys, store_url):
    from storekit import around, filled_run
    store = Store(store_url)
    ids = [filled_run(store, {"native": {}}, {"native": {"copy": around(100, n=3)}})
           for _ in range(2)]
    common = next(i for i in range(len(ids[0])) if ids[0][i] != ids[1][i])
    code, out, _ = run_cli(capsys, "report", ids[0][:common + 1], "--format", "json")
    assert code == 0 and f'"id": "{ids[0]}"' in out
    code, out, err = run_cli(capsys, "report", ids[0][:common])
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert f"run id {ids[0][:common]!r} is ambiguous" in err
    assert ids[0] in err and ids[1] in err


def test_dry_run_prints_the_plan_and_runs_nothing(capsys, store_url):
    code, out, _ = run_cli(capsys, "run", str(REPO / "studies" / "quick.toml"), "--quick",
                           "--dry-run")
    assert code == 0
    # --quick: 5 trials, and the study's default warm-up trial per environment x benchmark
    assert "(5 trials + 1 warm-up) x 2 environment(s) x 3 benchmark(s) = 36 trials" in out
    # (1 s + 2) himeno, 2 stream, 2 pi, x 6 trials x 2 environments = 84 s: warm-ups once
    assert "estimated time: about 1 min" in out
    assert "environment qemu-" in out
    assert "benchmark pi: k=16" in out
    assert not Path(store_url[len("sqlite:///"):]).exists()


class Flaky(Benchmark):
    """Trial 2 prints garbage, trial 3 crashes; the others report a number."""

    name = "flaky"
    family = "test"
    metrics = (Metric("value", "x", True),)
    defaults = {"counter": ""}

    def argv(self, params, env):
        script = ('n=$(($(cat {c} 2>/dev/null || echo 0) + 1)); echo $n > {c}; '
                  '[ $n = 2 ] && {{ echo "Segmentation fault? no: garbage"; exit 0; }}; '
                  '[ $n = 3 ] && {{ echo "core dumped" >&2; kill -SEGV $$; }}; '
                  'echo "{{\\"value\\": $n}}"').format(c=params["counter"])
        return ["sh", "-c", script]

    def parse(self, stdout):
        from virtbench.measure.benchmarks.base import last_json_line, number
        return {"value": number(last_json_line(stdout), "value")}


def flaky_study(tmp_path, monkeypatch):
    """A study of 5 trials of Flaky, registered for the test (trials 2 and 3 go wrong)."""
    monkeypatch.setitem(benchmarks.REGISTRY, "flaky", Flaky())
    study = tmp_path / "flaky.toml"
    study.write_text(f'trials = 5\n[[benchmark]]\nname = "flaky"\nlabel = "flaky"\n'
                     f'params = {{ counter = "{tmp_path / "n"}" }}\n')
    return study


def test_a_failing_trial_is_kept_with_its_stderr_and_the_others_stand(capsys, store_url, tmp_path,
                                                                      monkeypatch):
    study = flaky_study(tmp_path, monkeypatch)
    code, _, err = run_cli(capsys, "run", str(study), "--no-progress")
    assert code == 1
    assert "2 trial(s) failed" in err
    store = Store(store_url)
    run = store.get_run()
    trials = store.trials(run["id"])       # the warm-up (n = 1) ran first, stored apart
    assert [t["status"] for t in trials] == ["failed", "failed", "ok", "ok", "ok"]
    assert "unparsable output" in trials[0]["error"]
    assert "garbage" in trials[0]["stdout"]
    assert trials[1]["exit"] != 0 and "core dumped" in trials[1]["stderr"]
    assert sorted(s["value"] for s in store.samples(run["id"])) == [4.0, 5.0, 6.0]
    warm = [t for t in store.trials(run["id"], include_warmup=True) if t["warmup"]]
    assert [(t["trial"], t["status"]) for t in warm] == [(-1, "ok")]


class MissingTool(Benchmark):
    name = "missing-tool"
    family = "test"
    metrics = (Metric("value", "x", True),)

    def argv(self, params, env):
        return ["vb-no-such-tool", "--run"]


def test_a_tool_missing_in_the_environment_is_named_with_the_fix(capsys, store_url, monkeypatch):
    monkeypatch.setitem(benchmarks.REGISTRY, "missing-tool", MissingTool())
    code, _, err = run_cli(capsys, "run", "--bench", "missing-tool", "--trials", "1",
                           "--no-progress")
    assert code == 1
    assert "a tool is missing in the environment (vb-no-such-tool" in err
    assert "install it there" in err


def test_retry_failed_needs_resume(capsys, store_url):
    code, _, err = run_cli(capsys, "run", "--env", "native", "--bench", "pi", "--retry-failed")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--retry-failed needs --resume RUN_ID" in lines[0]
    assert "runs" not in sa.inspect(sa.create_engine(store_url)).get_table_names()


def test_resume_retry_failed_runs_the_failed_trials_again(capsys, store_url, tmp_path,
                                                          monkeypatch):
    study = flaky_study(tmp_path, monkeypatch)
    assert run_cli(capsys, "run", str(study), "--no-progress")[0] == 1
    store = Store(store_url)
    run_id = store.get_run()["id"]
    assert run_cli(capsys, "run", "--resume", run_id, "--no-progress")[0] == 0   # nothing missing
    assert [t["status"] for t in store.trials(run_id)].count("failed") == 2
    code, _, _ = run_cli(capsys, "run", "--resume", run_id, "--retry-failed", "--no-progress")
    assert code == 0
    assert [t["status"] for t in store.trials(run_id)] == ["ok"] * 5
    assert sorted(s["value"] for s in store.samples(run_id)) == [4.0, 5.0, 6.0, 7.0, 8.0]
    old = store.superseded_trials(run_id)
    assert [(o["trial"], o["status"]) for o in old] == [(0, "failed"), (1, "failed")]


def test_a_dry_run_of_adaptive_trials_says_its_bounds(capsys):
    code, out, err = run_cli(capsys, "run", "--env", "native", "--env", "native:name=twin",
                             "--bench", "pi", "--trials", "auto", "--budget", "15m", "--dry-run")
    assert code == 0, err
    assert "trials auto: 6 blocks first, then blocks for the undecided cases until decided, " \
           "60 usable blocks per case or 15 min in all" in out
    assert "environment twin  (native:name=twin)" in out


def test_adaptive_trials_and_duet_need_a_reference(capsys):
    code, _, err = run_cli(capsys, "run", "--env", "qemu", "--bench", "pi", "--trials", "auto",
                           "--dry-run")
    assert code == 2 and "trials = \"auto\" decides each environment against its reference" in err
    code, _, err = run_cli(capsys, "run", "--env", "native", "--bench", "pi", "--duet",
                           "--dry-run")
    assert code == 2 and "give exactly two environments, one of them the baseline, not 1" in err


def test_report_quiet_and_verbose(capsys, store_url):
    from storekit import filled_run
    store = Store(store_url)
    filled_run(store, {"native": {}, "qemu": {}},
               {"native": {"copy": [100.0, 80.0, 120.0]}, "qemu": {"copy": [50.0, 40.0, 60.0]}})
    code, quiet, _ = run_cli(capsys, "report", "--quiet")
    assert code == 0 and "warnings (" in quiet and "--verbose lists them" in quiet
    assert "CV 20.0 % is above 5 %" not in quiet
    code, verbose, _ = run_cli(capsys, "report", "--verbose")
    assert code == 0 and "CV 20.0 % is above 5 %" in verbose
    code, normal, _ = run_cli(capsys, "report", "--format", "markdown")
    assert code == 0 and "**high_cv** on 2 rows" in normal
