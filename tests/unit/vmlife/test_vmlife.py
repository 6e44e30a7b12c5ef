"""The life cycle's pure parts on real captures from this machine (tests/fixtures/lifecycle,
made by its capture.py from virtbench's own runs under TCG): boot phases from the boot
timer's stamps and the guest's kernel log, PSS/USS arithmetic from /proc's smaps files,
migration figures from QMP's reply, the guest-observed gap and the work lost from a real
ticker's lines, microvm's TSC rate from /proc/cpuinfo."""
from __future__ import annotations
import base64
import json
from pathlib import Path
import pytest
from virtbench.measure.environments.qemu.cmdline.microvm import parse_tsc_khz
from virtbench.machinery.vmlife import footprint as fp
from virtbench.machinery.vmlife import migration as mig
from virtbench.machinery.vmlife.phases import (
    PhaseError,
    container_phases,
    guest_phases,
    marker_offsets,
    parse_kmsg,
)

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "lifecycle"


def load(name: str) -> dict:
    return json.loads((FIX / name).read_text())


# -- boot phases --------------------------------------------------------------------------
@pytest.mark.parametrize("name, firmware", [("boot-pc.json", True), ("boot-microvm.json", False)])
def test_a_real_boot_is_cut_into_phases_that_sum_to_its_total(name, firmware):
    b = load(name)
    phases = guest_phases(b["vmm_start"], b["ready"], b["kmsg"], b["stamps"], b["firmware"])
    values = phases.values()
    # the firmware's share: VMM start to the kernel's clock zero, vmm (+ firmware where the
    # firmware prints), outside the phases' sum
    assert values.pop("to_kernel_s") == pytest.approx(
        phases.phases["vmm_s"] + phases.phases.get("firmware_s", 0.0))
    assert values == pytest.approx(b["phases"])                   # as the run computed them
    assert ("firmware_s" in phases.phases) == firmware           # SeaBIOS prints, qboot not
    assert list(phases.phases)[-4:] == ["kernel_s", "initramfs_s", "init_s", "agent_s"]
    assert all(v > 0 for v in phases.phases.values())
    assert abs(phases.mismatch_pct) < 1.0                         # the 1 %
    # the sum misses the total by exactly the drift between the first and last marker
    assert phases.sum_s - phases.total_s == pytest.approx(phases.detail["mismatch_s"], abs=1e-6)
    assert phases.total_s == pytest.approx(b["ready"] - b["vmm_start"])


def test_kernel_log_lines_and_markers():
    log = parse_kmsg(load("boot-pc.json")["kmsg"])
    assert log.init == "/init" and 1.0 < log.run_init_s < 10.0
    assert set(log.marks) == {"i", "r", "s", "a"}
    assert all(lo <= hi for lo, hi in log.marks.values())
    assert log.marks["i"][0] > log.run_init_s                     # /init runs after the line
    order = [log.marks[k][0] for k in "irsa"]
    assert order == sorted(order)


def test_marker_offsets_agree_within_their_bounds():
    b = load("boot-microvm.json")
    offsets = marker_offsets(parse_kmsg(b["kmsg"]), b["stamps"])
    assert set(offsets) == {"i", "r", "s", "a"}
    values = [o.offset_s for o in offsets.values()]
    # one clock mapping: each marker's offset within 2 % of the boot of the others
    assert max(values) - min(values) < 0.02 * (b["ready"] - b["vmm_start"])
    assert all(0 < o.bound_s < 0.2 for o in offsets.values())


def test_phase_edges_are_checked():
    b = load("boot-pc.json")
    kmsg = "\n".join(line for line in b["kmsg"].splitlines() if "vb-phase r" not in line)
    with pytest.raises(PhaseError, match="marker 'r'"):
        guest_phases(b["vmm_start"], b["ready"], kmsg, b["stamps"], b["firmware"])
    with pytest.raises(PhaseError, match="no byte 'a'"):
        guest_phases(b["vmm_start"], b["ready"], b["kmsg"],
                     [s for s in b["stamps"] if s[1] != "a"], b["firmware"])
    with pytest.raises(PhaseError, match="negative"):       # an answer before the agent ran
        guest_phases(b["vmm_start"], b["stamps"][-1][0] - 1.0, b["kmsg"], b["stamps"])
    no_run = b["kmsg"].replace("as init process", "")
    with pytest.raises(PhaseError, match="Run"):
        guest_phases(b["vmm_start"], b["ready"], no_run, b["stamps"])


