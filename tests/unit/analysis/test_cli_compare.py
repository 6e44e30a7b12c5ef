"""`virtbench compare` end to end on stored runs: 3 trials -> inconclusive with the trials
needed; 12 trials, 2x -> worse / better; only-in rows and differing metadata printed."""
import json

import pytest

from storekit import around, filled_run

from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store


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
    assert "native, run A → run B: host kernel 6.1 → 6.12; everything else equal" in out


def test_twelve_trial_runs_twice_apart_are_worse_then_better(tmp_path, capsys):
    url, a, b = _runs(tmp_path, 12)
    assert cli.main(["compare", a, b, "--store", url, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in data["rows"]] == ["worse"]
    assert data["only_in_a"] == [["qemu", "stream", "t"]] and data["only_in_b"] == []
    assert cli.main(["compare", b, a, "--store", url, "--format", "json"]) == 0
    assert [r["verdict"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["better"]


def _eq_runs(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    labels = ("native", "qemu-tcg/ide/e1000/cache=writethrough",
              "qemu-tcg/ide/e1000/cache=writethrough,iosched=none")
    a = filled_run(store, {label: {} for label in labels},
                   {label: {"t": around(100 + i, 12)} for i, label in enumerate(labels)})
    return url, a, labels


def test_pair_splits_at_the_equals_sign_that_names_two_labels(tmp_path, capsys):
    url, a, (_, untuned, tuned) = _eq_runs(tmp_path)
    # labels holding '=': the split that gives a label of each run is the only one
    assert cli.main(["compare", a, a, "--pair", f"{tuned}={untuned}", "--store", url,
                     "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pairs"][tuned] == untuned
    assert [r["environment"] for r in data["rows"] if "→" in r["environment"]] == [
        f"{tuned} → {untuned}"]
    assert any("same run" in w and "--baseline" in w for w in data["warnings"])
    assert cli.main(["compare", a, a, "--pair", tuned, "--with", untuned, "--store", url,
                     "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"][tuned] == untuned


def test_a_pair_no_split_fits_or_that_splits_two_ways_is_one_line_naming_the_fix(tmp_path,
                                                                                 capsys):
    from virtbench.results.analysis import resolve_pairs
    from virtbench.core.errors import VirtbenchError
    url, a, (_, untuned, _) = _eq_runs(tmp_path)
    assert cli.main(["compare", a, a, "--pair", f"{untuned}=kvm", "--store", url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no '=' in it splits it" in err[0]
    assert err[0].endswith("write --pair LABEL_A --with LABEL_B")
    with pytest.raises(VirtbenchError, match="splits more than one way .* --with LABEL_B"):
        resolve_pairs(["a=b=c"], None, ["a", "a=b"], ["b=c", "c"])
    with pytest.raises(VirtbenchError, match="one per --pair"):
        resolve_pairs(["a", "b"], ["c"], ["a", "b"], ["c"])
    assert cli.main(["compare", a, a, "--with", untuned, "--store", url]) == 2
    assert "needs --pair" in capsys.readouterr().err
