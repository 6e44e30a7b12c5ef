"""The nested kind for real: native and the inner guest side by side, then nothing left behind.

`virtbench run --env native --env nested --bench pi --bench stream --trials 2 --quick
--min-section 0` on this host (issue 22's "done when" without its plain TCG guest, which
tests/live/guests runs, with 2 trials instead of 3 and without repeating the short measured
sections, to keep this module short: it checks the kind, not the figures): the outer guest runs under TCG with
emulated AMD-V (this host's /dev/kvm is PVM's), the inner under KVM inside it. Then a
virtbench process starting a nested environment is SIGKILLed once its outer guest answers:
the outer guest's guardian removes its QEMU (and with it whatever runs inside), its namespace
and its work directory.

Runs on this host, not in test_kvm_path.py's outer guest (tests/live/nested/conftest.py `outer`):
it boots its own; that fixture is module-scoped, so test_kvm_path.py's outer guest is gone
before this module starts and the two never run at once.
Run with --run-nested.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from virtbench.machinery.host.net import netns
from virtbench.measure.environments.qemu import qemu_binary
from virtbench.measure.environments.qemu.vmm.hygiene import is_qemu_alive

pytestmark = pytest.mark.nested

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TRIALS = 2
NESTED = "nested-tcg+kvm"


@pytest.fixture(scope="module")
def work(tmp_path_factory, keep_dir):
    if os.geteuid() != 0 or qemu_binary() is None:
        pytest.skip("the nested kind needs root and qemu-system-x86_64")
    root = tmp_path_factory.mktemp("nested-env")
    env = dict(os.environ, PYTHONPATH=str(REPO), VIRTBENCH_STORE=f"sqlite:///{root}/store.db",
               VIRTBENCH_TMP=str(root / "tmp"), COLUMNS="200")
    (root / "tmp").mkdir()
    return root, env


def virtbench(env: dict, *args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def done_when(work, keep_dir):
    root, env = work
    t0 = time.monotonic()
    for attempt in (1, 2):
        # boot_timeout 300: a wedged inner guest is given up on in minutes, not ten
        run = virtbench(env, "run", "--env", "native", "--env", "nested:boot_timeout=300",
                        "--bench", "pi", "--bench", "stream", "--trials", str(TRIALS),
                        "--quick", "--min-section", "0", "--no-progress", timeout=1500)
        # KVM nested in TCG's emulated SVM has wedged an inner guest's boot here now and then
        # (not virtbench: the same run passes on the next try); once more, and said
        if run.returncode == 0 or attempt == 2 or \
                "the inner guest did not start in the outer guest" not in run.stdout + run.stderr:
            break
        print("nested run: the inner guest did not start (a wedged nested boot); once more",
              flush=True)
    seconds = time.monotonic() - t0
    (keep_dir / "nested-env-run.txt").write_text(
        f"exit {run.returncode} in {seconds:.0f} s\n--- stdout\n{run.stdout}\n"
        f"--- stderr\n{run.stderr}")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = virtbench(env, "report", "--format", "json", timeout=300)
    assert report.returncode == 0, report.stderr[-2000:]
    (keep_dir / "nested-env-report.json").write_text(report.stdout)
    print(f"native/qemu/nested run: {seconds:.0f} s", flush=True)
    return {"run": run, "json": json.loads(report.stdout), "seconds": seconds}


def test_the_run_reports_native_outer_and_inner_side_by_side(done_when):
    data = done_when["json"]
    envs = {e["label"]: e for e in data["environments"]}
    assert list(envs) == ["native", NESTED]
    results = {(r["environment"], r["benchmark"]): r for r in data["results"]}
    assert set(results) == {(e, b) for e in envs for b in ("pi", "stream")}
    assert all(r["n"] + len(r["disturbed"]) == TRIALS and r["n"] >= 1
               for r in results.values()), results
    # the inner guest is a guest in a guest: it ran against the same baseline as the others
    for bench in ("pi", "stream"):
        row = results[(NESTED, bench)]
        assert row["vs_baseline"] is not None and row["vs_baseline"]["ratio"] > 0
    text = done_when["run"].stdout
    for label in envs:
        assert label in text
    assert data["run"]["status"] == "complete"


def test_the_metadata_names_both_layers(done_when):
    envs = {e["label"]: e for e in done_when["json"]["environments"]}
    meta = envs[NESTED]["metadata"]
    assert (meta["accel"], meta["outer_accel"], meta["inner_accel"]) == ("tcg+kvm", "tcg", "kvm")
    assert (meta["outer_cpu"], meta["inner_cpu"]) == ("EPYC,+svm", "host")
    assert meta["layers"] == "native -> outer (tcg, -cpu EPYC,+svm) -> inner (kvm)"
    # the inner guest runs under KVM and says so; the outer has AMD-V with kvm_amd nested=1
    assert meta["platform"] == "kvm"
    # the kernel's word for the hypervisor, and QEMU's ACPI OEM id (BOCHS) naming the product
    assert meta["platform_evidence"].startswith("dmesg: Hypervisor detected: KVM")
    assert "ACPI OEM BOCHS" in meta["platform_evidence"]
    assert meta["outer_nesting"]["flag"] == "svm" and meta["outer_nesting"]["nested"] == "1"
    assert meta["host_nesting"]["possible"] is False          # this host: no svm, kvm_pvm
    assert meta["inner"]["accel_reason"].startswith("requested (accel=kvm); kvm probe: a guest "
                                                    "kernel booted in")
    assert "q35,accel=tcg" in meta["outer"]["qemu_argv"]
    assert "q35,accel=kvm" in meta["inner"]["qemu_argv"]
    assert meta["outer"]["qemu_argv"][meta["outer"]["qemu_argv"].index("-append") + 1].count(
        "root=LABEL=vbhost") == 1
    for key in ("boot_s", "outer_boot_s", "inner_boot_s", "inner_start_s"):
        assert meta[key] > 0, key
    assert meta["outer_boot_s"] + meta["inner_boot_s"] < meta["boot_s"]
    assert set(meta["lifecycle"]) == {"prepare_s", "start_s", "ready_s", "stop_s"}
    print(f"boot: outer {meta['outer_boot_s']:.1f} s, inner {meta['inner_boot_s']:.1f} s, "
          f"the program inside {meta['inner_start_s']:.1f} s, whole {meta['boot_s']:.1f} s",
          flush=True)


def _layer_resources(meta: dict) -> tuple[str, str]:
    """The outer guest's namespace and work directory, from its QEMU command line."""
    argv = meta["qemu_argv"]
    name = argv[argv.index("-name") + 1]
    pidfile = argv[argv.index("-pidfile") + 1]
    return name.removeprefix("virtbench-"), str(Path(pidfile).parent)


