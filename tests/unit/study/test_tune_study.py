"""A tune's study (study/tune.py, design.tuned, a study file's [tune] table; issue 40): its
environments are the base and the design's configurations, checked before anything runs,
stored and read back typed."""
from __future__ import annotations

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.study import design as study_design
from virtbench.study.design import BenchmarkCase, Study, load, tuned
from virtbench.study.tune import Knob, TuneEntry, check, parse_knob


def _entry(*knobs: str, base: str = "container", **kw) -> TuneEntry:
    return TuneEntry(base=base, knobs=[parse_knob(k) for k in knobs], **kw)


def _study(*benches: str) -> Study:
    return Study(name="t", benchmarks=[BenchmarkCase(b) for b in benches or ("pi",)])


def test_the_environments_are_the_base_then_the_designs_configurations():
    study = tuned(_study(), _entry("cpus=0.5,2", "mem=512M,4G", "storage=overlay,bind",
                                   base="container:network=bridge"))
    specs = [e.spec for e in study.environments]
    assert specs[0] == "container:network=bridge,name=base"
    assert len(specs) == 1 + 8                        # 3 knobs: the full factorial
    assert specs[1] == "container:network=bridge,cpus=0.5,mem=512M,storage=overlay,name=c1"
    assert specs[-1] == "container:network=bridge,cpus=2,mem=4G,storage=bind,name=c8"
    assert study.baseline == "base" and study.threshold_pct == 5.0
    assert study.tune.knob_names == ("cpus", "mem", "storage")


def test_the_base_may_set_a_knob_and_the_configurations_override_it():
    entry = _entry("cpus=0.5,2", base="container:cpus=0.5")
    assert entry.spec({"cpus": "2"}, "recommended") == "container:cpus=2,name=recommended"
    assert entry.spec({}, "base") == "container:cpus=0.5,name=base"


def test_four_knobs_run_half_of_the_full_factorial():
    study = tuned(_study(), _entry("cpus=0.5,2", "mem=512M,4G", "storage=overlay,bind",
                                   "network=ns,bridge"))
    assert len(study.environments) == 1 + 8
    levels = [dict(lv) for _, lv in study.tune.configurations()]
    assert len({tuple(sorted(lv.items())) for lv in levels}) == 8      # all different


@pytest.mark.parametrize("knobs, base, message", [
    (["foo=1,2"], "container", "tune: container has no knob 'foo'; its knobs: cpus"),
    (["cpu=1,2"], "container", "(did you mean 'cpus'?)"),
    (["name=a,b"], "container", "tune: container has no knob 'name'"),
    (["instances=1,2"], "container", "tune: container has no knob 'instances'"),
    (["cpus=1"], "container", "tune: knob cpus=1 has one level; give two"),
    (["cpus=1,2,4"], "container", "has 3 levels; a screening takes two"),
    (["cpus=1,1"], "container", "names a level twice"),
    (["cpus=1,2", "cpus=1,4"], "container", "tune: knob cpus given twice"),
    (["runtime=crun,kata"], "container", "tune: knob runtime=crun,kata: environment "
                                         "container: runtime=kata is not valid; use one of"),
    (["cpus=0.5,2"], "xen", "unknown environment kind 'xen'"),
    ([], "container", "tune: no knob; give at least one"),
])
def test_bad_tunes_are_one_line(knobs, base, message):
    with pytest.raises(VirtbenchError) as exc:
        check(_entry(*knobs, base=base))
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_levels_that_cannot_combine_are_refused_naming_the_configuration():
    # QEMU's cache=none needs O_DIRECT-capable aio; aio=native needs cache=none (or
    # directsync): the kind refuses the pair, so the configuration that pairs them is named
    entry = _entry("cache=writeback,none", "aio=threads,native", base="qemu")
    with pytest.raises(VirtbenchError) as exc:
        check(entry)
    text = str(exc.value)
    assert text.startswith("tune: configuration c") and "cannot run:" in text
    assert "cache=writeback, aio=native" in text and "\n" not in text


def test_a_min_effect_outside_0_to_100_is_refused():
    with pytest.raises(VirtbenchError, match="min effect 0 % must lie above 0"):
        check(_entry("cpus=0.5,2", min_effect_pct=0.0))


def test_a_metric_no_benchmark_reports_is_refused():
    with pytest.raises(VirtbenchError, match="--metric triad_mb_s: no benchmark of this tune"):
        tuned(_study("pi"), _entry("cpus=0.5,2", metrics=["triad_mb_s"]))


def test_the_metrics_default_to_each_benchmarks_headline():
    entry = _entry("cpus=0.5,2")
    assert entry.metrics_of("pi") == ["seconds"]
    assert entry.metrics_of("stream") == ["copy_mb_s"]        # its first timed metric
    chosen = _entry("cpus=0.5,2", metrics=["triad_mb_s", "seconds"])
    assert chosen.metrics_of("stream") == ["triad_mb_s"]
    assert chosen.metrics_of("pi") == ["seconds"]


