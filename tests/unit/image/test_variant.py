"""Image variants (image/variant.py): the base tree plus a study's Debian packages, cached by
the package set; the guest image's recipe with and without them; the one line a build says.
No root, no apt: the builder's commands are faked (the live test builds a real one)."""
import json
import shutil
import subprocess

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.image import cache, guest_image as image, variant

BASE = image.base_recipe()


def test_the_same_set_in_any_order_is_the_same_variant():
    one = variant.key(BASE, ["redis-tools", "bzip2", "redis-server"])
    assert one == variant.key(BASE, ("redis-server", "bzip2", "redis-tools", "bzip2"))
    assert variant.recipe(BASE, ["b2", "a1"])["packages"] == ["a1", "b2"]


def test_another_set_or_another_base_is_another_variant():
    assert variant.key(BASE, ["bzip2"]) != variant.key(BASE, ["bzip2", "redis-tools"])
    assert variant.key(BASE, ["bzip2"]) != variant.key(BASE, ["redis-tools"])
    other = image.base_recipe("bookworm-backports")
    assert variant.key(BASE, ["bzip2"]) != variant.key(other, ["bzip2"])
    assert variant.recipe(other, ["bzip2"])["base"] == cache.digest(other)


def test_packages_the_base_has_add_nothing():
    assert variant.extra(BASE, ["ncbi-blast+", "bzip2", "fio"]) == ("bzip2",)
    assert variant.key(BASE, ["bzip2", "ncbi-blast+"]) == variant.key(BASE, ["bzip2"])
    backports = image.base_recipe("bookworm-backports")     # linux-image-amd64/SUITE there
    assert variant.extra(backports, ["linux-image-amd64", "bzip2"]) == ("bzip2",)
    assert image.recipe(packages=["ncbi-blast+"]) == image.recipe()


def test_without_packages_the_guest_image_recipe_is_the_base_one():
    assert image.recipe(packages=()) == image.recipe()
    assert image.recipe()["base"] == image._hash(image.base_recipe())
    assert image.recipe_hash(packages=[]) == image.recipe_hash()


def test_with_packages_the_image_is_keyed_by_the_variant():
    with_bzip2 = image.recipe(packages=["bzip2"])
    assert with_bzip2["base"] == variant.key(BASE, ["bzip2"]) != image.recipe()["base"]
    assert image.recipe_hash(packages=["bzip2"]) != image.recipe_hash()
    assert (image.recipe_hash(packages=["a1", "b2"])
            == image.recipe_hash(packages=["b2", "a1"]))


@pytest.mark.parametrize("name", ["Redis", "-o", "a", "bzip2 ; rm", "x/y", "", 3])
def test_a_name_that_is_no_debian_package_is_one_line(name):
    with pytest.raises(VirtbenchError) as exc:
        variant.package_set(["bzip2", name])
    assert "is not a Debian package name" in str(exc.value)
    assert "\n" not in str(exc.value)


def test_the_line_names_the_count_and_the_packages():
    assert variant.announcement(("bzip2",)) == "building a variant with 1 more package (bzip2) ..."
    assert variant.announcement(("postgresql-15", "redis-server", "redis-tools")) == (
        "building a variant with 3 more packages (postgresql-15, redis-server, redis-tools) ...")


def test_open_line_writes_a_build_as_one_line():
    out = []
    say = variant.open_line("  guest image: ", out.append)
    say("building a variant with 1 more package (bzip2) ...")
    say("done in 35 s")
    say("copying the base tree ...")      # a later line opens again
    say("done in 1 s")
    say("image ready")
    assert "".join(out).splitlines() == [
        "  guest image: building a variant with 1 more package (bzip2) ... done in 35 s",
        "  guest image: copying the base tree ... done in 1 s",
        "  guest image: image ready"]


@pytest.fixture
def base_tree(tmp_path):
    root = tmp_path / "base-x" / "rootfs"
    for rel in ("etc", "usr/sbin", "usr/share/doc/apt", "boot", "proc", "sys", "dev"):
        (root / rel).mkdir(parents=True)
    (root / "etc/resolv.conf").write_text("nameserver 192.0.2.1\n")
    (root / "usr/share/doc/apt/copyright").write_text("x")
    return root