def test_container_phases_with_and_without_a_kernel_of_its_own():
    plain = container_phases(100.0, 100.13, 100.26, kernel_zero=5.0)   # the host's boot
    assert plain.phases == pytest.approx({"runtime_s": 0.13, "agent_s": 0.13})
    sandbox = container_phases(100.0, 100.65, 100.8, kernel_zero=100.45)  # gVisor's sentry
    assert sandbox.phases == pytest.approx({"runtime_s": 0.45, "sandbox_s": 0.2, "agent_s": 0.15})
    assert sandbox.sum_s == pytest.approx(sandbox.total_s)
    with pytest.raises(PhaseError):
        container_phases(100.0, 101.0, 100.5)


# -- footprint ----------------------------------------------------------------------------
def test_rollup_fields_and_uss():
    r = fp.parse_rollup((FIX / "qemu-smaps_rollup").read_text())
    assert r["Pss"] == 506124 * 1024 and r["Rss"] == 518756 * 1024
    assert fp.uss(r) == (63184 + 433164) * 1024
    with pytest.raises(ValueError):
        fp.parse_rollup("Rss: 1 kB\n")


def test_qemu_guest_ram_and_overhead_from_real_smaps():
    maps = fp.parse_smaps((FIX / "qemu-smaps").read_text())
    rollup = fp.parse_rollup((FIX / "qemu-smaps_rollup").read_text())
    # smaps and its rollup were read a moment apart: the sums agree within 1 %
    assert sum(m.get("Pss") for m in maps) == pytest.approx(rollup["Pss"], rel=0.01)
    ram = fp.guest_ram(maps, 2**30)                           # mem=1G
    assert len(ram) == 1 and ram[0].end - ram[0].start == 2**30 and ram[0].perms == "rw-p"
    tcg = fp.tcg_buffer(maps)
    assert tcg and all("x" in m.perms for m in tcg)
    assert not fp.guest_ram(maps, 3 * 2**30)                   # no 3 GiB block there
    f = fp.combine([rollup], ram, tcg=tcg)
    assert f.guest_resident == ram[0].get("Rss") > 0
    assert f.overhead == rollup["Pss"] - ram[0].get("Pss")
    v = f.values()
    assert v["overhead_mib"] == pytest.approx(v["pss_mib"] - ram[0].get("Pss") / 2**20)
    assert v["overhead_no_tcg_mib"] == pytest.approx(v["overhead_mib"] - f.tcg_buffer / 2**20)


def test_gvisor_sandbox_memory_file():
    maps = fp.parse_smaps((FIX / "gvisor-sentry-smaps").read_text())
    mem = fp.memfd_ram(maps, "runsc-memory")
    assert mem and all("runsc-memory" in m.path for m in mem)
    assert sum(m.get("Rss") for m in mem) > 0
    assert not fp.tcg_buffer([m for m in maps if m.anonymous and "x" not in m.perms])
    rollup = fp.parse_rollup((FIX / "gvisor-sentry-smaps_rollup").read_text())
    f = fp.combine([rollup], None, guest_pss=sum(m.get("Pss") for m in mem))
    assert 0 < f.guest_pss < f.pss and f.overhead == f.pss - f.guest_pss
    assert "overhead_no_tcg_mib" not in f.values()


def test_a_containers_guest_part_is_its_own_processes():
    agent = fp.parse_rollup((FIX / "container-agent-smaps_rollup").read_text())
    conmon = {"Pss": 1000 * 1024, "Rss": 2000 * 1024, "Private_Dirty": 300 * 1024}
    f = fp.combine([agent, conmon], None, guest_pss=agent["Pss"])
    assert f.overhead == conmon["Pss"] and f.guest_resident == agent["Pss"]


