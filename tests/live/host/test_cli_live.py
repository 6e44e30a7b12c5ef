"""The live part of tests/unit/cli/test_cli.py: its tests that need root and this host.

The command line as users and scripts see it: exit codes, one-line errors, the reports.
"""
import csv
import io
import json
from virtbench.interface.cli import commands as cli


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_benchmarks_and_envs_list(capsys):
    code, out, _ = run_cli(capsys, "benchmarks")
    assert code == 0 and "himeno" in out and "triad_mb_s" in out
    code, out, _ = run_cli(capsys, "envs")
    assert code == 0 and "native" in out and "yes" in out


def test_quick_run_then_json_markdown_csv_reports(capsys, store_url):
    code, out, err = run_cli(capsys, "run", "--env", "native", "--bench", "stream",
                             "--bench", "himeno", "--bench", "pi", "--trials", "3", "--quick", "--min-section", "0",
                             "--no-progress", "--seed", "1")
    assert code == 0, err
    assert "stream" in out and "himeno" in out

    code, out, _ = run_cli(capsys, "report", "--format", "json")
    data = json.loads(out)
    assert set(data) >= {"run", "environments", "results", "warnings"}
    assert set(data["run"]) >= {"id", "study", "started", "finished", "quick", "status"}
    assert data["run"]["quick"] is True and data["run"]["status"] == "complete"
    assert data["environments"][0]["label"] == "native"
    assert data["environments"][0]["metadata"]["cores"] >= 1
    metrics = {(r["benchmark"], r["metric"]) for r in data["results"]}
    assert metrics == {("stream", "copy_mb_s"), ("stream", "scale_mb_s"), ("stream", "add_mb_s"),
                       ("stream", "triad_mb_s"), ("himeno", "mflops"), ("pi", "seconds")}
    for r in data["results"]:
        assert set(r) >= {"environment", "benchmark", "metric", "unit", "higher_is_better", "n",
                          "samples", "failed_trials", "trimmed_mean", "median", "stdev", "cv",
                          "ci_low", "ci_high", "vs_baseline"}
        # 3 trials each; one the host disturbed (steal on a shared VM) is kept out of the
        # statistics and listed with its reason
        assert r["n"] + len(r["disturbed"]) == 3 and len(r["samples"]) == r["n"] >= 1
        assert r["failed_trials"] == 0
        assert r["trimmed_mean"] > 0 and r["vs_baseline"] is None   # native is the baseline
    w = data["warnings"][0]
    assert set(w) >= {"environment", "benchmark", "metric", "kind", "message"}

    code, out, _ = run_cli(capsys, "report", "--format", "markdown")
    assert "## himeno" in out and "| native | mflops ↑ (MFLOPS) | 3 |" in out

    code, out, _ = run_cli(capsys, "report", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    # a row per kept sample: 3 trials x 6 metrics, less what the host disturbed (above)
    kept = sum(r["n"] for r in data["results"])
    assert len(rows) == kept and {r["environment"] for r in rows} == {"native"}
