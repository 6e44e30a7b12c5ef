"""`virtbench history` as pipelines see it: its formats, --fail-on's exit codes, every input
checked in one line (exit 2), and never a store created."""
import json
import pytest

from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store

from historykit import aa_store, stepped_store


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fail_on_regression_exits_3_on_a_step_and_0_on_an_aa_store(capsys, store_url, tmp_path):
    stepped_store(store_url)
    code, out, err = run_cli(capsys, "history", "--fail-on", "regression")
    assert code == 3
    assert "confirmed" in out and "changed: cpus default → 0.5" in out
    assert err.count("history: regression in the runs read: box · stream · triad") == 2
    code, _, err = run_cli(capsys, "history", "--fail-on", "regression", "--last", "2")
    assert code == 0 and "no confirmed regression in the last 2 run(s)" in err
    aa = f"sqlite:///{tmp_path / 'aa.db'}"
    aa_store(aa)
    code, _, err = run_cli(capsys, "history", "--store", aa, "--fail-on", "change")
    assert code == 0 and "no confirmed change in the runs read" in err


def test_an_improvement_fails_on_change_but_not_on_regression(capsys, store_url):
    stepped_store(store_url, factor=1.25)
    assert run_cli(capsys, "history", "--fail-on", "change")[0] == 3
    assert run_cli(capsys, "history", "--fail-on", "regression")[0] == 0


def test_json_and_markdown(capsys, store_url, tmp_path):
    stepped_store(store_url, series="nightly")
    code, out, _ = run_cli(capsys, "history", "--format", "json", "--series", "nightly")
    data = json.loads(out)
    assert code == 0 and data["series_name"] == "nightly" and data["runs"] == 9
    ratio = next(s for s in data["series"] if s["kind"] == "ratio")
    assert ratio["changes"][0]["status"] == "confirmed"
    assert ratio["changes"][0]["facts"][0]["key"] == "option:cpus"
    assert len(ratio["points"]) == 9 and ratio["points"][0]["series"] == "nightly"
    target = tmp_path / "history.md"
    code, out, _ = run_cli(capsys, "history", "--format", "markdown", "-o", str(target))
    text = target.read_text()
    assert code == 0 and text.startswith("# virtbench history")
    assert "| ratio | box / native @ testhost | stream | triad ↑ (quick) | 9 |" in text


@pytest.mark.parametrize("argv, words", [
    (["history", "--series", "no way"], "'no way' is not a series name"),
    (["history", "--last", "3"], "--last N needs --fail-on"),
    (["history", "--fail-on", "change", "--last", "0"], "'0' is not a whole number of runs"),
    (["history", "--fail-on", "crash"], "invalid choice: 'crash'"),
    (["history", "--format", "html"], "give -o DIR"),
    (["history", "--format", "xml"], "invalid choice: 'xml'"),
    (["history", "--threshold", "150"], "--threshold"),
    (["history", "--alpha", "2"], "--alpha"),
    (["history", "--series", "weekly"], "--series weekly: no run in"),
    (["history", "--host", "nosuch"], "--host nosuch: no complete run of that host"),
    (["history", "--metric", "nosuch"], "matches --env/--bench/--metric"),
    (["run", "--resume", "x", "--series", "nightly"], "--series tags a new run"),
])
def test_bad_input_is_one_line_exit_2(capsys, store_url, argv, words):
    store = stepped_store(store_url, before=3, after=0, series="nightly")
    before = [(r["id"], r["status"], r["series"]) for r in store.list_runs()]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert words in err and len(err.strip().splitlines()) == 1
    assert [(r["id"], r["status"], r["series"]) for r in store.list_runs()] == before


def test_history_never_creates_a_store(capsys, tmp_path):
    where = tmp_path / "none" / "store.db"
    code, out, err = run_cli(capsys, "history", "--store", f"sqlite:///{where}")
    assert code == 2 and out == "" and "no store at" in err
    assert list(tmp_path.iterdir()) == []


def test_an_empty_store_is_one_line(capsys, store_url):
    Store(store_url)
    code, _, err = run_cli(capsys, "history")
    assert code == 2 and "no complete run in" in err


def test_run_series_tags_the_run(capsys, store_url, monkeypatch):
    """run --series reaches the store through the runner (no benchmark actually run: the
    Runner's start is replaced by one that records what it was given)."""
    from virtbench.execution.run import runner as runner_mod
    seen = {}

    def start(self, prepared):
        seen["series"] = self.series
        raise SystemExit(0)
    monkeypatch.setattr(runner_mod.Runner, "start", start)
    with pytest.raises(SystemExit):
        cli.main(["run", "--env", "native", "--bench", "pi", "--trials", "2", "--quick",
                  "--series", "nightly"])
    assert seen == {"series": "nightly"}
    store = Store(store_url)
    run_id = store.create_run({"name": "t"}, seed=1, quick=True, version="t", host="h",
                              series="nightly")
    assert store.get_run(run_id)["series"] == "nightly"
    assert store.series_names() == ["nightly"]


def test_a_store_that_goes_away_is_exit_2_never_3(capsys, store_url, monkeypatch):
    from virtbench.foundations.store import StoreUnavailable
    stepped_store(store_url)

    def gone(self, *a, **k):
        raise StoreUnavailable(self.shown, "connection refused", "Store.samples()")
    monkeypatch.setattr(Store, "samples", gone)
    code, out, err = run_cli(capsys, "history", "--fail-on", "change")
    assert code == 2 and out == ""
    assert "went away during Store.samples() (connection refused)" in err