@pytest.mark.parametrize("text", ["cpus", "cpus=", "=1,2"])
def test_a_malformed_knob_flag_is_one_line(text):
    with pytest.raises(VirtbenchError, match="write NAME=LEVEL1,LEVEL2"):
        parse_knob(text)


def test_a_tune_is_stored_and_read_back_typed():
    study = tuned(_study(), _entry("cpus=0.5,2", "mem=512M,4G", metrics=["seconds"],
                                   min_effect_pct=3.0))
    back = Study.from_dict(study.to_dict())
    assert back.tune == study.tune
    assert back.tune.knobs[0] == Knob("cpus", ("0.5", "2"))
    assert back.environments == study.environments


def test_a_stored_tune_with_a_bad_min_effect_is_a_damaged_row():
    d = tuned(_study(), _entry("cpus=0.5,2")).to_dict()
    d["tune"]["min_effect_pct"] = 150
    with pytest.raises(Exception, match="its stored study"):
        Study.from_dict(d, "r1")


def test_a_study_file_with_a_tune_table(tmp_path):
    path = tmp_path / "tune.toml"
    path.write_text('name = "quota"\n[tune]\nbase = "container"\n'
                    'knobs = { cpus = ["0.5", "2"], mem = ["512M", "4G"] }\n'
                    "min_effect = 10\n[[benchmark]]\nname = \"pi\"\n")
    study = load(path)
    assert study.tune.knob_names == ("cpus", "mem") and study.tune.min_effect_pct == 10
    assert study.threshold_pct == 10 and study.baseline == "base"
    assert len(study.environments) == 5
    assert study.trials == study_design.defaults.TUNE_TRIALS     # a tune's own default


def test_a_study_file_with_a_tune_and_environments_is_refused(tmp_path):
    path = tmp_path / "tune.toml"
    path.write_text('[tune]\nbase = "container"\nknobs = { cpus = ["0.5", "2"] }\n'
                    '[[environment]]\nspec = "native"\n[[benchmark]]\nname = "pi"\n')
    with pytest.raises(VirtbenchError, match=r"drop the \[\[environment\]\] tables"):
        load(path)


def test_a_study_file_with_a_bad_knob_names_the_file(tmp_path):
    path = tmp_path / "tune.toml"
    path.write_text('[tune]\nbase = "container"\nknobs = { cpus = ["2"] }\n'
                    '[[benchmark]]\nname = "pi"\n')
    with pytest.raises(VirtbenchError) as exc:
        load(path)
    assert str(path) in str(exc.value) and "has one level" in str(exc.value)


def test_a_tune_in_duet_mode_is_refused():
    from dataclasses import replace
    study = tuned(_study(), _entry("cpus=0.5,2"))
    with pytest.raises(VirtbenchError, match="drop --duet"):
        study_design.validate(replace(study, duet=True))


@pytest.mark.parametrize("low, high, expected", [
    (6, 60, [6, 12, 24, 48, 60]), (4, 4, [4]), (3, 10, [3, 6, 10]), (5, 20, [5, 10, 20])])
def test_an_adaptive_screening_looks_at_doubling_blocks(low, high, expected):
    from virtbench.study.tune import looks
    assert looks(low, high) == expected


def test_an_adaptive_screening_decides_at_alpha_over_its_looks():
    from dataclasses import replace
    from virtbench.study.tune import screening_alpha
    study = tuned(_study(), _entry("cpus=0.5,2"))
    assert screening_alpha(study) == study.alpha
    auto = replace(study, adaptive=True, min_trials=6, max_trials=60)
    assert screening_alpha(auto) == pytest.approx(study.alpha / 5)


def test_a_refinement_takes_more_levels_and_screens_their_ends():
    entry = _entry("cpus=0.5,1,2", "mem=512M,4G", refine=2)
    check(entry)
    assert entry.knobs[0].ends == ("0.5", "2")
    assert {lv["cpus"] for _, lv in entry.configurations()} == {"0.5", "2"}
    assert Knob("q", ("1", "2", "4", "8")).inward("8") == ["4", "2"]
    assert Knob("q", ("1", "2", "4", "8")).inward("1") == ["2", "4"]
    back = Study.from_dict(tuned(_study(), entry).to_dict())
    assert back.tune.refine == 2 and back.tune.knobs[0].levels == ("0.5", "1", "2")


def test_a_refinements_tries_that_cannot_combine_are_refused_before_the_run():
    entry = _entry("cache=writeback,none", "queues=1,2,4", base="qemu:vcpus=2", refine=1)
    with pytest.raises(VirtbenchError) as exc:
        check(entry)
    assert "queues=4 is more than vcpus=2" in str(exc.value)
    entry = _entry("nic=e1000,virtio-net", "queues=1,4,2", base="qemu:vcpus=2", refine=1)
    with pytest.raises(VirtbenchError, match=r"configuration c\d \(.*queues=2\)|queues=4"):
        check(entry)


def test_a_refine_below_one_is_refused():
    with pytest.raises(VirtbenchError, match="--refine 0: give the tries in a row"):
        check(_entry("cpus=0.5,1,2", refine=0))
