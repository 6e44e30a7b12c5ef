"""The runner skips, before anything runs, every (environment, benchmark) case the environment
says it cannot run: one line on the console, one stored warning, shown by --dry-run; and no
benchmark of the registry uses an environment hook it has not declared a need for."""
import io
import pytest
from rich.console import Console
from runkit import one_study
from virtbench.measure import benchmarks
from virtbench.interface.cli import commands as cli
from virtbench.core.capabilities import Capabilities
from virtbench.measure.environments.base import EnvSpec, Environment
from virtbench.machinery.host.executor import HostExecutor
from virtbench.execution.run.runner import Prepared, Runner, skipped_cases
from virtbench.foundations.store import Store
from virtbench.machinery.agent.transport import ExecResult


def test_ioport_primitives_are_skipped_on_native_with_the_reason_and_the_rest_planned(capsys):
    code = cli.main(["run", "--env", "native", "--bench", "primitives:only=ioport",
                     "--bench", "primitives:only=syscall", "--trials", "1", "--quick",
                     "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert ("  skipped primitives[only=ioport] on native: native: the ioport primitives would "
            "write a port and read a register of the host's own hardware; they run in guests "
            "only") in out.splitlines()
    assert "- 1 skipped case(s)" in out and "primitives[only=syscall]" in out


HOOKS = ("scratch_dir", "scratch_device", "net_path", "ssh_target", "pause", "resume",
         "drop_caches", "memory_bytes", "pair_path")


class Refusing(HostExecutor):
    """A host side that fails the test when a benchmark runs anything on it undeclared."""

    def __init__(self, env):
        self.env = env

    def run(self, argv, timeout, input=None):
        self.env.called.append("host.run")
        raise AssertionError(f"host command {argv[0]} called on an environment that cannot")

    def popen(self, argv, **kwargs):
        self.env.called.append("host.popen")
        raise AssertionError(f"host server {argv[0]} called on an environment that cannot")


class Incapable(Environment):
    """Can nothing, says so, and fails the test if a capability hook (or its host side) is
    called anyway.
    Commands run "fine" but print nothing, so trials fail as unparsable, never as hooks."""

    kind = "incapable"

    def __init__(self):
        super().__init__(EnvSpec("incapable"))
        self.called: list[str] = []
        for hook in HOOKS:
            setattr(self, hook, self._refuse(hook))
        self.host = Refusing(self)

    def _refuse(self, hook):
        def refuse(*args, **kwargs):
            self.called.append(hook)
            raise AssertionError(f"{hook}() called on an environment that cannot")
        return refuse

    def capabilities(self) -> Capabilities:
        return Capabilities.none("incapable")

    def start(self):
        pass

    def stop(self):
        pass

    def exec(self, argv, timeout, env=None):
        return ExecResult(exit=0, stdout="", stderr="", wall_s=0.0)

    def kernel_path(self, name):
        return f"/nonexistent/{name}"


def _run(bench_names, needs=None):
    env = Incapable()
    cases = {}
    for name in bench_names:
        bench = benchmarks.get(name)
        if needs is not None:
            bench = type(bench)()
            bench.requirements = lambda params: needs
        cases[name] = (bench, bench.params(quick=True))
    prepared = Prepared(one_study(trials=1), {env.label: env}, cases, None,
                        skipped_cases=skipped_cases({env.label: env}, cases))
    store = Store("sqlite://")
    Runner(store, console=Console(file=io.StringIO()), show_progress=False).start(prepared)
    return env, prepared


def test_every_benchmark_that_uses_a_hook_declares_it():
    env, prepared = _run(sorted(benchmarks.REGISTRY))
    assert env.called == []
    skipped = {case for _, case, _ in prepared.skipped_cases}
    declared = {n for n, b in benchmarks.REGISTRY.items() if b.requirements(b.params(quick=True))}
    assert skipped == declared
    assert {"tcp", "ping-hops", "scp", "dd-write", "hdparm-read", "blast"} <= skipped


@pytest.mark.parametrize("name", ["tcp", "ping-hops", "scp", "dd-write", "hdparm-read",
                                  "blast"])
def test_the_check_would_catch_an_undeclared_hook(name):
    """With its needs taken away, the benchmark reaches a hook: the test above can fail."""
    with pytest.raises(AssertionError, match=r"called on an environment that cannot"):
        _run([name], needs=())


def test_plan_time_skips_need_no_start(monkeypatch):
    """skipped_cases asks capabilities() only: nothing is started or connected."""
    env = Incapable()
    monkeypatch.setattr(env, "start", lambda: (_ for _ in ()).throw(AssertionError("start")))
    bench = benchmarks.get("tcp")
    out = skipped_cases({"x": env}, {"tcp": (bench, bench.params())})
    assert out == [("x", "tcp", "incapable has no network path for network benchmarks")]
