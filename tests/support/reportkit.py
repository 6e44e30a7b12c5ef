"""Helpers for the report tests: stores filled by hand with plausible samples (no guest, no
kernel needed) and a headless Chromium that opens a report and says what it drew."""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from virtbench.foundations.store import Sample, Store, TrialRecord

# (benchmark label, benchmark name, metric, unit, higher_is_better, native mean)
BATTERY = [
    ("himeno", "himeno", "mflops", "MFLOPS", True, 1960.0),
    ("stream", "stream", "copy_mb_s", "MB/s", True, 9800.0),
    ("stream", "stream", "triad_mb_s", "MB/s", True, 10400.0),
    ("pi", "pi", "seconds", "s", False, 16.5),
]

ENVIRONMENTS = [
    # label, kind, spec, factor (1 = native speed), metadata
    ("native", "native", "native", 1.0,
     {"cpu_model": "Intel(R) Xeon(R) CPU E5506 @ 2.13GHz", "cpus": 2, "kernel": "6.1.0-18-amd64",
      "virtualization": None, "hypervisor_flag": False}),
    ("qemu-kvm/virtio-blk/virtio-net", "qemu", "qemu:accel=kvm", 0.95,
     {"cpu_model": "Intel Xeon Processor (host passthrough)", "cpus": 2,
      "kernel": "6.1.0-18-amd64", "accel": "kvm", "qemu_version": "7.2.0",
      "disk_model": "virtio-blk-pci", "nic_model": "virtio-net-pci", "hypervisor_flag": True}),
    ("qemu-tcg/ide/e1000", "qemu", "qemu:accel=tcg,disk=ide,nic=e1000", 0.6,
     {"cpu_model": "QEMU TCG CPU version 2.5+", "cpus": 2, "kernel": "6.1.0-18-amd64",
      "accel": "tcg", "qemu_version": "7.2.0", "disk_model": "ide-hd (piix4)",
      "nic_model": "e1000", "hypervisor_flag": True}),
]


def fill_store(store: Store, study: dict, envs=ENVIRONMENTS, battery=BATTERY, trials: int = 8,
               seed: int = 7, boot_s: float = 12.5) -> str:
    """A complete run: every environment x benchmark x trial, samples around mean x factor."""
    rng = random.Random(seed)
    run_id = store.create_run(study, seed=seed, quick=True, version="test", host="testhost")
    for label, kind, spec, _, md in envs:
        store.upsert_environment(run_id, label, kind=kind, spec=spec, options={}, metadata=md,
                                 status="up", boot_s=None if kind == "native" else boot_s)
    seq = 0
    for t in range(trials):
        for label, _, _, factor, _ in envs:
            by_case: dict[str, list[Sample]] = {}
            for case, _, metric, unit, hib, mean in battery:
                m = mean * (factor if hib else 1 / factor)
                by_case.setdefault(case, []).append(
                    Sample(metric, rng.gauss(m, m * 0.02), unit, hib))
            for case, samples in by_case.items():
                name = next(b[1] for b in battery if b[0] == case)
                store.record_trial(run_id, TrialRecord(
                    environment=label, benchmark=case, benchmark_name=name,
                    params={}, trial=t, seq=seq, status="ok", samples=samples))
                seq += 1
    store.set_run_status(run_id, "complete")
    return run_id


def study_dict(name="report-test", benches=("himeno", "stream", "pi"), **extra) -> dict:
    d = {"name": name, "environments": [{"spec": e[2]} for e in ENVIRONMENTS],
         "benchmarks": [{"name": b, "params": {}, "label": b} for b in benches],
         "trials": 8, "baseline": "native", "threshold_pct": 10.0, "seed": 7, "quick": True,
         "source": None}
    d.update(extra)
    return d


# -- headless Chromium -------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Injected first in <head> of a copy of the report: records script errors and console.error,
# then, once the page has loaded and plotly has drawn, writes what it sees into the DOM.
PROBE = """<script>
window.__vbErrors = [];
window.addEventListener('error', function (e) { window.__vbErrors.push(String(e.message)); });
window.addEventListener('unhandledrejection', function (e) { window.__vbErrors.push('unhandled: ' + e.reason); });
(function () { var orig = console.error; console.error = function () {
  window.__vbErrors.push(Array.prototype.join.call(arguments, ' ')); return orig.apply(console, arguments); }; })();
window.addEventListener('load', function () { setTimeout(function () {
  var charts = [].map.call(document.querySelectorAll('div.chart'), function (d) {
    return {id: d.id, plotly: d.classList.contains('js-plotly-plot'),
            svg: d.querySelectorAll('svg.main-svg').length,
            bars: d.querySelectorAll('g.trace.bars g.point path').length,
            errorbars: d.querySelectorAll('g.errorbar path').length,
            markers: d.querySelectorAll('g.trace.scatter path.point').length,
            title: (d.querySelector('.gtitle') || {}).textContent || ''}; });
  var pre = document.createElement('pre'); pre.id = 'vb-probe'; pre.style.display = 'none';
  pre.textContent = JSON.stringify({errors: window.__vbErrors, charts: charts});
  document.body.appendChild(pre); }, 300); });
</script>"""


def chromium_args(user_data_dir: str) -> list[str]:
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--hide-scrollbars", f"--user-data-dir={user_data_dir}",
            # nothing may be fetched: every host name fails to resolve
            "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0"]


def open_in_chromium(html_path: Path, screenshot: Path | None = None,
                     size: tuple[int, int] = (1280, 2400)) -> dict:
    """Load a report in headless Chromium; return the probe's findings, the console errors
    Chromium logged, and write a screenshot when asked."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/setup.sh --all installs it)")
    text = html_path.read_text()
    probed = html_path.with_name(html_path.stem + ".probe.html")
    probed.write_text(text.replace("<head>", "<head>" + PROBE, 1))
    with tempfile.TemporaryDirectory(prefix="vb-chromium-") as profile:
        dump = subprocess.run(chromium_args(profile) + ["--virtual-time-budget=15000",
                                                        "--dump-dom", probed.as_uri()],
                              capture_output=True, text=True, timeout=180)
    dom = dump.stdout
    start = dom.find('<pre id="vb-probe"')
    assert start >= 0, f"the probe never ran; chromium said: {dump.stderr[-2000:]}"
    body = dom[dom.index(">", start) + 1:dom.index("</pre>", start)]
    import html as _html
    probe = json.loads(_html.unescape(body))
    console = [line for line in dump.stderr.splitlines()
               if "CONSOLE" in line and ("ERROR" in line or "Uncaught" in line)]
    if screenshot is not None:
        with tempfile.TemporaryDirectory(prefix="vb-chromium-") as profile:
            subprocess.run(chromium_args(profile) + ["--virtual-time-budget=15000",
                                                     f"--window-size={size[0]},{size[1]}",
                                                     f"--screenshot={screenshot}",
                                                     html_path.as_uri()],
                           capture_output=True, text=True, timeout=180)
    return {"probe": probe, "console_errors": console, "stderr": dump.stderr}
