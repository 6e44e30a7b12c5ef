"""Strict study files: the pydantic schema, each benchmark's declared parameters, the new
keys (warmup, pin, alpha, method_note) and what a bad file leaves behind (nothing)."""

import pytest

from virtbench.measure import benchmarks
from virtbench.interface.cli import commands as cli
from virtbench.study import design as study, flags as study_flags, schema as study_schema
from virtbench.core.errors import VirtbenchError

ENV = '\n[[environment]]\nspec = "native"\n'     # appended: top-level keys come first


def write(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p



@pytest.mark.parametrize("text, words", [
    # unknown keys, at the top and in each table
    ('colour = "red"\n', "unknown key 'colour'; valid keys: alpha, analysis, baseline, benchmark"),
    ('[[environment]]\nspec = "native"\nimage = "x"\n', "environment[1] (native): unknown key 'image'"),
    ('[[benchmark]]\nname = "pi"\n[[benchmark]]\nname = "stream"\nparms = { processes = 2 }\n',
     "benchmark[2] (stream): unknown key 'parms'; valid keys: label, method_note, name, params"),
    # a misspelled params key: the label would lie
    ('[[benchmark]]\nname = "stream"\nparams = { procesess = 4 }\n',
     "benchmark[1] (stream): params: benchmark stream: unknown parameter procesess; "
     "valid parameters: elements, passes, processes"),
    # wrong types
    ('trials = "many"\n', "trials must be an integer or \"auto\", not 'many'; write trials = 12"),
    ('budget = "a while"\ntrials = "auto"\n', "budget 'a while' is not a duration; write e.g. 15m"),
    ('trials = "auto"\nmin_trials = 10\nmax_trials = 8\n', "max_trials 8 is below min_trials 10"),
    ('min_trials = 1\n', "min_trials must be greater than or equal to 2"),
    ('min_section = -1\n', "min_section must be greater than or equal to 0"),
    ('duet = "yes"\n', "duet must be true or false"),
    ('trials = 12.5\n', "trials must be an integer"),
    ('trials = true\n', "trials must be an integer"),
    ('[[benchmark]]\nname = "pi"\nparams = { k = "17" }\n',
     "benchmark[1] (pi): params: benchmark pi: parameter k='17' should be an integer, like k=20"),
    ('[[benchmark]]\nname = "bonnie"\nparams = { per_char = 1 }\n', "should be true or false"),
    ('[[benchmark]]\nname = "pi"\nmethod_note = 3\n', "benchmark[1] (pi): method_note must be a string"),
    ('benchmark = "pi"\n', "benchmark must be an array of tables, not 'pi'"),
    # out of range
    ('trials = 0\n', "trials must be greater than or equal to 1, not 0"),
    ('alpha = 0.51\n', "alpha 0.51 is out of range: give a significance level in (0, 0.5], "
                        "e.g. alpha = 0.05"),
    ('alpha = 0\n', "alpha 0 is out of range"),
    ('threshold = 100\n', "threshold 100 is out of range: give a verdict threshold in % in "
                           "(0, 100), e.g. threshold = 10"),
    ('threshold = -5.0\n', "threshold -5 is out of range"),
    ('warmup = -1\n', "warmup must be greater than or equal to 0"),
    ('pin = "always"\n', "pin must be 'auto' or 'off', not 'always'"),
    ('correction = "bonferroni"\n', "correction must be 'holm' or 'bh', not 'bonferroni'; "
     'write e.g. correction = "holm" (or "bh": Benjamini-Hochberg)'),
    ('[[benchmark]]\nname = "pi"\nparams = { k = 40 }\n',
     "benchmark[1] (pi): params: benchmark pi: k=40 is out of range"),
    ('[[benchmark]]\nname = "rr"\nparams = { size = 1 }\n', "sockperf's smallest message is 14"),
    # unknown benchmark names are caught when the file is read
    ('[[benchmark]]\nname = "pie"\n', "benchmark[1] (pie): params: unknown benchmark 'pie'"),
])
def test_a_bad_study_is_one_line_naming_file_table_key(tmp_path, text, words):
    path = write(tmp_path, text + ENV)
    with pytest.raises(VirtbenchError) as err:
        study.load(path)
    message = str(err.value)
    assert message.startswith(f"study {path}: ")
    assert words in message
    assert "\n" not in message


@pytest.mark.parametrize("text", [
    'colour = "red"\n[[benchmark]]\nname = "pi"\n',
    '[[benchmark]]\nname = "stream"\nparams = { procesess = 4 }\n',
    '[[benchmark]]\nname = "pi"\nparams = { k = "x" }\n',
    'alpha = 0.7\n[[benchmark]]\nname = "pi"\n',
])
def test_bad_study_on_the_command_line_exit_2_one_line_nothing_written(tmp_path, capsys,
                                                                        clean_dirs, text):
    path = write(tmp_path, text + ENV)
    code = cli.main(["run", str(path), "--no-progress"])
    _, err = capsys.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and str(path) in err
    assert [d for d in clean_dirs if d.exists()] == []     # no store, no run dir, no build


def test_new_keys_and_their_defaults(tmp_path):
    s = study.load(write(tmp_path, '[[benchmark]]\nname = "pi"\n' + ENV))
    assert (s.warmup, s.pin, s.alpha, s.correction) == (1, "auto", 0.05, "holm")
    s = study.load(write(tmp_path, 'correction = "bh"\n[[benchmark]]\nname = "pi"\n' + ENV))
    assert s.correction == "bh" and s.to_dict()["correction"] == "bh"
    assert study_flags.with_flags(s, study_flags.StudyFlags(correction="holm")).correction == "holm"
    assert s.benchmarks[0].method_note is None and s.method_notes() == {}
    s = study.load(write(tmp_path, 'warmup = 3\npin = "off"\nalpha = 0.01\n'
                         '[[benchmark]]\nname = "pi"\nlabel = "superpi"\nmethod_note = "GMP"\n'
                         '[[benchmark]]\nname = "stream"\n' + ENV))
    assert (s.warmup, s.pin, s.alpha) == (3, "off", 0.01)
    assert s.method_notes() == {"superpi": "GMP"}


def test_run_metadata_carries_alpha_and_method_notes(tmp_path):
    """What the runner stores for the run (Study.to_dict) and what --resume reads back."""
    s = study.load(write(tmp_path, 'alpha = 0.02\n[[benchmark]]\nname = "pi"\n'
                         'params = { k = 17 }\nmethod_note = "not SuperPI"\n' + ENV))
    meta = s.to_dict()
    assert meta["alpha"] == 0.02
    assert meta["method_notes"] == {"pi[k=17]": "not SuperPI"}
    back = study.Study.from_dict(meta)
    assert back.alpha == 0.02 and back.benchmarks[0].method_note == "not SuperPI"
    assert back.benchmarks[0].params == {"k": 17}


def test_float_params_accept_integers_and_stay_floats():
    params = benchmarks.get("himeno").params({"target_seconds": 5})
    assert params["target_seconds"] == 5.0 and isinstance(params["target_seconds"], float)


def test_labels_show_only_non_default_params():
    assert study.BenchmarkCase("pi", {"k": 20}).label == "pi"
    assert study.BenchmarkCase("pi", {"k": 17}).label == "pi[k=17]"
    assert study.BenchmarkCase("bonnie", {"direct": False, "size_mb": 0}).label == \
        "bonnie[direct=false,size_mb=0]"
    assert study.BenchmarkCase("pi", {"k": 17}, label="mine").label == "mine"


def test_table_names_count_from_one():
    assert study_schema.table_name(("benchmark", 1, "params")) == ("benchmark[2]", "params")
    assert study_schema.table_name(("trials",)) == ("", "trials")
    assert study_schema.table_name(("environment", 0, "spec")) == ("environment[1]", "spec")


def test_a_run_stores_alpha_and_method_notes_in_its_metadata(tmp_path, capsys, store_url):
    from virtbench.foundations.store import Store
    path = write(tmp_path, 'alpha = 0.02\ntrials = 1\n[[benchmark]]\nname = "pi"\n'
                 'params = { k = 6 }\nmethod_note = "GMP, not SuperPI"\n' + ENV)
    code = cli.main(["run", str(path), "--no-progress", "--seed", "1"])
    _, err = capsys.readouterr()
    assert code == 0, err
    run = Store(store_url).get_run()
    assert run["study"]["alpha"] == 0.02
    assert run["study"]["method_notes"] == {"pi[k=6]": "GMP, not SuperPI"}


def test_trials_auto_and_its_bounds(tmp_path):
    s = study.load(write(tmp_path, 'trials = "auto"\nmin_trials = 8\nmax_trials = 40\n'
                                   'budget = "1h30m"\nmin_section = 0.25\nduet = true\n'
                                   'steal_limit = 5\ncpu_share_limit = 0.6\n'
                                   '[[benchmark]]\nname = "pi"\n' + ENV))
    assert (s.adaptive, s.trials, s.min_trials, s.max_trials) == (True, 8, 8, 40)
    assert s.budget_s == 5400 and s.min_section_s == 0.25 and s.duet
    assert (s.steal_limit_pct, s.cpu_share_limit) == (5.0, 0.6)
    assert s.trials_text == "auto (8..40, budget 90m)"
    again = study.Study.from_dict(s.to_dict())          # what --resume reads back
    assert (again.adaptive, again.budget_s, again.duet) == (True, 5400, True)
    plain = study.load(write(tmp_path, '[[benchmark]]\nname = "pi"\n' + ENV))
    assert (plain.adaptive, plain.trials, plain.min_section_s, plain.duet) == (False, 12, 0.5, False)
    assert (plain.steal_limit_pct, plain.cpu_share_limit) == (10.0, 0.7)


@pytest.mark.parametrize("text, seconds", [("15m", 900), ("90s", 90), ("1h30m", 5400),
                                           ("1.5h", 5400), ("600", 600)])
def test_budgets_are_durations(text, seconds):
    assert study_schema.duration_s(text) == seconds


def test_flags_make_a_study_adaptive_and_quick_does_not_cap_it():
    s = study_flags.with_flags(None, study_flags.StudyFlags(
        bench=["pi"], trials="auto", quick=True, budget="15m", max_trials=30))
    assert (s.adaptive, s.trials, s.max_trials, s.budget_s) == (True, 6, 30, 900)
    fixed = study_flags.with_flags(None, study_flags.StudyFlags(bench=["pi"], quick=True))
    assert not fixed.adaptive and fixed.trials == study_flags.QUICK_TRIALS
