"""The host image's recipe, cache and files (fast; the image itself is booted by tests/nested)."""
import shutil
from pathlib import Path

from virtbench.interface.cli import commands as cli
from virtbench.machinery.image import host_image, guest_image as image

REPO = Path(__file__).resolve().parents[3]


def test_the_guest_image_keeps_its_recipe_and_the_host_image_has_its_own():
    guest = image.base_recipe()
    host = host_image.base_recipe()
    assert set(host["packages"]) == set(guest["packages"]) | set(host_image.HOST_PACKAGES)
    assert {"qemu-system-x86", "qemu-utils", "linux-perf"} <= set(host["packages"])
    assert image._hash(host) != image._hash(guest)
    # the guest image's recipe names nothing of the host variant
    assert "variant_name" not in guest and image.recipe()["label"] == "vbroot"
    r = host_image.recipe()
    assert r["guest_image"] == image.recipe_hash() and r["label"] == "vbhost"
    assert host_image.recipe_hash() != image.recipe_hash()
    assert host_image.images_dir() != image.images_dir()


def copy_tree(dst: Path) -> Path:
    for p in host_image.source_files(REPO):
        t = dst / p.relative_to(REPO)
        t.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, t)
    return dst


def test_source_hash_follows_the_code_and_ignores_caches(tmp_path):
    tree = copy_tree(tmp_path / "src")
    h = host_image.source_hash(tree)
    assert h == host_image.source_hash(REPO)
    (tree / "virtbench/__pycache__").mkdir(exist_ok=True)
    (tree / "virtbench/__pycache__/x.cpython-311.pyc").write_bytes(b"\0")
    assert host_image.source_hash(tree) == h
    agent = tree / "virtbench/machinery/agent/program.py"
    agent.write_text(agent.read_text() + "\n# changed\n")
    assert host_image.source_hash(tree) != h
    files = {str(p.relative_to(tree)) for p in host_image.source_files(tree)}
    assert {"pyproject.toml", "virtbench/machinery/image/files/rc", "virtbench/machinery/kernels/src/pi.c"} <= files


def test_wheels_are_fetched_for_the_guests_python_not_this_hosts(tmp_path):
    argv = host_image.download_argv(tmp_path / "virtbench-0.1.0-py3-none-any.whl", tmp_path)
    assert argv[1:4] == ["-m", "pip", "download"]
    assert argv[argv.index("--python-version") + 1] == "3.11"
    assert "--only-binary=:all:" in argv
    platforms = [argv[i + 1] for i, a in enumerate(argv) if a == "--platform"]
    assert "manylinux_2_36_x86_64" in platforms and "manylinux2014_x86_64" in platforms
    assert "manylinux_2_37_x86_64" not in platforms           # newer than bookworm's glibc
    assert host_image.wheel_argv(REPO, tmp_path)[3:5] == ["wheel", "--quiet"]


def test_host_files_add_tracing_kvm_and_the_own_label(tmp_path):
    tree = tmp_path / "tree"
    (tree / "etc").mkdir(parents=True)
    (tree / "opt/virtbench").mkdir(parents=True)
    (tree / "etc/inittab").write_text((Path(image.FILES) / "inittab").read_text())
    host_image._install_host_files(tree)
    lines = (tree / "etc/inittab").read_text().splitlines()
    sysinit = [ln for ln in lines if ln.startswith("::sysinit:")]
    assert sysinit == ["::sysinit:/opt/virtbench/rc", "::sysinit:/opt/virtbench/host-rc"]
    rc = (tree / "opt/virtbench/host-rc").read_text()
    assert "mount -t tracefs tracefs /sys/kernel/tracing" in rc and "modprobe kvm_amd" in rc
    assert (tree / "etc/fstab").read_text() == "LABEL=vbhost / ext4 rw 0 0\n"
    wrapper = (tree / "usr/local/bin/virtbench").read_text()
    assert "/opt/virtbench/venv/bin/virtbench" in wrapper and "/var/cache/virtbench" in wrapper


def test_prune_keeps_the_current_host_image_only(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path))
    d = host_image.images_dir()
    current = [host_image.recipe_hash(), f"base-{image._hash(host_image.base_recipe())}"]
    for name in current + ["0123456789abcdef", "base-0123456789abcdef"]:
        (d / name).mkdir(parents=True)
    removed = host_image.prune()
    assert sorted(p.name for p in removed) == ["0123456789abcdef", "base-0123456789abcdef"]
    assert sorted(p.name for p in d.iterdir()) == sorted(current)


def test_image_build_picks_the_variant(monkeypatch, capsys):
    built = []

    def fake(name):
        def build(force=False, progress=None, **kw):
            built.append((name, force, *kw.values()))
            return image.ImageInfo(path=Path(f"/c/{name}/root.raw"), linux=Path("/c/k"),
                                   initrd=Path("/c/i"), size_bytes=2**20, recipe_hash=name,
                                   build_s=1.0, reused=True)
        return build

    monkeypatch.setattr(image, "build", fake("guest"))
    monkeypatch.setattr(host_image, "build", fake("host"))
    assert cli.main(["image", "build"]) == 0
    assert cli.main(["image", "build", "--variant", "host", "--force"]) == 0
    assert built == [("guest", False, None), ("host", True)]
    assert "recipe host" in capsys.readouterr().out
    assert cli.main(["image", "build", "--variant", "nested"]) == 2     # bad input, nothing built
    assert "invalid choice: 'nested'" in capsys.readouterr().err and len(built) == 2


def test_both_images_bootstrap_their_own_recipe_once_and_trim_it(tmp_path, monkeypatch):
    calls = []

    def fake_run(argv, what="", **kw):               # mmdebstrap ... SUITE ROOT MIRROR
        calls.append(argv)
        root = Path(argv[-2])
        for rel in ("usr/share/doc/x/copyright", "boot/initrd.img-6.1", "etc/hostname"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("x")

    monkeypatch.setattr(image, "_run", fake_run)
    monkeypatch.setattr(image, "images_dir", lambda: tmp_path / "images")
    monkeypatch.setattr(host_image, "images_dir", lambda: tmp_path / "host-images")
    for module in (image, host_image):
        root = module.build_base()
        assert module.build_base() == root                          # cached: bootstrapped once
        include = next(a for a in calls[-1] if a.startswith("--include="))
        assert sorted(include.split("=", 1)[1].split(",")) == module.base_recipe()["packages"]
        assert root.parent.name == f"base-{image._hash(module.base_recipe())}"
        assert (root / "etc/hostname").exists() and not list((root / "boot").iterdir())
        assert (root / "usr/share/doc").is_dir() and not any((root / "usr/share/doc").iterdir())
    assert len(calls) == 2 and {c[0] for c in calls} == {"mmdebstrap"}
    assert "qemu-system-x86" in calls[1][2] and "qemu-system-x86" not in calls[0][2]
    assert not list((tmp_path / "images").glob("*.tmp-*"))
