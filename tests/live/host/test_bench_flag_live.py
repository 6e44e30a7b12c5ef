"""The live part of tests/unit/study/test_bench_flag.py: its tests that need root and this host.

`--bench NAME[:key=value,...]` and `--dry-run`, as the command line sees them.
"""
import json
from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import Store


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bench_pi_k17_really_runs_k17(capsys, store_url):
    """The real pi kernel on this host: 2^17 digits, under the label pi[k=17]."""
    code, out, err = run_cli(capsys, "run", "--env", "native", "--bench", "pi:k=17",
                             "--trials", "1", "--no-progress", "--seed", "1")
    assert code == 0, err
    store = Store(store_url)
    run_id = store.list_runs()[0]["id"]
    trials = store.trials(run_id)
    assert trials and {t["benchmark"] for t in trials} == {"pi[k=17]"}
    for t in trials:
        assert t["params"] == {"k": 17}
        result = json.loads([line for line in t["stdout"].splitlines()
                             if line.startswith("{")][-1])
        assert result["digits"] == 2 ** 17 and result["verified"] is True
