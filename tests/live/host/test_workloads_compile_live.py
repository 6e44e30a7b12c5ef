"""`compile` natively: the quick tree (Lua 5.4.6) built for real through the CLI, and the
kernel size refused in one line where this host lacks what the kernel build needs."""
import json
import shutil

import pytest

from virtbench.interface.cli import commands as cli
from virtbench.measure import environments
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.workloads import trees


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _need(*programs):
    lacking = [p for p in programs if shutil.which(p) is None]
    if lacking:
        pytest.skip(f"{', '.join(lacking)} not installed (apt-get install build-essential)")


def test_quick_compile_natively_through_the_cli(capsys, store_url):
    _need("make", "gcc", "ar", "tar")
    code, out, err = run_cli(capsys, "run", "--env", "native", "--bench", "compile", "--quick",
                             "--trials", "2", "--no-progress")
    assert code == 0, err
    code, out, _ = run_cli(capsys, "report", "--format", "json")
    data = json.loads(out)
    (result,) = [r for r in data["results"] if r["benchmark"] == "compile"]
    assert result["metric"] == "seconds" and result["higher_is_better"] is False
    assert result["failed_trials"] == 0 and result["n"] + len(result["disturbed"]) == 2
    # Lua's 33 files at -O2: about 12 CPU-seconds here; more than a second, well under 20 min
    assert all(1.0 < s < 1200.0 for s in result["samples"]), result["samples"]


def test_the_kernel_size_names_the_packages_this_host_lacks(tmp_path):
    _need("make", "gcc", "tar")
    bench = REGISTRY["compile"]
    with environments.create(f"native:scratch={tmp_path}") as env:
        found = env.exec(["sh", "-c", trees.needs_script(trees.KERNEL)], timeout=60).stdout
        if not found.split():
            pytest.skip("this host has every package the kernel build needs (a real build "
                        "takes many minutes: run it by hand)")
        out = bench.run_trial(env, bench.params({"size": "kernel"}))
    assert not out.ok and len(out.error.splitlines()) == 1
    assert out.error.endswith("apt-get install " + " ".join(sorted(set(found.split()))))
    assert not list(tmp_path.glob("compile-*"))          # nothing extracted, nothing built