def assert_nothing_left(namespace: str, workdir: str, qemu_pid: int | None = None,
                        wait: float = 60.0) -> None:
    deadline = time.monotonic() + wait
    while True:
        left = []
        if namespace in netns.list_namespaces():
            left.append(f"namespace {namespace}")
        if Path(workdir).exists():
            left.append(f"work dir {workdir}")
        if qemu_pid and is_qemu_alive(qemu_pid):
            left.append(f"QEMU pid {qemu_pid}")
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not left, "left behind: " + ", ".join(left)


def test_nothing_of_either_guest_is_left_after_the_run(done_when, work):
    root, _ = work
    envs = {e["label"]: e for e in done_when["json"]["environments"]}
    ns, workdir = _layer_resources(envs[NESTED]["metadata"]["outer"])
    assert_nothing_left(ns, workdir, wait=5)
    assert not list((root / "tmp" / "virtbench").glob("vbqemu-*"))
    gone = subprocess.run(["pgrep", "-f", str(root)], capture_output=True, text=True)
    assert gone.stdout == "", gone.stdout                 # no QEMU of this run's work root


# the child's wait for the inner guest: a last resort, past the nested kind's own bounds (an
# outer guest silent for OUTER_SILENCE_S is booted once more, each boot of it bounded, the
# program inside bounded by boot_timeout), so the child fails first and says why
READY_WAIT_S = 1200


