"""The warnings grouped by kind (report/words/warning_groups.py): one line per kind with the places
it affects and one piece of advice that applies on this host; every warning kept for machines;
the text formats show the groups, --verbose each warning, --quiet a count."""
from __future__ import annotations

import html
import json

from storekit import filled_run

from virtbench.results.report.view import View
from virtbench.results import analysis, report
from virtbench.foundations import stats
from virtbench.results.report.words.warning_groups import Host, advice, figures, groups
from virtbench.foundations.model import RunWarning
from virtbench.foundations.store import Store

NOISY = [100.0, 80.0, 120.0]          # CV 20 %, 3 samples: high_cv and few_samples


def _noise(env: str, bench: str, metric: str, values=NOISY) -> list[RunWarning]:
    """The warnings the analysis makes of one row, in its words (stats.noise_warnings)."""
    out = []
    for kind, message in stats.noise_warnings(values):
        out.append(RunWarning(environment=env, benchmark=bench,
                              metric=None if kind == "few_samples" else metric,
                              kind=kind, message=message))
    return out


def _quick_study() -> list[RunWarning]:
    """Like the quick study's: 2 environments x (himeno 1 metric, stream 4, pi 1)."""
    ws: list[RunWarning] = []
    for env in ("native", "qemu-tcg/virtio-blk/virtio-net"):
        for bench, metrics in (("himeno", ["mflops"]),
                               ("stream", ["copy_mb_s", "scale_mb_s", "add_mb_s", "triad_mb_s"]),
                               ("pi", ["seconds"])):
            for i, m in enumerate(metrics):
                row = _noise(env, bench, m, [100.0, 80.0 - i, 120.0])
                ws += [w for w in row if w.kind != "few_samples" or i == 0]
    return ws


def test_twenty_warnings_become_one_line_per_kind_with_the_rows_they_affect():
    ws = _quick_study()
    assert len(ws) == 18                                # 12 high_cv + 6 few_samples
    made = groups(ws, Host(cpufreq=False))
    assert [g.kind for g in made] == ["few_samples", "high_cv"]
    cv = made[1]
    assert cv.count == 12
    assert cv.places == ["native · himeno · mflops", "native · stream (4 metrics)",
                         "native · pi · seconds",
                         "qemu-tcg/virtio-blk/virtio-net · himeno · mflops",
                         "qemu-tcg/virtio-blk/virtio-net · stream (4 metrics)",
                         "qemu-tcg/virtio-blk/virtio-net · pi · seconds"]
    assert cv.line == ("on 12 rows: native · himeno · mflops, native · stream (4 metrics), "
                       "native · pi · seconds, and 3 more: CV above 5 % (20-21.7 %); stop other "
                       "work on the host while virtbench measures")
    few = made[0]
    assert few.count == 6 and few.line.startswith(
        "on 6 benchmarks: native · himeno, native · stream, native · pi, and 3 more: few "
        "samples: the CI and p-value are rough (3 samples each); ")


def test_the_governor_advice_only_where_cpufreq_has_another_governor():
    ws = _noise("native", "pi", "seconds")
    cv = [w for w in ws if w.kind == "high_cv"]
    assert cv[0].message == "CV 20.0 % is above 5 %"    # the analysis adds the host's advice
    for host, governor_advised in ((Host(cpufreq=False), False),
                                   (Host(cpufreq=None), False),
                                   (Host(cpufreq=True, governor="performance"), False),
                                   (Host(cpufreq=True, governor="powersave"), True)):
        (g,) = groups(cv, host)
        assert ("governor" in g.line) is governor_advised, host
        assert "--trials" not in g.line                 # more trials do not lower a CV
    assert advice("high_cv", Host(cpufreq=True, governor="schedutil")) == (
        "set the CPU governor to performance (it is schedutil: cpupower frequency-set -g "
        "performance)")


def test_few_samples_under_quick_says_that_quick_caps_the_trials():
    assert advice("few_samples", Host(quick=True)).startswith("drop --quick (it caps trials at 5)")
    assert advice("few_samples", Host(quick=False)) == ("run 12 trials (--trials 12) as the "
                                                       "published studies did")


