"""studies/upgrade.toml (issue 31): one reference guest and one environment per changed fact of
the stack (QEMU 10.0 by its fetched suite, guest Linux 6.12, OVMF), adaptive trials, the
reference as baseline; it loads and dry-runs with a fake fetched QEMU in a private cache, and
without one it is one line naming the fetch."""
from pathlib import Path

import pytest
from fetchedkit import fake_fetched
from runkit import forbid_building_probing_starting

from virtbench.interface.cli import commands as cli
from virtbench.execution.run.runner import prepare
from virtbench.study import design as study
from virtbench.study import flags as study_flags

REPO = Path(__file__).resolve().parents[3]
UPGRADE = REPO / "studies" / "upgrade.toml"
REFERENCE = "qemu"
# each environment against the reference: exactly one option changed, and which
CHANGES = {"q10": {"binary": "fetched:bookworm-backports"},
           "linux-6.12": {"linux": "bookworm-backports"},
           "ovmf": {"firmware": "ovmf"}}
BENCHES = ["pi", "stream", "himeno", "primitives", "boot", "tcp"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_design():
    s = study.load(UPGRADE)
    assert s.name == "upgrade" and s.baseline == REFERENCE
    assert s.adaptive and s.budget_s == 38 * 60 and 2 <= s.min_trials < s.max_trials
    assert [c.name for c in s.benchmarks] == BENCHES
    assert all(c.params == {} for c in s.benchmarks)       # sizes come from --quick
    specs = {e.parsed().options.get("name"): e.parsed() for e in s.environments}
    assert set(specs) == {REFERENCE, *CHANGES}
    ref = specs[REFERENCE]
    assert ref.kind == "qemu" and set(ref.options) == {"name"}   # every default: the system's
    for name, change in CHANGES.items():
        spec = specs[name]
        assert spec.kind == "qemu"
        options = {k: v for k, v in spec.options.items() if k != "name"}
        assert options == change, name        # one fact per environment, nothing else


def test_it_dry_runs_building_probing_starting_nothing(cache, capsys, store_url, monkeypatch):
    fake_fetched(cache, "bookworm-backports", "10.0.2")
    called = forbid_building_probing_starting(monkeypatch)
    code = cli.main(["run", str(UPGRADE), "--quick", "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert called == []
    assert "(6 trials + 1 warm-up) x 4 environment(s) x 6 benchmark(s) = 168 trials" in out
    assert "30 usable blocks per case or 38 min in all" in out
    assert "baseline: qemu;" in out
    assert "benchmark pi: k=16" in out and "benchmark tcp: streams=1, direction=bidir, " \
        "window=, seconds=3" in out                                  # quick sizes
    assert not Path(store_url[len("sqlite:///"):]).exists()
    # the same through the API: the fetched QEMU resolved from the cache, by its suite
    prepared = prepare(study_flags.with_flags(study.load(UPGRADE),
                                              study_flags.StudyFlags(quick=True)), dry_run=True)
    assert called == [] and list(prepared.envs) == [REFERENCE, *CHANGES]
    assert prepared.baseline == REFERENCE and list(prepared.cases) == BENCHES
    q10 = prepared.envs["q10"].qemu
    assert q10.version()[0] == "10.0.2" and q10.suite == "bookworm-backports"
    assert q10.path == str(cache / "qemu/bookworm-backports/root/usr/bin/qemu-system-x86_64")
    assert prepared.envs[REFERENCE].qemu.system


def test_without_the_fetch_it_is_one_line_exit_2(cache, capsys, store_url):
    code = cli.main(["run", str(UPGRADE), "--quick", "--dry-run"])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "run `virtbench qemu fetch bookworm-backports` first" in err
    assert not Path(store_url[len("sqlite:///"):]).exists()