def child(env: dict, mode: str, log: Path) -> tuple[subprocess.Popen, "Lines"]:
    """The child, its stderr (virtbench's progress and any traceback) in `log`."""
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, str(HERE / "_nested_child.py"), "nested", mode],
                                stdout=subprocess.PIPE, stderr=err, env=env, cwd=REPO)
    return proc, Lines(proc, log)


def outers(first: dict, ready: dict) -> list[dict]:
    """The outer guests the child booted: the one it announced first, and the one the inner
    guest runs in when the first stopped answering and was booted again."""
    return [first] if ready["outer"]["qemu_pid"] == first["qemu_pid"] else [first, ready["outer"]]


def end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()               # virtbench's own clean-up, then its guardian's
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.mark.slow
def test_stop_removes_the_inner_guest_inside_then_the_outer_guest(work, done_when, keep_dir):
    """After the run (one outer guest at a time): stop() first ends the program inside, which
    powers the inner guest off and removes its QEMU, work directory and namespace in the
    outer guest; then the outer guest goes. A third nested boot, so also behind --run-slow
    (the run's own stop is checked by test_nothing_of_either_guest_is_left_after_the_run)."""
    _, env = work
    proc, lines = child(env, "stop", keep_dir / "nested-stop-child.log")
    try:
        first = lines.stage("outer", 600)
        ready = lines.stage("ready", READY_WAIT_S)
        outer = ready["outer"]
        assert ready["label"] == NESTED and ready["inner_kvm"] == "1"
        assert ready["inner"] == {"qemu": "1", "inside": "1", "workdirs": "1", "netns": "1"}
        inner = lines.stage("inner-stopped", 120)["inner"]
        assert inner == {"qemu": "0", "inside": "0", "workdirs": "0", "netns": "0"}
        lines.stage("stopped", 120)
        assert proc.wait(timeout=30) == 0
        for layer in outers(first, ready):
            assert_nothing_left(layer["netns"], layer["workdir"], layer["qemu_pid"], wait=5)
    finally:
        end(proc)


def test_sigkill_of_virtbench_removes_the_outer_guest(work, done_when, keep_dir):
    """A process starting a nested environment is SIGKILLed once its outer guest answers (the
    program inside it is starting the inner guest): the outer's guardian kills its QEMU, and
    with it everything inside, its namespace and its work directory. (Killing later, once the
    inner guest answers, leaves the same to remove: the inner guest lives in the outer's QEMU.)"""
    _, env = work
    proc, lines = child(env, "kill", keep_dir / "nested-kill-child.log")
    try:
        first = lines.stage("outer", 600)
        assert is_qemu_alive(first["qemu_pid"])
        proc.kill()
        proc.wait(timeout=10)
        assert_nothing_left(first["netns"], first["workdir"], first["qemu_pid"])
    finally:
        end(proc)


class Lines:
    """A child's stdout line by line, each wait bounded (select on the pipe itself)."""

    def __init__(self, proc: subprocess.Popen, log: Path):
        self.proc, self.buf, self.log = proc, b"", log

    def _tail(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return f"; the child's stderr ({self.log}) ends: {text[-2000:]}"

    def stage(self, stage: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if line.startswith(b"{"):
                    msg = json.loads(line)
                    if msg["stage"] == stage:
                        return msg
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, left))
            if not ready:
                raise AssertionError(f"no {stage} within {timeout:.0f} s" + self._tail())
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"the child ended early (exit {self.proc.wait(10)})"
                                     + self._tail())
            self.buf += chunk