def test_each_high_cv_message_advises_what_applies_on_its_host(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    noisy = [100.0, 80.0, 120.0, 90.0, 110.0, 100.0, 85.0]
    for governor, said in ((None, "stop other work on the host while virtbench measures"),
                           ("powersave", "set the CPU governor to performance (it is "
                                         "powersave: cpupower frequency-set -g performance)")):
        md = {"cpufreq": "present", "governor": governor} if governor else {"cpufreq": "absent"}
        run = filled_run(store, {"native": md, "qemu": {}},
                         {"native": {"copy": noisy}, "qemu": {"copy": [x / 2 for x in noisy]}})
        result = analysis.analyze_run(store, run)
        cv = [w.message for w in result.warnings if w.kind == "high_cv"]
        assert cv and all(m.endswith(f"%: {said}") for m in cv), cv


def test_few_samples_advises_the_runs_own_count():
    assert advice("few_samples", Host(quick=True, trials_advised=13)) == (
        "drop --quick (it caps trials at 5) and run 13 trials (--trials 13) so that a lone "
        "difference among this run's rows can survive the correction")


def test_the_same_message_is_said_once_and_errors_come_first():
    same = "each STREAM array (16 MB over 1 process(es)) is smaller than 4 x the 32 MiB cache"
    ws = [RunWarning(environment=e, benchmark="stream", kind="stream-cache-rule", message=same)
          for e in ("native", "native/x2", "container")]
    ws.append(RunWarning(environment="qemu", benchmark="pi", kind="benchmark_skipped",
                         message="pi on qemu: not enough memory"))
    made = groups(ws, Host())
    assert [g.kind for g in made] == ["benchmark_skipped", "stream-cache-rule"]
    assert made[0].line == "qemu · pi: pi on qemu: not enough memory"
    assert made[1].line == f"on 3 benchmarks: native · stream, native/x2 · stream, " \
                           f"container · stream: {same}"
    assert made[1].advice is None                        # the message carries its own


def test_figures_range_or_sum_and_nothing_when_a_message_lacks_them():
    assert figures("few_samples", ["only 3 samples: ...", "only 4 samples: ..."]) == \
        " (3-4 samples each)"
    assert figures("disturbed_trials", ["2 trial(s) left out", "1 trial(s) left out"]) == \
        " (3 trials)"
    assert figures("high_cv", ["CV 5.4 % is above 5 %", "something else"]) == ""
    assert figures("environment_note", ["x"]) == ""


def test_the_host_is_the_baselines_fingerprint(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = filled_run(store, {"native": {"cpufreq": True, "governor": "powersave"}, "qemu": {}},
                     {"native": {"copy": NOISY}, "qemu": {"copy": [50.0, 40.0, 60.0]}})
    result = analysis.analyze_run(store, run)
    # 3 trials asked under --quick: not its cap of 5, so not "drop --quick"
    assert Host.of(result) == Host(cpufreq=True, governor="powersave", quick=False)
    cv = next(g for g in result.warning_groups if g.kind == "high_cv")
    assert cv.advice.startswith("set the CPU governor to performance (it is powersave")
    # the JSON keeps every warning and adds the groups
    doc = json.loads(report.render(result, "json"))
    assert len(doc["warnings"]) == len(result.warnings) >= 4
    assert sum(g["count"] for g in doc["warning_groups"]) == len(doc["warnings"])


def test_text_formats_show_groups_verbose_each_warning_quiet_a_count(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = filled_run(store, {"native": {"cpufreq": False}, "qemu": {}},
                     {"native": {"copy": NOISY, "scale": NOISY},
                      "qemu": {"copy": [50.0, 40.0, 60.0], "scale": [50.0, 40.0, 60.0]}})
    store.add_warning(run, "environment_note", "TCG, not KVM: kvm probe: QEMU failed: "
                      "qemu-system-x86_64: kvm.c:3183: Assertion `x' failed.", environment="qemu")
    result = analysis.analyze_run(store, run)
    cv_lines = [w.message for w in result.warnings if w.kind == "high_cv"]
    assert len(cv_lines) == 4
    for fmt in ("table", "markdown", "html"):
        normal = html.unescape(report.render(result, fmt))
        kind = ">high_cv</b>" if fmt == "html" else "high_cv"   # html folds each under it
        assert normal.count(kind) == 1, fmt                      # one line for the kind
        assert "KVM unusable here: QEMU's KVM probe failed (details in --verbose)" in normal
        assert "governor" not in normal.split(kind, 1)[1].split("\n", 1)[0], fmt
        verbose = " ".join(report.render(result, fmt, View(verbosity="verbose")).split())
        assert all(" ".join(m.split()) in verbose for m in cv_lines), fmt   # wraps at 100
        assert "Assertion" in verbose, fmt                       # the raw line, for --verbose
        quiet = report.render(result, fmt, View(verbosity="quiet"))
        assert "4 high" in quiet and cv_lines[0] not in quiet, fmt
    table = report.render(result, "table", View(verbosity="quiet"))
    assert "warnings (" in table and "--verbose lists them" in table
    assert "Trimmed mean" not in table                           # no detail tables
    assert "Assertion" not in report.render(result, "table")


def test_quick_is_named_only_when_it_capped_the_trials(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    five = [100.0, 80.0, 120.0, 90.0, 110.0]
    run = filled_run(store, {"native": {}, "qemu": {}},
                     {"native": {"copy": five}, "qemu": {"copy": [x / 2 for x in five]}})
    result = analysis.analyze_run(store, run)
    assert result.run.quick and result.run.trials_planned == 5
    assert Host.of(result).quick
    few = next(g for g in result.warning_groups if g.kind == "few_samples")
    assert few.advice.startswith("drop --quick (it caps trials at 5)")
    # one count everywhere: the run's trials_advised, in the group and in each message
    assert result.run.trials_advised == 12
    assert few.advice.endswith("run 12 trials (--trials 12) as the published studies did")
    assert all(w.message.endswith("run 12 trials (--trials 12) as the published studies did")
               for w in result.warnings if w.kind == "few_samples")