def test_host_state_reads_ksm_and_thp(tmp_path):
    (tmp_path / "ksm").mkdir()
    (tmp_path / "transparent_hugepage").mkdir()
    (tmp_path / "ksm/run").write_text("0\n")
    (tmp_path / "transparent_hugepage/enabled").write_text("always [madvise] never\n")
    state = fp.host_state(tmp_path)
    assert state["ksm_run"] == "0" and state["thp_enabled"] == "madvise"
    assert state["ksm_pages_sharing"] is None and state["thp_defrag"] is None


def test_microvm_tsc_rate_from_real_cpuinfo():
    text = (FIX / "cpuinfo-host.txt").read_text()
    khz = parse_tsc_khz(text)
    assert khz is not None and 1_000_000 < khz < 10_000_000
    assert parse_tsc_khz(text.replace("constant_tsc", "")) is None


# -- migration ----------------------------------------------------------------------------
def real_ticks(m: dict):
    lines = [x for chunks in m["chunks"]
             for x in mig.split_lines([(t, base64.b64decode(d)) for t, d in chunks])]
    return mig.parse_ticks(lines)


def test_migration_figures_from_a_real_reply():
    m = load("migrate.json")
    reply = m["replies"][0]
    got = mig.migration_figures(reply)
    assert got["total_s"] == reply["total-time"] / 1000
    assert got["downtime_s"] == reply["downtime"] / 1000
    assert got["transferred_mib"] == reply["ram"]["transferred"] / 2**20
    assert {k: got[k] for k in m["values"] if k in got} == pytest.approx(
        {k: v for k, v in m["values"].items() if k in got})


def test_guest_observed_downtime_and_work_lost_from_real_ticks():
    m = load("migrate.json")
    ticks = real_ticks(m)
    assert [t.seq for t in ticks] == list(range(1, len(ticks) + 1))     # each once, in order
    assert all(a.done <= b.done for a, b in zip(ticks, ticks[1:]))
    cost = mig.disruption(ticks, tuple(m["before"]), tuple(m["window"]))
    assert cost.downtime_guest_s == pytest.approx(m["values"]["downtime_guest_s"])
    # the largest gap in the window is larger than any before it, and QEMU's downtime
    assert cost.downtime_guest_s > cost.baseline_gap_s
    assert cost.downtime_guest_s >= m["values"]["downtime_s"]
    assert m["window"][0] < cost.gap_at_s < m["window"][1]
    # the guest's clock stood still in that gap: it advanced less than the host's
    at = next(i for i, t in enumerate(ticks) if t.host_s > cost.gap_at_s)
    gap_guest = (ticks[at].guest_ns - ticks[at - 1].guest_ns) / 1e9
    assert gap_guest < 0.8 * (ticks[at].host_s - ticks[at - 1].host_s)
    assert cost.work_lost_s == pytest.approx(m["values"].get("work_lost_s", 0.0))


def test_lines_split_across_chunks():
    chunks = [(1.0, b"1 10 5\n2 2"), (2.0, b"0 6\n3 30 7\n"), (3.0, b"4 40")]
    assert mig.split_lines(chunks) == [(1.0, "1 10 5"), (2.0, "2 20 6"), (2.0, "3 30 7")]
    # the same line from two ports (source, then destination): its first arrival counts
    ticks = mig.parse_ticks([(2.0, "2 20 6"), (1.5, "2 20 6"), (1.0, "1 10 5"), (9.0, "x")])
    assert [(t.seq, t.host_s) for t in ticks] == [(1, 1.0), (2, 1.5)]


def test_work_lost_is_the_rate_times_the_stall():
    # 1000 pages/s, a tick each 10 ms, then a 0.5 s stall, then the same rate again
    ticks, done, t = [], 0, 0.0
    for i in range(300):
        if i == 200:
            t += 0.5
        t += 0.01
        done += 10
        ticks.append(mig.Tick(t, i + 1, done, int(t * 1e9)))
    cost = mig.disruption(ticks, (0.0, 1.5), (1.5, ticks[-1].host_s))
    assert cost.rate_pages_s == pytest.approx(1000.0)
    assert cost.downtime_guest_s == pytest.approx(0.51)
    assert cost.work_lost_s == pytest.approx(0.5, abs=0.02)
    assert cost.baseline_gap_s == pytest.approx(0.01)


