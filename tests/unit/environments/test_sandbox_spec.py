"""The container and gvisor kinds without starting anything: specs, labels, bad input,
capabilities, the podman command line, and the parsers on output captured on this host
(tests/fixtures/sandbox/, each file's header says where from)."""
from pathlib import Path
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.measure.environments import create
from virtbench.measure.environments.container import cleanup, podman
from virtbench.measure.environments.container.environment import Container
from virtbench.measure.environments.gvisor import Gvisor
from virtbench.measure.environments.gvisor import platform as platforms
from virtbench.core.errors import VirtbenchError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "sandbox"


def captured(name: str) -> str:
    """A fixture without its provenance header."""
    return "".join(line for line in (FIX / name).read_text().splitlines(keepends=True)
                   if not line.startswith("# "))


def test_labels_name_engine_runtime_and_every_non_default():
    env = create("container")
    env.runtime = "runc"                      # as resolve() settles it
    assert env.label == "container-podman/runc"
    env = create("container:runtime=crun,cpus=1.5,mem=512m,network=bridge,storage=volume")
    assert env.label == "container-podman/crun/cpus=1.5/mem=512M/network=bridge/storage=volume"
    gv = create("gvisor:storage=bind")
    gv.network = "host"
    assert gv.label == "gvisor-ptrace/host/storage=bind"
    assert create("gvisor:platform=kvm,network=none").label == "gvisor-kvm/none"


@pytest.mark.parametrize("spec, words", [
    ("container:engine=docker", "engine=docker is not valid; use one of: podman"),
    ("container:runtime=kata", "runtime=kata is not valid; use one of: auto, crun, runc"),
    ("container:cpus=0", "cpus=0 is not valid"),
    ("container:mem=lots", "mem=lots is not valid (write a size such as 512M or 2G)"),
    ("container:network=macvlan", "use one of: ns, bridge"),
    ("container:storage=tmpfs", "use one of: overlay, bind, volume"),
    ("container:platform=ptrace", "unknown option platform"),
    ("gvisor:platform=hvf", "use one of: ptrace, systrap, kvm"),
    ("gvisor:cpus=1", "unknown option cpus; valid options: name, network, platform, storage"),
])
def test_an_option_the_engine_lacks_is_one_line(spec, words):
    with pytest.raises(VirtbenchError, match=words.replace("(", r"\(").replace(")", r"\)")):
        create(spec)


def test_capabilities_say_what_a_container_cannot_do_with_reasons():
    caps = create("container").capabilities()
    assert caps.scratch.how == "directory" and caps.net_path and caps.remote_peer
    assert caps.drop_caches and caps.memory_size and caps.direct_io
    for name in ("scratch_device", "ssh_target", "pause", "pair_end", "exit_profile", "pairing"):
        answer = getattr(caps, name)
        assert not answer and answer.reason.startswith("environment container"), name
    assert "exit profiles need a guest" in caps.exit_profile.reason
    bridge = create("container:network=bridge").capabilities()
    assert bridge.net_path and not bridge.remote_peer and "network=ns" in bridge.remote_peer.reason
    gv = create("gvisor:network=none").capabilities()
    assert not gv.net_path and "network=sandbox or host" in gv.net_path.reason
    assert not gv.direct_io and "ignores O_DIRECT" in gv.direct_io.reason


def test_the_podman_command_line():
    cfg = podman.RunConfig(name="vbctr-x", rootfs="/tree", runtime="/usr/bin/runsc",
                           runtime_flags=["platform=ptrace", "network=host"],
                           network="ns:/run/netns/vb-1-e", cpus=1.5, mem="512M",
                           agent="/src/agent.py", kernels="/k", scratch_mount="vol",
                           owner="12 34", nofile=1024)
    argv = podman.run_argv(cfg)
    text = " ".join(argv)
    assert argv[:3] == ["run", "--rm", "-i"]
    assert ("--runtime /usr/bin/runsc --runtime-flag platform=ptrace "
            "--runtime-flag network=host") in text
    assert "--label org.virtbench.owner=12 34" in text
    assert "--ulimit nofile=1024:1024 --ulimit nproc=4096:4096" in text
    assert "--network ns:/run/netns/vb-1-e --cpus 1.5 --memory 512m --memory-swap 512m" in text
    assert "-v /src/agent.py:/opt/virtbench/agent.py:ro -v /k:/opt/virtbench/kernels:ro" in text
    assert "-v vol:/mnt/vbscratch" in text
    assert argv[-5:] == ["--rootfs", "/tree:O", "python3", "/opt/virtbench/agent.py", "--stdio"]
    assert podman.global_flags(systemd=False) == ["--cgroup-manager=cgroupfs",
                                                  "--events-backend=file"]
    assert podman.global_flags(systemd=True) == []


