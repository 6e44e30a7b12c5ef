"""`virtbench run --replay PATH` (interface/cli/artifact.py, results/report/artifact/replay.py): the
artifact's stored study run again through the runner (environments and benchmark faked: no
guest), stored as a new run that records what it replays, reported, then compared with the
artifact's run (imported first into a store that lacks it) with what differs in the stack;
a study flag beside --replay, or a tampered artifact, is one line and nothing is stored."""
from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from runkit import Quiet, one_study

import virtbench.execution.run.runner as runner_mod
from virtbench.core.outcome import TrialOutcome
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store
from virtbench.interface.cli import commands as cli
from virtbench.measure.benchmarks.base import Benchmark, Metric


class Seconds(Benchmark):
    """A time per environment: 1 s on native, `guest_s` in the guest, 1 % noise (seeded)."""
    name, family = "seconds", "test"
    metrics = (Metric("seconds", "s", False),)

    def __init__(self, guest_s: float):
        self.guest_s, self.rng = guest_s, random.Random(3)

    def run_trial(self, env, params):
        level = 1.0 if env.label == "native" else self.guest_s
        return TrialOutcome(values={"seconds": level * (1 + 0.01 * self.rng.gauss(0, 1))},
                            exit=0, wall_s=0.01)


class Kernel(Quiet):
    """A Quiet environment whose fingerprint names the host kernel under it."""

    def __init__(self, name: str, kernel: str):
        super().__init__(name)
        self.kernel = kernel

    def metadata(self) -> dict:
        return {"host_kernel": self.kernel}


def prepared(study, kernel: str, guest_s: float) -> Prepared:
    return Prepared(study, {"native": Kernel("native", kernel), "guest": Kernel("guest", kernel)},
                    {"x": (Seconds(guest_s), {})}, "native")


@pytest.fixture
def artifact(tmp_path):
    """A run made through the runner (host kernel 6.1.0, the guest 1.5 s), exported to
    tmp_path/art.tar.gz; (its store's URL, the run, the artifact's path)."""
    url = f"sqlite:///{tmp_path / 'S.db'}"
    store = Store(url)
    study = one_study(cases=[("x", "seconds")], name="replayed", trials=6, seed=11)
    runner = Runner(store, console=Console(file=io.StringIO()), show_progress=False)
    run = runner.start(prepared(study, "6.1.0", 1.5)).run_id
    store.engine.dispose()
    path = tmp_path / "art.tar.gz"
    assert cli.main(["export", run, "--artifact", str(path), "--store", url]) == 0
    return url, run, str(path)


def _fake_prepare(monkeypatch, seen: list, kernel: str = "6.9.0", guest_s: float = 3.0):
    """`prepare` as the replay calls it: the study recorded, fakes for its environments."""
    def fake(study, dry_run=False):
        seen.append(study)
        return prepared(study, kernel, guest_s)
    monkeypatch.setattr(runner_mod, "prepare", fake)


def test_a_replay_runs_the_stored_study_again_and_compares_it_with_the_artifact_run(
        capsys, monkeypatch, tmp_path, artifact):
    url, run, path = artifact
    seen: list = []
    _fake_prepare(monkeypatch, seen)
    fresh = f"sqlite:///{tmp_path / 'new' / 'T.db'}"
    code = cli.main(["run", "--replay", path, "--store", fresh, "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (study,) = seen
    assert (study.name, study.trials, study.seed, study.baseline) == ("replayed", 6, 11,
                                                                       "native")
    store = Store(fresh, read_only=True)
    ids = [r["id"] for r in store.list_runs()]
    assert run in ids and len(ids) == 2                 # the artifact's run, imported
    (new,) = [i for i in ids if i != run]
    replays = store.get_run(new)["detail"]["replays"]
    assert replays["run"] == run and replays["artifact"] == path
    assert f"imported run {run} from {path}" in err
    assert f"replay: run {new} replays run {run} ({path})" in out
    assert f"A = run {run} (replayed), B = run {new} (replayed)" in out
    assert f"what differs in the stack (run {run} → run {new}): 2 difference(s)" in out
    assert "host kernel 6.1.0 → 6.9.0" in out
    assert "slower" in out or "worse" in out            # the guest: 1.5 s then 3 s


def test_a_replay_into_the_store_that_holds_the_run_imports_nothing(
        capsys, monkeypatch, artifact):
    url, run, path = artifact
    _fake_prepare(monkeypatch, [], kernel="6.1.0", guest_s=1.5)
    code = cli.main(["run", "--replay", path, "--store", url, "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "imported run" not in err
    assert "what differs in the stack" in out and ": nothing" in out


@pytest.mark.parametrize("extra, words", [
    (["--trials", "3"], ["drop --trials"]),
    (["--quick"], ["drop --quick"]),
    (["studies/quick.toml"], ["drop the study file"]),
    (["--resume", "x"], ["not both"]),
    (["--retry-failed"], ["drop --retry-failed"]),
])
def test_a_study_flag_beside_replay_is_refused(capsys, monkeypatch, tmp_path, artifact,
                                              extra, words):
    _, _, path = artifact
    seen: list = []
    _fake_prepare(monkeypatch, seen)
    target = tmp_path / "new" / "T.db"
    code = cli.main(["run", "--replay", path, *extra, "--store", f"sqlite:///{target}"])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert all(w in err for w in words), err
    assert not seen and not target.exists()


def test_a_tampered_artifact_is_not_replayed(capsys, monkeypatch, tmp_path, artifact):
    _, _, path = artifact
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(bytes(data))
    seen: list = []
    _fake_prepare(monkeypatch, seen)
    target = tmp_path / "new" / "T.db"
    code = cli.main(["run", "--replay", str(bad), "--store", f"sqlite:///{target}"])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "bad.tar.gz" in err and "nothing was imported" in err
    assert not seen and not target.exists()
