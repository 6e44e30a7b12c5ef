"""The nested kind without booting anything: can this host nest (real /proc/cpuinfo of this
machine, of the outer guest and of a published Intel host), each layer's accelerator, the
label, the capabilities, the options, the program inside's report and its relay (a real
agent over real sockets), and the life cycle with a stand-in outer guest.

The live test (an outer guest under TCG, KVM inside it) is tests/live/nested/test_nested_env.py."""
from __future__ import annotations
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
import pytest
from virtbench.machinery.agent import program as agent_program
from virtbench.measure.environments import create
from virtbench.measure.environments.nested import environment as nested_env
from virtbench.measure.environments.nested import inside, relay, support
from virtbench.measure.environments.nested.options import inner_spec, outer_spec
from virtbench.measure.environments.qemu.cmdline.argv import build_argv
from virtbench.core.errors import AgentSilent, EnvironmentUnusable, VirtbenchError
from virtbench.machinery.agent.transport import SILENT, AgentClient, ExecResult

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "nested"

THIS_HOST = (FIX / "host-pvm-cpuinfo.txt").read_text()

INTEL = (FIX / "intel-vmx-cpuinfo.txt").read_text()

OUTER = (FIX / "outer-epyc-svm-cpuinfo.txt").read_text()


# -- can this host nest? -----------------------------------------------------------------------
def test_this_machine_cannot_nest_in_hardware_and_says_why():
    host = support.host_nesting(THIS_HOST, {"kvm_amd": None, "kvm_intel": None},
                                ("kvm", "kvm_pvm"))
    assert (host.flag, host.module, host.possible) == (None, None, False)
    assert host.reason == ("the CPU shows neither svm nor vmx in /proc/cpuinfo (not exposed to "
                           "this machine; KVM here is kvm_pvm)")


def test_the_outer_guest_with_emulated_amd_v_can_nest():
    host = support.host_nesting(OUTER, {"kvm_amd": "1\n", "kvm_intel": None}, ("kvm", "kvm_amd"))
    assert (host.flag, host.module, host.nested, host.possible) == ("svm", "kvm_amd", "1", True)
    assert host.reason == "svm in the CPU flags and /sys/module/kvm_amd/parameters/nested is 1"


@pytest.mark.parametrize("param, possible, words", [
    ("N\n", False, "/sys/module/kvm_intel/parameters/nested is N; reload it with nested=1 "
                   "(modprobe -r kvm_intel; modprobe kvm_intel nested=1)"),
    ("Y\n", True, "vmx in the CPU flags and /sys/module/kvm_intel/parameters/nested is Y"),
    (None, False, "kvm_intel is not loaded (/sys/module/kvm_intel/parameters/nested is absent); "
                  "modprobe kvm_intel"),
])
def test_an_intel_host_nests_only_with_kvm_intels_nested_parameter_on(param, possible, words):
    host = support.host_nesting(INTEL, {"kvm_amd": None, "kvm_intel": param})
    assert (host.flag, host.module, host.possible) == ("vmx", "kvm_intel", possible)
    assert host.reason == words