def fake_builder(monkeypatch, fail_on=None):
    """cache.run as the variant calls it: cp copies, unshare 'installs' (a file per package),
    dpkg-query lists them; `fail_on`: the program that fails, as apt-get would."""
    calls = []

    def run(argv, say=None, what="", **kw):
        calls.append(argv)
        if argv[0] == fail_on:
            raise VirtbenchError(f"{what} failed: E: Unable to locate package nosuch")
        if argv[0] == "cp":
            shutil.copytree(argv[-2], argv[-1], symlinks=True)
        elif argv[0] == "unshare":
            root = argv[9]                     # unshare ... -- sh -c SCRIPT sh ROOT PKG...
            assert (variant.Path(root) / variant.POLICY_RC).read_text().endswith("exit 101\n")
            for name in argv[10:]:
                (variant.Path(root) / "usr/share/doc" / name).mkdir(parents=True)
        out = "".join(f"{p} 1.0-1\n" for p in argv[6:]) if argv[0] == "chroot" else ""
        return subprocess.CompletedProcess(argv, 0, out, "")

    monkeypatch.setattr(variant.cache, "run", run)
    return calls


def test_a_variant_is_built_once_then_reused(monkeypatch, base_tree, tmp_path):
    calls = fake_builder(monkeypatch)
    lines = []
    where = tmp_path / "images"
    where.mkdir()
    got = variant.tree(base_tree, BASE, ["redis-tools", "bzip2"], where, lines.append)
    assert got == where / f"variant-{variant.key(BASE, ['bzip2', 'redis-tools'])}" / "rootfs"
    assert lines[0] == "building a variant with 2 more packages (bzip2, redis-tools) ..."
    assert lines[1].startswith("done in ") and len(lines) == 2
    install = next(c for c in calls if c[0] == "unshare")
    assert install[-2:] == ["bzip2", "redis-tools"] and "--no-install-recommends" in install[7]
    assert variant.installed(got) == ["bzip2 1.0-1", "redis-tools 1.0-1"]
    recipe = json.loads((got.parent / "recipe.json").read_text())
    assert recipe["packages"] == ["bzip2", "redis-tools"]
    assert not (got / variant.POLICY_RC).exists()                 # gone from the tree
    assert (got / "etc/resolv.conf").read_text() == "nameserver 192.0.2.1\n"   # the tree's own
    assert list((got / "usr/share/doc").iterdir()) == []         # the base's trim again
    assert (base_tree / "usr/share/doc/apt/copyright").exists()   # the base untouched
    calls.clear()
    lines.clear()
    again = variant.tree(base_tree, BASE, ("bzip2", "redis-tools"), where, lines.append)
    assert again == got and calls == [] and lines == []


def test_no_packages_is_the_base_tree_itself(monkeypatch, base_tree, tmp_path):
    calls = fake_builder(monkeypatch)
    assert variant.tree(base_tree, BASE, (), tmp_path, print) == base_tree
    assert variant.tree(base_tree, BASE, ["fio", "ncbi-blast+"], tmp_path, print) == base_tree
    assert calls == [] and not list(tmp_path.glob("variant-*"))


def test_a_failed_install_ends_the_line_and_leaves_no_variant(monkeypatch, base_tree, tmp_path):
    fake_builder(monkeypatch, fail_on="unshare")
    lines = []
    with pytest.raises(VirtbenchError, match="Unable to locate package nosuch"):
        variant.tree(base_tree, BASE, ["nosuch"], tmp_path, lines.append)
    assert lines[0].endswith("(nosuch) ...") and lines[1].startswith("failed after ")
    assert list(tmp_path.iterdir()) == [base_tree.parent]       # nothing half-built left
    assert variant.cached_tree(tmp_path, BASE, ["nosuch"]) is None


def test_the_guest_image_builds_its_variant_from_the_base(monkeypatch, tmp_path):
    """build(packages=...) hands the base tree to the variant and keys the image by it."""
    monkeypatch.setattr(image, "images_dir", lambda: tmp_path)
    monkeypatch.setattr(image, "check_tools", lambda: None)
    seen = {}
    monkeypatch.setattr(image, "build_base", lambda **kw: tmp_path / "base-b" / "rootfs")

    def fake_tree(base, recipe, packages, where, say, force=False):
        seen["tree"] = (base, packages)
        return tmp_path / "variant-v" / "rootfs"

    def fake_image(base, out, h, say):
        seen["image"] = (base, h)
        return image.ImageInfo(path=out / "root.raw", linux=out / "vmlinuz",
                               initrd=out / "initrd.img", size_bytes=1, recipe_hash=h,
                               build_s=0.0, reused=False)

    monkeypatch.setattr(image.variant, "tree", fake_tree)
    monkeypatch.setattr(image, "_build_image", fake_image)
    info = image.build(packages=["redis-tools", "bzip2"])
    assert seen["tree"] == (tmp_path / "base-b" / "rootfs", ("bzip2", "redis-tools"))
    assert seen["image"] == (tmp_path / "variant-v" / "rootfs",
                             image.recipe_hash(packages=["bzip2", "redis-tools"]))
    assert info.recipe_hash == image.recipe_hash(packages=["bzip2", "redis-tools"])
    assert image.cached(packages=["redis-tools", "bzip2"]) is not None
    assert image.cached() is None                     # the plain image is another one