def test_clock_after_a_restore():
    assert mig.clock_lag((100.0, 99.3), (110.0, 107.6)) == pytest.approx(1.7)
    assert mig.clock_rate((5.0, 1.0), (6.0, 2.0)) == pytest.approx(1.0)
    assert mig.clock_rate((5.0, 1.0), (5.0, 2.0)) is None


def test_microvm_under_tcg_is_told_its_tsc_and_keeps_it(tmp_path):
    from virtbench.measure.environments.qemu.cmdline.microvm import boot_args
    from virtbench.core.errors import EnvironmentUnusable
    cpuinfo = FIX / "cpuinfo-host.txt"
    khz = parse_tsc_khz(cpuinfo.read_text())
    assert boot_args("microvm", "tcg", cpuinfo) == [f"tsc_early_khz={khz}", "tsc=reliable"]
    assert boot_args("pc", "tcg", cpuinfo) == [] and boot_args("microvm", "kvm", cpuinfo) == []
    flat = tmp_path / "cpuinfo"
    flat.write_text(cpuinfo.read_text().replace("constant_tsc", ""))
    with pytest.raises(EnvironmentUnusable, match="constant_tsc"):
        boot_args("microvm", "tcg", flat)
    # the captured microvm boot kept the TSC (no watchdog switch to jiffies)
    kmsg = load("boot-microvm.json")["kmsg"]
    assert "tsc=reliable" in kmsg and "Marking TSC unstable" not in kmsg


# -- the report ---------------------------------------------------------------------------
def test_boot_phases_stacked_in_the_html_report():
    """On the JSON report of a real run (virtbench run --env qemu:machine=pc --env
    qemu:machine=microvm --env container --env gvisor --bench boot --bench footprint
    --trials 3, this host, TCG)."""
    from virtbench.results import report as reports
    from virtbench.foundations.model import RunReport
    from virtbench.results.report import charts
    from virtbench.machinery.vmlife.phases import ORDER
    run = RunReport.of(load("report-boot-footprint.json"))
    boot = [r for r in run.results if r.benchmark == "boot"]
    fig = charts.phase_figure(boot, ORDER, "boot")
    assert [d["name"] for d in fig["data"]] == ["vmm", "firmware", "kernel", "initramfs",
                                                "init", "runtime", "sandbox", "agent"]
    kernel = next(d for d in fig["data"] if d["name"] == "kernel")
    pc = next(r for r in boot if r.metric == "kernel_s" and "machine=pc" in r.environment)
    assert kernel["x"][0] == pc.trimmed_mean and fig["layout"]["barmode"] == "stack"
    assert charts.phase_figure([r for r in run.results if r.benchmark == "footprint"],
                               ORDER, "x") is None
    html = reports.render(run, "html")
    assert html.count("boot: phases, stacked") == 1


def test_an_ovmf_boot_has_no_firmware_phase_and_its_share_is_to_kernel():
    """A real UEFI boot (Debian's OVMF under TCG): nothing on the debug port, so vmm_s runs
    to the kernel's clock zero and to_kernel_s says the firmware's share."""
    b = load("boot-q35-ovmf.json")
    assert b["firmware"] == []
    phases = guest_phases(b["vmm_start"], b["ready"], b["kmsg"], b["stamps"], b["firmware"])
    assert phases.values() == pytest.approx(b["phases"])
    assert "firmware_s" not in phases.phases
    assert phases.values()["to_kernel_s"] == pytest.approx(phases.phases["vmm_s"])
    assert phases.detail["booted_by"] == "uefi"
    assert guest_phases(**{k: v for k, v in load("boot-pc.json").items()
                           if k in ("vmm_start", "ready", "kmsg", "stamps", "firmware")}
                        ).detail["booted_by"] == "bios"
