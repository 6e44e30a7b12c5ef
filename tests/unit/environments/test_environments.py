import os
import pytest

from virtbench.measure import environments
from virtbench.measure.environments import EnvSpec
from virtbench.core.errors import VirtbenchError


def test_spec_parsing():
    spec = EnvSpec.parse("qemu:disk=ide,nic=e1000,vcpus=2")
    assert spec.kind == "qemu"
    assert spec.options == {"disk": "ide", "nic": "e1000", "vcpus": "2"}
    assert str(spec) == "qemu:disk=ide,nic=e1000,vcpus=2"
    assert EnvSpec.parse("native") == EnvSpec("native", {})


@pytest.mark.parametrize("text, words", [
    ("", "empty environment spec"),
    ("qemu:disk", "is not key=value"),
    ("qemu:disk=ide,disk=ahci", "given twice"),
])
def test_bad_specs(text, words):
    with pytest.raises(VirtbenchError, match=words):
        EnvSpec.parse(text)


def test_unknown_kind_lists_the_valid_ones():
    with pytest.raises(VirtbenchError, match="unknown environment kind 'vmware-fusion'; valid kinds: .*native"):
        environments.create("vmware-fusion")


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(VirtbenchError, match="native: unknown option colour; valid options: name, scratch"):
        environments.create("native:colour=red")


def test_native_runs_commands_and_fingerprints_itself():
    env = environments.create("native")
    assert env.label == "native"
    with env:
        assert env.exec(["echo", "hi"], timeout=5).stdout == "hi\n"
        md = env.metadata()
    assert md["cores"] >= 1 and md["kernel"].startswith("Linux")
    assert md["host_kernel"] == os.uname().release
    assert env.agent is None   # stop() closed it


# -- the life cycle: a template every kind shares ----------------------------------------------
class Agent:
    def __init__(self, log):
        self.log = log

    def ping(self, timeout=None):
        self.log.append("ping")
        return {}

    def close(self):
        self.log.append("- agent")


class Toy(environments.Environment):
    """A kind written as a newcomer writes one: the steps, each registering what it makes."""

    kind = "toy"

    def __init__(self, fail_in=None):
        super().__init__(EnvSpec("toy"))
        self.log, self.fail_in = [], fail_in

    def _made(self, step, thing):
        self.log.append(step)
        self.resources.add(thing, lambda: self.log.append(f"- {thing}"))
        if self.fail_in == step:
            raise VirtbenchError(f"toy: {step} failed")

    def resolve(self):
        self.log.append("resolve")

    def prepare(self):
        self._made("prepare", "work directory")

    def launch(self):
        self.attach(Agent(self.log))
        self._made("launch", "process")

    def ready(self):
        super().ready()
        self._made("ready", "network path")

    def kernel_path(self, name):
        return name


def test_start_runs_the_steps_in_order_and_times_each():
    env = Toy()
    env.start()
    assert env.log == ["resolve", "prepare", "launch", "ping", "ready"]
    assert list(env.step_s) == ["prepare_s", "start_s", "ready_s"]
    assert all(isinstance(s, float) and s >= 0 for s in env.step_s.values())
    assert env.agent is not None
    env.stop()
    assert env.log[5:] == ["- network path", "- process", "- agent", "- work directory"]
    assert env.agent is None and "stop_s" in env.step_s
    env.stop()                                  # twice: nothing is released twice
    assert len(env.log) == 9


@pytest.mark.parametrize("step, released", [
    ("prepare", ["- work directory"]),
    ("launch", ["- process", "- agent", "- work directory"]),
    ("ready", ["- network path", "- process", "- agent", "- work directory"]),
])
def test_a_failed_step_releases_what_the_steps_made_and_raises_as_it_came(step, released):
    env = Toy(fail_in=step)
    with pytest.raises(VirtbenchError, match=f"toy: {step} failed"):
        env.start()
    assert env.log[env.log.index(step) + 1:] == released
    assert env.agent is None and len(env.resources) == 0
    from virtbench.measure.environments import live
    assert env not in live.live          # a stopped environment is not stopped again at exit


def test_a_started_environment_is_stopped_at_exit():
    from virtbench.measure.environments import live
    env = Toy()
    env.start()
    assert env in live.live
    live.stop_all()
    assert env.log[-1] == "- work directory" and env not in live.live


def test_a_kind_without_launch_says_so():
    class Half(environments.Environment):
        kind = "half"

        def kernel_path(self, name):
            return name

    with pytest.raises(NotImplementedError, match="half has no launch"):
        Half(EnvSpec("half")).start()


# -- the shape: one life cycle, no mixins, no cycles ---------------------------------------------
def _environment_classes():
    import virtbench.measure.environments.group  # noqa: F401
    found, todo = [], [environments.Environment]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("virtbench."):
                found.append(sub)
    return found


def test_no_kind_writes_its_own_start_or_stop():
    """The base's template starts and stops every kind (their steps and resources differ)."""
    classes = _environment_classes()
    assert len(classes) >= 8
    own = [c.__qualname__ for c in classes
           if c.start is not environments.Environment.start
           or c.stop is not environments.Environment.stop]
    assert own == []


def test_no_class_of_the_environments_package_has_two_parents():
    """Collaborators, not mixins: each class has one parent."""
    import ast
    from pathlib import Path
    root = Path(environments.__file__).parent
    several = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and len(node.bases) > 1:
                several.append(f"{path.relative_to(root)}:{node.name}")
    assert several == []


def test_no_import_cycle_in_the_environments_package_even_for_annotations():
    """What test_layers does for run-time imports, here with `if TYPE_CHECKING:` ones too
    (qemu/process.py, now qemu/vmm/hygiene.py, once imported its environment for a type annotation)."""
    import ast
    from pathlib import Path
    root = Path(environments.__file__).parent
    pkg = "virtbench.measure.environments"

    def name(path):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join([pkg, *parts])

    modules = {name(p): p for p in root.rglob("*.py")}
    graph = {}
    for mod, path in modules.items():
        here = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = ".".join(here.split(".")[:len(here.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    deps.add(target if target in modules else base)
        graph[mod] = {d for d in deps if d in modules and d != mod}

    def is_package_init(a, b):   # a package's __init__ importing its own modules is no cycle
        return modules[a].name == "__init__.py" and b.startswith(a + ".")

    cycles, state = [], {}

    def visit(mod, stack):
        state[mod] = "open"
        for dep in sorted(graph[mod]):
            if is_package_init(mod, dep) or is_package_init(dep, mod):
                continue
            if state.get(dep) == "open":
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, stack + [dep])
        state[mod] = "done"

    for mod in sorted(graph):
        if mod not in state:
            visit(mod, [mod])
    assert cycles == []
