"""`virtbench compare` end to end on stored runs: 3 trials -> inconclusive with the trials
needed; 12 trials, 2x -> worse / better; only-in rows and differing metadata printed."""
import json

from storekit import around, filled_run

from virtbench import cli
from virtbench.store import Store


def _runs(tmp_path, n):
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    a = filled_run(store, {"native": {"host_kernel": "6.1"}, "qemu": {}},
                   {"native": {"t": around(100, n)}, "qemu": {"t": around(90, n)}})
    b = filled_run(store, {"native": {"host_kernel": "6.12"}},
                   {"native": {"t": around(50, n)}})
    return url, a, b


def test_three_trial_runs_are_inconclusive_with_trials_needed(tmp_path, capsys):
    url, a, b = _runs(tmp_path, 3)
    assert cli.main(["compare", a, b, "--store", url]) == 0
    out = capsys.readouterr().out
    assert "inconclusive (≥ 6 trials)" in out and "6 trials per side" in out
    assert "only in A" in out and "qemu · stream · t" in out
    assert "host_kernel: '6.1' → '6.12'" in out


def test_twelve_trial_runs_twice_apart_are_worse_then_better(tmp_path, capsys):
    url, a, b = _runs(tmp_path, 12)
    assert cli.main(["compare", a, b, "--store", url, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in data["rows"]] == ["worse"]
    assert data["only_in_a"] == [["qemu", "stream", "t"]] and data["only_in_b"] == []
    assert cli.main(["compare", b, a, "--store", url, "--format", "json"]) == 0
    assert [r["verdict"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["better"]