def test_versions_parsed_from_real_output():
    lines = captured("versions.txt").splitlines()
    assert podman.parse_version(lines[0]) == ("podman", "4.3.1")
    assert podman.parse_version(lines[1]) == ("crun", "1.8.1")
    assert podman.parse_version(lines[2]) == ("runc", "1.1.5+ds1")
    assert podman.parse_version("\n".join(lines[3:])) == ("runsc", "0.0~20221219.0")
    assert podman.parse_version("no version here") is None


@pytest.mark.parametrize("name, line", [
    ("crun-hybrid.stderr",
     "crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2"),
    ("runc-rlimit.stderr", "error setting rlimit type 7: operation not permitted"),
    ("runsc-systrap.stderr", "/usr/bin/runsc: unknown platform: systrap"),
    ("runsc-network-sandbox.stderr",
     "cannot run with network enabled in root network namespace"),
])
def test_why_a_container_did_not_start_is_the_runtimes_own_line(name, line):
    why = podman.runtime_error(captured(name))
    assert line in why and not why.startswith("Error:") and "\n" not in why
    assert "exit status 128" not in why          # the cause, not runsc's wrapper line


def test_platform_probe_reasons_in_one_line_each():
    systrap = podman.runtime_error(captured("runsc-systrap.stderr"))
    line = platforms.explain("systrap", False, systrap)
    assert line.startswith("systrap: this runsc build predates the systrap platform")
    net = podman.runtime_error(captured("runsc-network-sandbox.stderr"))
    line = platforms.explain("network=sandbox", False, net)
    assert "rmem_default" in line and line.endswith("use network=host")
    hung = "a probe container did not start in 20 s (the runtime hung; killed)"
    line = platforms.explain("kvm", False, hung, kvm_node=True, kvm_modules="kvm, kvm_pvm")
    assert "hangs on it" in line and "(kvm, kvm_pvm)" in line and "platform=ptrace" in line
    assert "does not exist" in platforms.explain("kvm", False, hung, kvm_node=False)
    assert platforms.explain("ptrace", True, "a probe container ran") == \
        "ptrace: works (a probe sandbox ran)"
    # the kvm boot log stops right after the machine is set up: the hang the probe times out on
    assert "Platform: kvm" in captured("runsc-kvm-boot.log")


def test_owners_read_from_podman_ps():
    pairs = cleanup.parse_ps(captured("podman-ps.txt"))
    assert pairs == [("vbctr-cap1", "12345 678"), ("vbctr-cap2", "1 2")]


def test_no_podman_or_runsc_says_so_with_the_install_command(monkeypatch, capsys, tmp_path):
    import shutil
    # a cache of its own: `envs` answers from a probe cache another run left fresh
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    real = shutil.which
    def which(name, *a, **k):
        return None if name in ("podman", "runsc") else real(name, *a, **k)
    monkeypatch.setattr(shutil, "which", which)
    u = Container.probe()
    assert not u.usable and "podman not found" in u.reason and "apt-get install podman" in u.reason
    u = Gvisor.probe()
    assert not u.usable and "runsc not found" in u.reason and "apt-get install runsc" in u.reason
    with pytest.raises(VirtbenchError, match="podman not found; install it with"):
        create("container:runtime=runc").resolve()
    assert cli.main(["envs"]) == 0
    out = capsys.readouterr().out
    assert "podman not found" in out and "runsc not found" in out
