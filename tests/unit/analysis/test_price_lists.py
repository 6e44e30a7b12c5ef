"""The report's price lists from analysed results and exit profiles (pure): columns with the
baseline first, only the primitives cases, each cell linked to the exits of its environment's
profile, a failed profile links nothing, one sentence per family."""
from pathlib import Path

from virtbench.results.analysis.explain.pricelist import EXITS_NOTE, price_lists
from virtbench.foundations.model import Case, Profile, Result
from virtbench.machinery.exits.kvm_stat import parse_perf_kvm_stat_report

SVM = (Path(__file__).resolve().parents[2] / "fixtures" / "kvm" / "perf_kvm_stat"
       / "nested_svm_acpi_pm.txt")


def res(env, metric, mean, ratio=None, bench="primitives"):
    vs = None if ratio is None else {"ratio": ratio, "overhead_pct": (ratio - 1) * 100,
                                     "verdict": "fail", "reference": "native"}
    return Result(environment=env, benchmark=bench, metric=metric, unit="ns",
                  higher_is_better=False, n=3, trimmed_mean=mean, vs_baseline=vs)


RESULTS = [res(e, m, v, r) for e, m, v, r in [
    ("native", "cpuid_ns", 1000.0, None), ("kvm", "cpuid_ns", 1500.0, 1.5),
    ("tcg", "cpuid_ns", 11.0, 0.011),
    ("native", "syscall_ns", 200.0, None), ("kvm", "syscall_ns", 210.0, 1.05),
    ("tcg", "syscall_ns", 760.0, 3.8),
    ("kvm", "ioport_out_ns", 3000.0, None), ("tcg", "ioport_out_ns", 72.0, None)]] + [
    res("native", "seconds", 1.0, bench="pi")]
CASES = [Case(label="pi", name="pi"), Case(label="primitives", name="primitives"),
         Case(label="prim-io", name="primitives", params={"only": "ioport"})]
KVM_PROFILE = Profile(environment="kvm", benchmark="primitives", status="ok", source="kvm",
                      duration_s=2.0, by_reason=[r.__dict__ for r in parse_perf_kvm_stat_report(
                          SVM.read_text())])
TCG_FAILED = Profile(environment="tcg", benchmark="primitives", status="failed",
                     error="the twin did not boot")


def test_one_list_per_primitives_case_with_results_the_baseline_first():
    (pl,) = price_lists(CASES, ["kvm", "tcg", "native"], "native", RESULTS, [])
    assert pl.benchmark == "primitives" and pl.baseline == "native"
    assert pl.environments == ["native", "kvm", "tcg"]
    assert [r.metric for r in pl.rows] == ["syscall_ns", "cpuid_ns", "ioport_out_ns"]
    cpuid = pl.rows[1]
    assert [(c.environment, c.value, c.ratio) for c in cpuid.cells] == [
        ("native", 1000.0, None), ("kvm", 1500.0, 1.5), ("tcg", 11.0, 0.011)]
    assert cpuid.exit_reasons == ["cpuid"] and pl.rows[0].exit_reasons == []
    assert pl.rows[2].cells[0].value is None                 # not measured natively
    assert not any(c.profiled for r in pl.rows for c in r.cells) and EXITS_NOTE not in pl.notes
    said = {s.family: s.sentence for s in pl.sentences}
    assert said["syscall"].startswith("syscall: nothing an order of magnitude above native")
    assert "an order of magnitude below: cpuid_ns in tcg (0.011x)" in said["syscall"]
    assert said["ioport"] == "ioport: no figure of native to compare with (kvm, tcg measured it)"


def test_each_cell_is_linked_to_the_exits_of_its_environments_profile():
    (pl,) = price_lists(CASES, ["native", "kvm", "tcg"], "native", RESULTS,
                        [KVM_PROFILE, TCG_FAILED])
    cells = {(r.metric, c.environment): c for r in pl.rows for c in r.cells}
    kvm_cpuid = cells[("cpuid_ns", "kvm")]
    assert kvm_cpuid.profiled and [(e.reason, e.count) for e in kvm_cpuid.exits] == [
        ("cpuid", 35)]
    assert [(e.reason, e.count) for e in cells[("ioport_out_ns", "kvm")].exits] == [("io", 3475)]
    assert cells[("syscall_ns", "kvm")].exits == []            # a system call does not exit
    assert not cells[("cpuid_ns", "tcg")].profiled             # its profile failed
    assert not cells[("cpuid_ns", "native")].profiled
    # a primitive the profiled environment did not measure is linked to nothing
    (pl,) = price_lists(CASES, ["native", "kvm"], "native",
                        [r for r in RESULTS if r.metric != "cpuid_ns" or r.environment != "kvm"],
                        [KVM_PROFILE])
    kvm_cpuid = next(c for r in pl.rows if r.metric == "cpuid_ns" for c in r.cells
                     if c.environment == "kvm")
    assert kvm_cpuid.value is None and kvm_cpuid.exits == []
    assert EXITS_NOTE in pl.notes


def test_no_list_without_a_baseline_sentence_or_without_primitives():
    (pl,) = price_lists(CASES, ["kvm", "tcg"], None, RESULTS, [])
    assert pl.sentences == [] and pl.environments == ["kvm", "tcg"]
    assert price_lists(CASES[:1], ["native"], "native", RESULTS, []) == []


def test_a_cell_without_a_figure_says_why_when_the_benchmark_did():
    from virtbench.foundations.model import RunWarning
    warnings = [RunWarning(environment="tcg", benchmark="primitives", kind="primitives-skipped",
                           message="cpuid_ns: this environment gives the process one CPU"),
                RunWarning(environment="tcg", benchmark="other", kind="primitives-skipped",
                           message="syscall_ns: elsewhere"),
                RunWarning(environment="tcg", benchmark="primitives", kind="high_cv",
                           message="syscall_ns: noisy")]
    results = [r for r in RESULTS if (r.environment, r.metric) not in {
        ("tcg", "cpuid_ns"), ("tcg", "syscall_ns")}]
    (pl,) = price_lists(CASES, ["native", "kvm", "tcg"], "native", results, [], warnings)
    cells = {(r.metric, c.environment): c for r in pl.rows for c in r.cells}
    assert cells[("cpuid_ns", "tcg")].missing == "this environment gives the process one CPU"
    assert cells[("syscall_ns", "tcg")].value is None and cells[("syscall_ns", "tcg")].missing \
        is None                                      # no skipped warning of this case for it
    assert cells[("ioport_out_ns", "native")].missing.startswith("the ioport family runs only")
    assert cells[("cpuid_ns", "kvm")].missing is None          # measured
