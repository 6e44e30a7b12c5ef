from dataclasses import replace

import pytest

from virtbench.study import design as study, flags as study_flags
from virtbench.core.errors import VirtbenchError


def write(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def test_load_a_study_file(tmp_path):
    s = study.load(write(tmp_path, """
name = "riken-2012"
trials = 12
baseline = "native"
[[environment]]
spec = "native"
[[benchmark]]
name = "stream"
params = { elements = 10000000, passes = 20, processes = 4 }
[[benchmark]]
name = "pi"
"""))
    assert s.name == "riken-2012" and s.trials == 12 and s.baseline == "native"
    assert [e.spec for e in s.environments] == ["native"]
    # the label shows the parameters that differ from the defaults
    assert s.benchmarks[0].label == "stream[processes=4]"
    assert s.benchmarks[1].label == "pi"
    study.validate(s)


@pytest.mark.parametrize("text, words", [
    ("name = ", "not valid TOML"),
    ("colour = 'red'", "unknown key 'colour'"),
    ("[[environment]]\nspec = 'native'\nimage = 'x'", "environment[1] (native): unknown key 'image'"),
    ("[[environment]]\nnote = 'x'", "environment[1]: needs spec"),
    ("[[benchmark]]\nparams = {}", "benchmark[1]: needs name"),
    ("trials = 'many'", "trials must be an integer or \"auto\", not 'many'"),
    ("[[benchmark]]\nname = 'stream'\nparams = 3", "benchmark[1] (stream): params must be a table"),
])
def test_malformed_study_files_name_the_problem(tmp_path, text, words):
    with pytest.raises(VirtbenchError) as err:
        study.load(write(tmp_path, text))
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_study_file(tmp_path):
    with pytest.raises(VirtbenchError, match="no such file"):
        study.load(tmp_path / "nope.toml")


def test_flags_override_the_file(tmp_path):
    s = study.load(write(tmp_path, """
trials = 12
[[environment]]
spec = "native"
[[benchmark]]
name = "stream"
params = { processes = 2 }
"""))
    s = study_flags.with_flags(s, study_flags.StudyFlags(bench=["stream", "pi"], trials=3,
                                                         quick=True, seed=5))
    assert s.trials == 3 and s.quick and s.seed == 5
    assert [b.label for b in s.benchmarks] == ["stream[processes=2]", "pi"]


@pytest.mark.parametrize("case, words", [
    (study.BenchmarkCase("nosuch"), "unknown benchmark 'nosuch'"),
    (study.BenchmarkCase("stream", {"colour": 1}), "unknown parameter colour"),
    (study.BenchmarkCase("stream", {"elements": "many"}), "should be an integer"),
    (study.BenchmarkCase("himeno", {"size": "XXL"}), "use one of: XS, S, M, L"),
])
def test_validate_rejects_bad_benchmarks(case, words):
    s = replace(study_flags.with_flags(None), benchmarks=[case])
    with pytest.raises(VirtbenchError, match=words):
        study.validate(s)


def test_validate_needs_something_to_run():
    with pytest.raises(VirtbenchError, match="nothing to run"):
        study.validate(study_flags.with_flags(None))


def test_plan_is_randomised_blocks_reproducible_by_seed():
    envs, cases = ["native", "qemu-tcg", "qemu-tcg/ide"], ["stream", "pi"]
    p = study.plan(envs, cases, trials=4, seed=42)
    assert len(p) == 4 * 3 * 2
    assert [s.seq for s in p] == list(range(24))
    for t in range(4):   # every block holds each (environment, benchmark) exactly once
        block = p[t * 6:(t + 1) * 6]
        assert {s.trial for s in block} == {t}
        assert sorted((s.environment, s.benchmark) for s in block) == sorted(
            (e, c) for e in envs for c in cases)
    assert p == study.plan(envs, cases, trials=4, seed=42)
    orders = {tuple((s.environment, s.benchmark) for s in study.plan(envs, cases, 4, seed))
              for seed in range(5)}
    assert len(orders) > 1


def test_quick_caps_trials_unless_given(tmp_path):
    text = "trials = 12\n[[benchmark]]\nname = 'pi'\n"
    flags = study_flags.StudyFlags
    assert study_flags.with_flags(study.load(write(tmp_path, text)), flags(quick=True)).trials == 5
    assert study_flags.with_flags(study.load(write(tmp_path, text)),
                                  flags(quick=True, trials=7)).trials == 7
    assert study_flags.with_flags(study.load(write(tmp_path, text))).trials == 12


def test_a_baseline_may_be_named_by_its_spec():
    """The label of a guest depends on what resolve() settles (qemu-tcg or qemu-kvm); a study
    file names its untuned guest by spec and the run compares against that guest."""
    from virtbench.execution.run.runner import prepare
    s = study_flags.with_flags(None, study_flags.StudyFlags(
        env=["native", "qemu:accel=tcg,disk=ide", "qemu:accel=tcg,disk=ide,iosched=none"],
        bench=["pi"], baseline="qemu:accel=tcg,disk=ide"))
    prepared = prepare(s, dry_run=True)
    assert prepared.baseline == "qemu-tcg/ide/virtio-net"
    assert s.baseline == "qemu:accel=tcg,disk=ide"        # the plan holds it; the study is frozen
    assert prepared.for_run(1).study.baseline == "qemu-tcg/ide/virtio-net"   # what a run stores
    with pytest.raises(VirtbenchError, match="use one of its labels"):
        prepare(replace(s, baseline="qemu:disk=nvme"), dry_run=True)
