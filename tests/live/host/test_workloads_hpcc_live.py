"""hpcc natively through the CLI at quick size (issue 39): the HPC Challenge under Open MPI
runs, every metric is there and plausible, and nothing is left in the scratch directory.

One run at N=2000 took 3.7 s here on 2 idle cores, so the test is about 10 s; MPI ranks
spin while they wait, so on a busy host it takes much longer (192 s here with a load
average about 10 from other work)."""
import json
import shutil

import pytest

from virtbench.interface.cli import commands as cli

pytestmark = pytest.mark.skipif(
    not (shutil.which("hpcc") and shutil.which("mpirun")),
    reason="hpcc or mpirun is not installed (apt-get install hpcc openmpi-bin)")


def test_hpcc_quick_natively(capsys, store_url, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir(mode=0o700)
    code = cli.main(["run", "--env", f"native:scratch={scratch}", "--bench", "hpcc", "--quick",
                     "--trials", "2", "--store", store_url, "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert cli.main(["report", "--format", "json", "--store", store_url]) == 0
    data = json.loads(capsys.readouterr().out)
    results = {r["metric"]: r for r in data["results"] if r["benchmark"] == "hpcc"}
    assert set(results) == {"hpl_gflops", "dgemm_gflops", "randomaccess_gups", "ptrans_gbs",
                            "fft_gflops", "ring_latency_us", "ring_bandwidth_gbs",
                            "stream_triad_gbs"}
    for r in results.values():
        assert r["failed_trials"] == 0 and r["samples"]
    median = {m: r["median"] for m, r in results.items()}
    # plausible for any x86 core of the last 15 years with the reference BLAS or better
    assert 0.05 < median["hpl_gflops"] < 5000
    assert 0.05 < median["dgemm_gflops"] < 5000
    assert 0.1 < median["stream_triad_gbs"] < 1000
    assert 0.01 < median["ring_latency_us"] < 10_000
    assert 0 < median["randomaccess_gups"] < 100
    assert list(scratch.iterdir()) == []         # each trial's work dir removed
