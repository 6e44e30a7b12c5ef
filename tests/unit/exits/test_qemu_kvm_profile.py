"""A qemu guest's profiled trial under KVM (ExitProfiler._kvm), without KVM: perf replays real
outputs (tests/fixtures/kvm) through a fake executor, QMP answers the real query-stats
replies captured on this host, the agent hands back a real guest /proc/kallsyms. What is
checked is the plumbing: the QEMU pid and vCPU threads perf records, query-stats taken
before and after the trial, the trial run in the measured guest itself, the profile."""
import json
from pathlib import Path
from types import SimpleNamespace

from kvmfix import fixture
from test_profile_kvm_profiler import FakeExecutor, outputs

from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu import Qemu
from virtbench.measure.environments.qemu.vmm.process import QemuProcess
from virtbench.machinery.exits.kvm_stat import parse_perf_kvm_stat_report
from virtbench.machinery.agent.transport import ExecResult

KALLSYMS = (Path(__file__).resolve().parents[2] / "fixtures" / "profile" /
            "kallsyms-6.1-ide.txt").read_text()


class Proc:
    pid = 4242
    returncode = None

    def poll(self):
        return None


class Qmp:
    def __init__(self, events=None):
        self.replies = [json.loads(fixture(f"query_stats/pvm_host_vcpu_{w}.txt"))["return"]
                        for w in ("before", "after")]
        self.asked = []
        self.events = events if events is not None else []

    def command(self, name, **args):
        self.asked.append((name, args))
        self.events.append(name)
        return self.replies[len(self.asked) - 1]

    def close(self):
        pass


class Agent:
    def __init__(self):
        self.ran = []

    def exec(self, argv, timeout=None, env=None, alive=None):
        self.ran.append(argv)
        out = KALLSYMS if argv == ["cat", "/proc/kallsyms"] else "1.5\n"
        return ExecResult(exit=0, stdout=out, stderr="", wall_s=0.01)

    def close(self):
        pass


class Seconds(Benchmark):
    name = "seconds"
    family = "test"
    metrics = (Metric("s", "s", False),)

    def argv(self, params, env):
        return ["work"]

    def parse(self, stdout):
        return {"s": float(stdout)}


def test_a_kvm_guest_is_profiled_in_place(tmp_path, monkeypatch):
    report = fixture("perf_kvm_stat/intel_sysbench_vmexit.txt")
    ex = FakeExecutor(outputs(report=report, script=fixture("kvm_exit/qemu_pckbd_trace_pipe.txt")))
    monkeypatch.setattr("virtbench.machinery.exits.kvm.HostCommands", lambda host: ex)
    env = Qemu(EnvSpec.parse("qemu:accel=kvm"))
    env.accel, env.agent = "kvm", Agent()
    env.work = SimpleNamespace(path=tmp_path)        # the collaborators a boot leaves
    env.vmm = QemuProcess(env.label, tmp_path)
    env.vmm.proc, env.vmm.qmp, env.vmm._vcpu_tids = Proc(), Qmp(ex.events), [101, 102]
    assert env.capabilities().exit_profile.how.startswith("kvm")
    outcome, profile = env.profiled_trial(Seconds(), {})
    assert outcome.ok and outcome.values == {"s": 1.5}
    assert ["work"] in env.agent.ran                    # the measured guest ran the trial
    assert [name for name, _ in env.vmm.qmp.asked] == ["query-stats", "query-stats"]
    # KVM's counters are read once perf records and before it stops: the same window
    assert ex.events == ["popen kvm", "popen record", "enable kvm", "enable record", "query-stats",
                         "query-stats", "terminate kvm", "terminate record"]
    assert env.vmm.qmp.asked[0][1]["providers"][0]["provider"] == "kvm"
    recorders = [" ".join(argv) for argv in ex.started]
    assert any("stat record" in r and "101,102" in r for r in recorders), recorders
    assert profile.source == "kvm"
    assert profile.by_reason == parse_perf_kvm_stat_report(report) != []
    assert [f.address for f in profile.by_function][:2] == ["0x22da", "0x110c8c"]
    assert any(n.startswith("KVM counters over the trial (query-stats): exits=")
               for n in profile.notes)
