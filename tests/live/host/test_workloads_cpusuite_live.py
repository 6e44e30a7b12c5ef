"""cpu-suite natively through the command line at quick size, on two of its programs
(x264 and stockfish: about 2 s each natively here; x264's frames made in a second)."""
import json

import pytest

from virtbench.interface.cli import commands as cli
from virtbench.machinery.host import tools
from virtbench.measure.benchmarks.workloads.cpusuite.programs import BY_NAME, REFERENCE_S

CHOSEN = ("x264", "stockfish")


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cpu_suite_quick_subset_natively(capsys, store_url):
    lacking = tools.missing([BY_NAME[name].tool for name in CHOSEN] + ["python3"])
    if lacking:
        pytest.skip(f"not installed here: {', '.join(lacking)} ({tools.install_hint(lacking)})")
    code, out, err = run_cli(capsys, "run", "--env", "native", "--bench",
                             f"cpu-suite:programs={','.join(CHOSEN)}", "--quick", "--trials",
                             "2", "--store", store_url, "--no-progress")
    assert code == 0, err
    code, out, _ = run_cli(capsys, "report", "--format", "json", "--store", store_url)
    results = {r["metric"]: r for r in json.loads(out)["results"]
               if r["benchmark"].startswith("cpu-suite")}
    assert set(results) == {f"{name}_per_s" for name in CHOSEN} | {"score"}
    for name in CHOSEN:
        r = results[f"{name}_per_s"]
        assert r["failed_trials"] == 0 and r["n"] + len(r["disturbed"]) == 2
        # a quick run takes 0.1x to 10x its reference time here (a busy shared host is slow)
        seconds = 1 / r["median"]
        assert 0.1 < seconds / REFERENCE_S["quick"][name] < 10, (name, seconds)
    assert 0.1 < results["score"]["median"] < 10
