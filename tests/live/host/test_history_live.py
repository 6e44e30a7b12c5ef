"""`virtbench history` over real quick native runs in one store: the runs tagged into a
series, lined up one point per run, value and ratio series, --fail-on's exit status."""
import json
import time

from virtbench.interface.cli import commands as cli


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_three_tagged_native_runs_line_up_into_series(capsys, store_url):
    t0 = time.monotonic()
    for _ in range(3):
        code, _, err = run_cli(capsys, "run", "--env", "native", "--env", "native:name=twin",
                               "--bench", "pi", "--trials", "2", "--quick", "--min-section",
                               "0", "--series", "live", "--no-progress")
        assert code == 0, err
    code, out, _ = run_cli(capsys, "history", "--series", "live", "--format", "json",
                           "--fail-on", "change")
    assert code == 0            # three runs: no change can be confirmed (2 before, 2 after)
    data = json.loads(out)
    assert data["runs"] == 3
    kinds = {(s["kind"], s["environment"]) for s in data["series"]}
    assert {("value", "native"), ("value", "twin"), ("ratio", "twin")} <= kinds
    for s in data["series"]:
        assert len(s["points"]) == 3 and all(p["series"] == "live" for p in s["points"])
        assert s["noise_floor_pct"] is not None and s["mde_pct"] is not None
        assert all(c["status"] != "confirmed" for c in s["changes"])
    assert time.monotonic() - t0 < 60