def test_the_host_is_read_from_proc_and_sys(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text(OUTER)
    params = tmp_path / "sys/module/kvm_amd/parameters"
    params.mkdir(parents=True)
    (params / "nested").write_text("1\n")
    (tmp_path / "sys/module/kvm").mkdir()
    (tmp_path / "sys/module/tun").mkdir()
    host = support.read_host_nesting(tmp_path)
    assert host == support.HostNesting("svm", "kvm_amd", "1", ("kvm", "kvm_amd"))
    assert support.read_host_nesting(tmp_path / "nothing").reason.startswith("the CPU shows")


# -- each layer's accelerator ------------------------------------------------------------------
PVM = support.host_nesting(THIS_HOST, {}, ("kvm", "kvm_pvm"))

INTEL_OFF = support.host_nesting(INTEL, {"kvm_intel": "N"})

NO_KVM = "kvm probe: QEMU failed: boom"


def test_the_reasons_say_why_each_layer_runs_as_it_does():
    here = support.plan("auto", "auto", "auto", False, NO_KVM, PVM)
    assert here.outer_reason == f"TCG, not KVM: {NO_KVM}"
    assert here.inner_reason == "KVM in the outer guest expected: TCG emulates AMD-V for -cpu EPYC,+svm"
    off = support.plan("auto", "auto", "auto", True, "kvm probe: ok", INTEL_OFF)
    assert off.inner_reason.startswith("TCG in the outer guest: no hardware nesting here: ")
    assert "modprobe kvm_intel nested=1" in off.inner_reason


def test_envs_says_whether_nested_is_possible_here(monkeypatch):
    from virtbench.measure.environments.qemu.vmm import kvm_probe, version
    monkeypatch.setattr(version, "qemu_version", lambda: ("7.2.22", "QEMU emulator 7.2.22"))
    monkeypatch.setattr(kvm_probe, "kvm_probe", lambda **k: kvm_probe.KvmProbe(False, NO_KVM))
    monkeypatch.setattr(support, "read_host_nesting", lambda: PVM)
    u = nested_env.Nested.probe()
    assert u.usable
    assert u.reason == (
        "nested-tcg+kvm: outer guest under TCG (-cpu EPYC,+svm; TCG, not KVM: kvm probe: QEMU "
        "failed: boom), inner guest under KVM (KVM in the outer guest expected: TCG emulates "
        "AMD-V for -cpu EPYC,+svm); hardware nesting on this host: no, the CPU shows neither "
        "svm nor vmx in /proc/cpuinfo (not exposed to this machine; KVM here is kvm_pvm)")
    assert u.details["layers"] == "tcg+kvm" and u.details["hardware_nesting"] is False

    def no_qemu():
        raise VirtbenchError("qemu-system-x86_64 not found; install qemu-system-x86")
    monkeypatch.setattr(version, "qemu_version", no_qemu)
    assert nested_env.Nested.probe().usable is False


# -- options, label, resolve ------------------------------------------------------------------
@pytest.fixture
def here(monkeypatch):
    """This machine as resolve() sees it: QEMU 7.2, KVM probe failing, no nesting."""
    from virtbench.measure.environments.qemu.vmm import kvm_probe, version
    monkeypatch.setattr(version, "qemu_version", lambda: ("7.2.22", "QEMU emulator 7.2.22"))
    monkeypatch.setattr(kvm_probe, "kvm_probe", lambda **k: kvm_probe.KvmProbe(False, NO_KVM))
    monkeypatch.setattr(support, "read_host_nesting", lambda: PVM)


def test_the_label_names_both_accelerators_once_resolved(here):
    env = create("nested")
    assert env.label == "nested-auto+auto"
    env.resolve()
    assert env.label == "nested-tcg+kvm"
    assert env.notes == [f"the outer guest runs under TCG (-cpu EPYC,+svm): TCG, not KVM: {NO_KVM}"]
    many = create("nested:vcpus=2,disk=ide,nic=e1000,outer_mem=3G,scratch=1G,boot_timeout=900")
    many.resolve()
    assert many.label == "nested-tcg+kvm/vcpus=2/disk=ide/nic=e1000/outer_mem=3G"
    tcg = create("nested:accel=tcg")
    tcg.resolve()
    assert tcg.label == "nested-tcg+tcg"
    assert tcg.notes[-1] == "the inner guest runs under TCG: requested (accel=tcg); TCG emulates " \
                            "AMD-V for -cpu EPYC,+svm"


def test_a_refused_combination_is_one_line_naming_the_fix(here):
    env = create("nested:outer_accel=kvm")
    with pytest.raises(EnvironmentUnusable) as exc:
        env.resolve()
    assert str(exc.value) == (f"environment nested:outer_accel=kvm: outer_accel=kvm is not usable "
                              f"here ({NO_KVM}); use outer_accel=tcg or auto")


@pytest.mark.parametrize("spec, words", [
    ("nested:mem=2G", "outer_mem=2G cannot hold an inner guest of mem=2G; give the outer at "
                      "least 2816M"),
    ("nested:aio=native,cache=writeback", "aio=native needs cache=none or cache=directsync"),
    ("nested:disk=floppy", "disk=floppy is not valid"),
    ("nested:colour=red", "unknown option colour"),
])
def test_bad_options_are_one_line(spec, words):
    with pytest.raises(VirtbenchError) as exc:
        create(spec)
    assert words in str(exc.value)


def test_each_layer_is_a_qemu_spec():
    values = create("nested:vcpus=2,mem=512M,disk=nvme,cache=writeback,scratch=1G,"
                    "outer_vcpus=1,outer_cache=unsafe").values
    inner = inner_spec(values, "kvm")
    assert (inner.kind, inner.options) == ("qemu", {
        "accel": "kvm", "vcpus": "2", "mem": "512M", "disk": "nvme", "nic": "virtio-net",
        "cache": "writeback", "aio": "threads", "boot_timeout": "180.0"})
    outer = outer_spec(values, "tcg")
    assert outer.options == {"accel": "tcg", "vcpus": "1", "mem": "2G", "scratch": "1G",
                             "cache": "unsafe", "boot_timeout": "360.0"}
    assert str(create(str(inner)).spec) == str(inner)     # the qemu kind takes both as they are
    assert create(str(outer)).values["scratch"] == "1G"


# -- capabilities ----------------------------------------------------------------------------
def test_capabilities_offer_the_inner_guests_disk_and_refuse_the_network_with_why():
    env = create("nested:disk=nvme")
    caps = env.capabilities()
    assert caps.scratch.how == "disk" and caps.scratch_device and caps.drop_caches
    assert caps.pause.how == "QMP stop/cont of the outer guest (the inner guest stops with it)"
    assert caps.memory_size.how == "mem=1G"
    for name in ("net_path", "remote_peer", "ssh_target", "exit_profile", "pairing", "pair_end"):
        assert not getattr(caps, name), name
    assert "no path to this host through both layers" in caps.net_path.reason
    for call, answer in ((env.net_path, caps.net_path), (env.ssh_target, caps.ssh_target),
                         (lambda: env.profiled_trial(None, {}), caps.exit_profile)):
        with pytest.raises(VirtbenchError) as exc:
            call()
        assert str(exc.value) == answer.reason


# -- the outer guest's port to the relay ------------------------------------------------------
def test_the_outer_guest_gets_a_virtio_serial_port_per_name():
    cfg = dict(qemu="q", name="n", accel="tcg", machine="q35", cpu="EPYC,+svm", vcpus=2,
               mem="2G", linux="k", initrd="i", root_label="vbhost", guest_addr="a", mac="m",
               console_log="c", pidfile="p", qmp_socket="qmp", agent_socket="/w/agent.sock",
               root_image="r", scratch="s", scratch_format="raw", cache="none", aio="threads",
               disk="virtio-blk", nic="virtio-net", tap=None,
               ports={"inner": "/w/port-inner.sock"})
    argv = " ".join(build_argv(cfg))
    assert ("-chardev socket,id=port0,path=/w/port-inner.sock,server=on,wait=off -device "
            "virtserialport,bus=vser0.0,chardev=port0,name=org.virtbench.inner") in argv
    with pytest.raises(VirtbenchError, match="need agent=virtio-serial"):
        build_argv(dict(cfg, agent_transport="serial"))
    assert "port0" not in " ".join(build_argv(dict(cfg, ports={})))


# -- the program inside: its report and its relay ---------------------------------------------
def test_the_report_of_the_program_inside_is_its_last_line():
    ready = {"state": "ready", "pid": 42, "label": "qemu-kvm/virtio-blk/virtio-net"}
    res = ExecResult(0, "noise\n" + json.dumps(ready) + "\n", "", 1.0)
    assert nested_env.parse_report(res) == ready
    bad = ExecResult(1, "", "Traceback ...\nModuleNotFoundError: No module named 'x'\n", 1.0)
    assert nested_env.parse_report(bad) == {
        "state": "failed", "error": "the program inside the outer guest failed: "
                                    "ModuleNotFoundError: No module named 'x'"}
    late = ExecResult(-9, "", "", 600.0, timed_out=True)
    assert nested_env.parse_report(late)["error"].endswith("failed: timed out")


def test_the_program_inside_forks_and_its_parent_prints_the_childs_report(tmp_path, capsys):
    """The real fork and pipe: a child that cannot find its port says so through the parent."""
    log = tmp_path / "inner.log"
    code = inside.main(["--spec", "qemu:accel=kvm", "--scratch", "/dev/null",
                        "--port", "org.virtbench.no-such-port", "--timeout", "60",
                        "--log", str(log)])
    out = capsys.readouterr().out
    assert code == 1
    assert json.loads(out) == {"state": "failed", "error": "the outer guest has no virtio-serial "
                                                          "port org.virtbench.no-such-port"}


def test_waiting_for_the_report_is_bounded():
    r, w = os.pipe()
    try:
        assert inside._wait_report(r, 0.2) is None            # nothing yet: time is up
        os.write(w, b'{"state": "ready", "pid": 7}\n')
        os.close(w)
        w = -1
        assert inside._wait_report(r, 5) == {"state": "ready", "pid": 7}
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    r, w = os.pipe()
    os.close(w)                                               # a child that died silently
    assert inside._wait_report(r, 5)["error"] == "the inner side ended without a report"
    os.close(r)


def test_a_port_is_found_by_its_udev_link_or_by_name_in_sysfs(tmp_path):
    dev, sysfs = tmp_path / "dev", tmp_path / "sys"
    (sysfs / "vport2p1").mkdir(parents=True)
    (sysfs / "vport2p1" / "name").write_text("org.virtbench.agent\n")
    (sysfs / "vport2p2").mkdir()
    (sysfs / "vport2p2" / "name").write_text("org.virtbench.inner\n")
    assert relay.find_port("org.virtbench.inner", dev, sysfs) == Path("/dev/vport2p2")
    dev.mkdir()
    (dev / "org.virtbench.inner").write_text("")
    assert relay.find_port("org.virtbench.inner", dev, sysfs) == dev / "org.virtbench.inner"
    assert relay.find_port("org.virtbench.other", dev, sysfs) is None


def _agent_on(sock: socket.socket) -> threading.Thread:
    """virtbench's own agent serving on one end of a socket pair (as the inner guest's)."""
    def run():
        with sock.makefile("rb") as reader, sock.makefile("wb") as writer:
            agent_program.serve(reader, writer)
        sock.close()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _wait_for(cond, why: str, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, why
        time.sleep(0.01)


def test_the_relay_carries_the_agent_protocol_both_ways_and_survives_a_host_gone():
    inner_side, agent_side = socket.socketpair()
    _agent_on(agent_side)
    hosts, opened = [], []

    def reopen() -> int:
        """A 'port' as virtio-serial gives one: a host on the other end, or EOF for none."""
        port, host = socket.socketpair()
        hosts.append(host)
        fd = os.dup(port.fileno())
        port.close()
        os.set_blocking(fd, False)
        opened.append(fd)
        return fd

    done: list[str] = []
    t = threading.Thread(target=lambda: done.append(relay.relay(inner_side, reopen, idle_s=0.01)),
                         daemon=True)
    t.start()
    _wait_for(lambda: hosts, "the relay did not open the port")
    first = AgentClient(hosts[0].fileno(), hosts[0].fileno(), name="host")
    res = first.exec(["sh", "-c", "echo through; echo two >&2"], timeout=20)
    assert (res.exit, res.stdout, res.stderr) == (0, "through\n", "two\n")
    big = first.exec([sys.executable, "-c", "print('x' * 300000)"], timeout=20)
    assert big.stdout == "x" * 300000 + "\n"           # more than one read's worth each way
    hosts[0].close()                                     # the host goes: EOF on the port
    _wait_for(lambda: len(hosts) >= 2, "the relay did not reopen the port after EOF")
    second = AgentClient(hosts[-1].fileno(), hosts[-1].fileno(), name="host again")
    assert second.ping()["ok"] is True
    second.shutdown()                                    # the agent ends: its socket closes
    t.join(10)
    assert done == ["the inner guest's agent closed its socket"]
    for host in hosts:
        host.close()


# -- the life cycle with a stand-in outer guest -----------------------------------------------
class FakeOuter:
    """What Nested uses of its outer qemu guest; the inner guest's agent is virtbench's own,
    behind a real unix socket (as QEMU's chardev is), started when the program inside is."""

    def __init__(self, spec, log, report, workdir):
        self.spec, self.log, self.report, self.workdir = spec, log, report, workdir
        self.notes, self.paused, self.alive = [], False, False
        self.image_variant = self.cpu = None
        self.ports, self.net_index = [], 0

    class Agent:
        def __init__(self, log):
            self.log = log

        def close(self):
            self.log.append(("outer agent closed",))

    def start(self):
        self.agent = self.Agent(self.log)
        self.log.append(("outer start", str(self.spec), self.image_variant, self.cpu,
                         tuple(self.ports)))
        self.alive = True

    def stop(self):
        self.log.append(("outer stop",))
        self.alive = False

    def is_alive(self):
        return self.alive

    def scratch_device(self):
        return "/dev/disk/by-id/virtio-vbscratch"

    def port_socket(self, name):
        return self.workdir / f"port-{name}.sock"

    def exec(self, argv, timeout, env=None, alive=None):
        if "-m" in argv and self.report.get("state") == "interrupted":
            raise KeyboardInterrupt
        if "-m" in argv:
            self.log.append(("inside", argv[argv.index("--spec") + 1],
                             argv[argv.index("--scratch") + 1], argv[argv.index("--port") + 1]))
            assert alive == nested_env.OUTER_SILENCE_S
            if self.report.get("silent", 0) > 0:        # this outer guest wedges meanwhile
                self.report["silent"] -= 1
                raise AgentSilent(f"agent of virtbench-vb-1: {SILENT} for {alive:.0f} s")
            if self.report.get("state") == "ready":
                server = socket.socket(socket.AF_UNIX)
                server.bind(str(self.port_socket("inner")))
                server.listen(1)
                threading.Thread(target=lambda: _agent_on(server.accept()[0]),
                                 daemon=True).start()
            return ExecResult(0 if self.report["state"] == "ready" else 1,
                              json.dumps(self.report) + "\n", "", 1.0)
        self.log.append(("outer exec", argv[2][:12], argv[-1]))
        return ExecResult(0, "", "", 0.1)

    def metadata(self):
        return {"accel": "tcg", "boot_s": 12.5, "cpu_model": "AMD EPYC Processor",
                "qemu_argv": ["qemu", "-cpu", "EPYC,+svm"], "secret": "not kept"}


@pytest.fixture
def fake_outer(here, monkeypatch, tmp_path):
    log: list = []
    report = {"state": "ready", "pid": 4242, "label": "qemu-kvm/virtio-blk/virtio-net",
              "boot_s": 10.3, "step_s": {"prepare_s": 1.0}, "notes": [],
              "outer_nesting": {"flag": "svm", "module": "kvm_amd", "nested": "1"},
              "metadata": {"accel": "kvm", "accel_reason": "kvm probe: a guest kernel booted "
                           "in 7.6 s", "cpu_model": "AMD EPYC Processor", "boot_s": 10.3,
                           "platform": "kvm", "qemu_argv": ["qemu", "-cpu", "host"]}}
    monkeypatch.setattr(nested_env, "Qemu", lambda spec: FakeOuter(spec, log, report, tmp_path))
    monkeypatch.setattr(nested_env.host_image, "build", lambda **k: log.append(("host image",)))
    return log, report


def test_start_boots_the_outer_then_the_inner_and_stop_undoes_it_in_reverse(fake_outer):
    log, _ = fake_outer
    env = create("nested:disk=nvme")
    with env:
        assert env.exec(["echo", "inner"], timeout=10).stdout == "inner\n"
        assert env.kernel_path("pi") == "/opt/virtbench/kernels/pi"
        meta = env.metadata()
    assert log[:3] == [
        ("host image",),
        ("outer start", "qemu:accel=tcg,vcpus=2,mem=2G,scratch=4G,cache=none,boot_timeout=360.0",
         "host", "EPYC,+svm", ("inner",)),
        ("inside", "qemu:accel=kvm,vcpus=1,mem=1G,disk=nvme,nic=virtio-net,cache=none,"
                   "aio=threads,boot_timeout=180.0",
         "/dev/disk/by-id/virtio-vbscratch", "org.virtbench.inner")]
    assert log[3:] == [("outer exec", 'kill -TERM "', "4242"), ("outer stop",)]
    assert env.agent is None and env.outer is None
    assert set(env.step_s) == {"prepare_s", "start_s", "ready_s", "stop_s"}
    assert meta["accel"] == "tcg+kvm" and meta["platform"] == "kvm"
    assert (meta["outer_accel"], meta["inner_accel"], meta["outer_cpu"], meta["inner_cpu"]) == \
        ("tcg", "kvm", "EPYC,+svm", "host")
    assert meta["layers"] == "native -> outer (tcg, -cpu EPYC,+svm) -> inner (kvm)"
    assert meta["outer_nesting"]["nested"] == "1" and meta["host_nesting"]["possible"] is False
    assert meta["outer"] == {"accel": "tcg", "boot_s": 12.5, "cpu_model": "AMD EPYC Processor",
                             "qemu_argv": ["qemu", "-cpu", "EPYC,+svm"], "cpu": "EPYC,+svm"}
    assert meta["inner"]["cpu"] == "host" and meta["inner_boot_s"] == 10.3
    assert meta["outer_boot_s"] == 12.5 and meta["boot_s"] > 0


def test_an_inner_guest_that_fails_to_start_stops_the_outer_and_says_why(fake_outer):
    log, report = fake_outer
    report.clear()
    report.update({"state": "failed", "error": "environment qemu:accel=kvm: accel=kvm is not "
                                               "usable here (kvm probe: guest did not boot)"})
    env = create("nested")
    with pytest.raises(EnvironmentUnusable) as exc:
        env.start()
    assert str(exc.value) == ("nested-tcg+kvm: the inner guest did not start in the outer guest: "
                              "environment qemu:accel=kvm: accel=kvm is not usable here (kvm "
                              "probe: guest did not boot)")
    assert log[-1] == ("outer stop",) and not any(e[0] == "outer exec" for e in log)


def test_an_outer_guest_that_goes_silent_while_the_inner_boots_is_booted_once_more(fake_outer):
    log, report = fake_outer
    report["silent"] = 1
    env = create("nested")
    env.start()
    try:
        starts = [i for i, e in enumerate(log) if e[0] == "outer start"]
        assert len(starts) == 2
        # the wedged outer guest: its agent let go, its QEMU stopped, then a new one booted
        assert [e[0] for e in log[starts[0]:starts[1]]] == [
            "outer start", "inside", "outer agent closed", "outer stop"]
        assert log[starts[1] + 1][0] == "inside"
        assert env.metadata()["outer_boots"] == 2
        assert any("the outer guest stopped answering while the inner guest booted (boot 1 "
                   f"of the outer guest: agent of virtbench-vb-1: {SILENT} for 120 s); booted "
                   "it again" in note for note in env.notes), env.notes
    finally:
        env.stop()
    assert log[-1] == ("outer stop",)


def test_an_outer_guest_silent_twice_fails_the_start_in_one_line(fake_outer):
    log, report = fake_outer
    report["silent"] = 2
    env = create("nested")
    with pytest.raises(EnvironmentUnusable) as exc:
        env.start()
    assert str(exc.value) == (f"nested-tcg+kvm: the outer guest stopped answering while the inner "
                              f"guest booted (boot 2 of the outer guest: agent of "
                              f"virtbench-vb-1: {SILENT} for 120 s)")
    assert [e[0] for e in log].count("outer start") == 2
    assert [e[0] for e in log].count("outer stop") == 2 and env.outer is None


def test_a_paused_outer_guest_is_not_asked_to_stop_the_inner_one(fake_outer):
    log, _ = fake_outer
    env = create("nested")
    env.start()
    env.outer.paused = True
    env.stop()
    assert log[-1] == ("outer stop",) and not any(e[0] == "outer exec" for e in log)


def test_ctrl_c_while_the_inner_guest_boots_lets_the_busy_outer_agent_go(fake_outer):
    """The outer guest's agent is still running the program inside: its clean power-off
    would wait behind it, so the agent is closed and the outer's stop ends QEMU at once."""
    log, report = fake_outer
    report["state"] = "interrupted"
    env = create("nested")
    with pytest.raises(KeyboardInterrupt):
        env.start()
    assert log[-2:] == [("outer agent closed",), ("outer stop",)]
    assert env.outer is None


def test_the_inside_module_runs_as_a_program():
    """`python -m virtbench.measure.environments.nested.inside --help` (what the outer guest runs)."""
    res = subprocess.run([sys.executable, "-m", "virtbench.measure.environments.nested.inside", "--help"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3])))
    assert res.returncode == 0 and "--scratch" in res.stdout
