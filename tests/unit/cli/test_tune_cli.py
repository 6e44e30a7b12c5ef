"""`virtbench tune` (issue 40): bad input is one line, exit 2, nothing run and nothing
stored; --dry-run prints the design (its resolution, aliasing, configurations, blocks and
expected time) and touches no store."""
from __future__ import annotations

import pytest

from virtbench.interface.cli import commands as cli

QUOTA = ["tune", "--env", "container", "--knob", "cpus=0.5,2", "--bench", "pi"]


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, message", [
    (["--knob", "cpu=0.5,2"], "tune: container has no knob 'cpu' (did you mean 'cpus'?)"),
    (["--knob", "mem=1G"], "tune: knob mem=1G has one level; give two"),
    (["--knob", "disk=ide,virtio"], "tune: container has no knob 'disk'"),
    (["--knob", "cpus"], "--knob cpus: write NAME=LEVEL1,LEVEL2"),
    (["--baseline", "base"], "tune: the base is every comparison's reference; drop --baseline"),
    (["--env", "native"], "tune: --env names the base configuration, once, not 2 times"),
    (["--duet"], "a tune runs all its configurations in each block; drop --duet"),
    (["--min-effect", "0"], "tune: min effect 0 % must lie above 0 and below 100"),
    (["--metric", "mb_s"], "tune: --metric mb_s: no benchmark of this tune reports it"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_stored(capsys, tmp_path, args, message):
    db = tmp_path / "s.db"
    code, out, err = run_cli(capsys, *QUOTA, *args, "--store", f"sqlite:///{db}")
    assert code == 2, err
    assert message in err and err.count("\n") == 1
    assert not db.exists()


def test_levels_that_cannot_combine_are_refused_before_anything_runs(capsys, tmp_path):
    db = tmp_path / "s.db"
    code, _, err = run_cli(capsys, "tune", "--env", "qemu", "--knob", "cache=writeback,none",
                           "--knob", "aio=threads,native", "--bench", "pi",
                           "--store", f"sqlite:///{db}")
    assert code == 2 and "tune: configuration c" in err and "cannot run" in err
    assert not db.exists()


def test_no_base_is_one_line(capsys):
    code, _, err = run_cli(capsys, "tune", "--knob", "cpus=0.5,2", "--bench", "pi",
                           "--dry-run")
    assert code == 2 and "tune: no base; give --env SPEC" in err


def test_a_dry_run_prints_the_design_and_touches_no_store(capsys, tmp_path):
    db = tmp_path / "s.db"
    knobs = ["--knob", "cpus=0.5,2", "--knob", "mem=512M,4G", "--knob", "storage=overlay,bind",
             "--knob", "network=ns,bridge"]
    code, out, err = run_cli(capsys, "tune", "--env", "container", *knobs, "--bench", "pi",
                             "--dry-run", "--store", f"sqlite:///{db}")
    assert code == 0, err
    assert ("design: fractional factorial, resolution IV, 8 of 16 configurations; base "
            "container:name=base in every block") in out
    assert "aliased: cpus×mem = storage×network" in out
    assert "  c1: cpus=0.5, mem=512M, storage=overlay, network=ns" in out
    assert ("screening: 4 block(s) x 9 environment(s) x 1 benchmark(s) = 36 trials, then the "
            "A/B of the recommendation against the base: 6 block(s) x 2 x 1 = 12 trials") in out
    assert "expected time: about" in out
    assert not db.exists()


def test_six_knobs_run_a_quarter_of_the_full_factorial(capsys):
    knobs = []
    for knob in ("cpus=0.5,2", "mem=512M,4G", "storage=overlay,bind", "network=ns,bridge",
                 "runtime=crun,runc", "engine=podman,podman"):
        knobs += ["--knob", knob]
    code, _, err = run_cli(capsys, "tune", "--env", "container", *knobs, "--bench", "pi",
                           "--dry-run")
    assert code == 2 and "engine=podman,podman names a level twice" in err
    code, out, _ = run_cli(capsys, "tune", "--env", "qemu", "--knob", "vcpus=1,2",
                           "--knob", "mem=256M,512M", "--knob", "nic=e1000,virtio-net",
                           "--knob", "disk=ide,virtio-blk", "--knob", "hugepages=off,on",
                           "--knob", "cache=writeback,unsafe", "--bench", "pi", "--dry-run")
    assert code == 0, _
    assert "design: fractional factorial, resolution IV, 16 of 64 configurations" in out


def test_a_study_files_tune_table_with_flags_over_it(capsys, tmp_path):
    path = tmp_path / "quota.toml"
    path.write_text('[tune]\nbase = "container"\nknobs = { cpus = ["0.5", "2"] }\n'
                    '[[benchmark]]\nname = "pi"\n')
    code, out, _ = run_cli(capsys, "tune", str(path), "--dry-run")
    assert code == 0 and "full factorial, 2 of 2 configurations" in out
    code, out, _ = run_cli(capsys, "tune", str(path), "--knob", "mem=512M,4G",
                           "--knob", "cpus=1,2", "--trials", "5", "--dry-run")
    assert code == 0 and "  c1: mem=512M, cpus=1" in out
    assert "screening: 5 block(s) x 5 environment(s)" in out


def test_a_dry_run_with_trials_auto_says_its_looks(capsys):
    code, out, _ = run_cli(capsys, *QUOTA, "--trials", "auto", "--max-trials", "30",
                           "--dry-run")
    assert code == 0
    assert ("trials auto: the effects are looked at after 6, 12, 24, 30 block(s), each look "
            "at alpha / 4, until every knob is decided") in out


def test_a_dry_run_with_refine_says_which_levels_it_would_try(capsys):
    code, out, err = run_cli(capsys, "tune", "--env", "container", "--knob", "cpus=0.5,1,2",
                             "--knob", "mem=512M,4G", "--bench", "pi", "--refine", "2",
                             "--dry-run")
    assert code == 0, err
    assert "  c1: cpus=0.5, mem=512M" in out and "cpus=1," not in out.split("refine:")[0]
    assert ("refine: if their knob matters, the levels between the ends of cpus (1) are "
            "tried against the best so far, 4 block(s) each; a knob's search stops after 2 "
            "tries in a row that do not move it") in out
