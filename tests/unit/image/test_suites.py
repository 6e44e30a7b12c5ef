"""linux=SUITE: the guest image whose kernel comes from another Debian suite (recipe, cache
key, bootstrap argv, the kernel's package read back, the series check, `image build
--linux`). Real dpkg-query output from this machine in tests/fixtures/image."""
from pathlib import Path

import pytest

from virtbench.interface.cli import commands as cli
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.image import guest_image as image, suites

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "image"


def test_the_default_recipe_is_unchanged_by_the_option():
    assert image.base_recipe() == image.base_recipe(None) == image.base_recipe("bookworm")
    assert "sources" not in image.base_recipe() and "linux_suite" not in image.base_recipe()
    assert image.recipe_hash() == image.recipe_hash("bookworm")


def test_a_suite_changes_only_the_kernel_and_its_source():
    default, bpo = image.base_recipe(), image.base_recipe("bookworm-backports")
    assert bpo["suite"] == "bookworm"                     # the rest stays bookworm's
    assert bpo["sources"] == ["deb http://deb.debian.org/debian bookworm-backports main"]
    assert "linux-image-amd64/bookworm-backports" in bpo["packages"]
    assert "linux-image-amd64" not in bpo["packages"]
    assert set(bpo["packages"]) - set(default["packages"]) == {
        "linux-image-amd64/bookworm-backports"}
    # its own cache entries at both levels
    assert image._hash(bpo) != image._hash(default)
    assert image.recipe_hash("bookworm-backports") != image.recipe_hash()
    assert image.recipe("bookworm-backports")["base"] == image._hash(bpo)


def test_the_suite_is_bootstrapped_with_its_source_as_a_second_mirror(tmp_path, monkeypatch):
    calls = []

    def fake_run(argv, what="", **kw):     # mmdebstrap ... SUITE ROOT MIRROR [SOURCE...]
        calls.append(argv)
        root = Path(argv[argv.index("bookworm") + 1])
        (root / "boot").mkdir(parents=True)

    monkeypatch.setattr(image, "_run", fake_run)
    monkeypatch.setattr(image, "images_dir", lambda: tmp_path / "images")
    root = image.build_base(linux="bookworm-backports")
    argv = calls[0]
    assert argv[-3].endswith("/rootfs")                    # SUITE ROOT MIRROR SOURCE
    assert argv[-2] == image.MIRROR
    assert argv[-1] == "deb http://deb.debian.org/debian bookworm-backports main"
    include = next(a for a in argv if a.startswith("--include="))
    assert "linux-image-amd64/bookworm-backports" in include.split("=", 1)[1].split(",")
    assert root.parent.name == f"base-{image._hash(image.base_recipe('bookworm-backports'))}"
    image.build_base()                                     # the default: no second mirror
    assert calls[1][-1] == image.MIRROR and calls[1][-2].endswith("rootfs")


def test_bad_suites_are_refused():
    with pytest.raises(ValueError, match="bookworm-backports"):
        suites.check_suite("sid")
    with pytest.raises(ValueError):
        image.build(linux="bookworm-backportz")


def test_the_kernels_package_is_read_from_real_dpkg_query_output():
    text = (FIX / "dpkg-query-linux-image-bookworm.txt").read_text()
    assert suites.kernel_deb(text, "6.1.0-50-amd64") == "linux-image-6.1.0-50-amd64 6.1.176-1"
    assert suites.kernel_deb(text, "6.12.95+deb12-amd64") == ""
    # a versionless line (known to dpkg, not installed) is not the kernel
    unsigned = "".join(l for l in text.splitlines(True) if "-unsigned" in l)
    assert suites.kernel_deb(unsigned.replace("-unsigned", ""), "6.1.0-50-amd64") == ""


def test_the_built_kernel_must_be_of_the_suites_series():
    assert suites.release_series("6.12.95+deb12-amd64") == "6.12"
    assert suites.release_series("6.1.0-50-amd64") == "6.1"
    image.check_series("6.12.95+deb12-amd64", "bookworm-backports")
    with pytest.raises(VirtbenchError, match="6.1.0-50-amd64.*6.12 series.*suites.py"):
        image.check_series("6.1.0-50-amd64", "bookworm-backports")


def test_label_part():
    assert suites.label_part(None) is None and suites.label_part("bookworm") is None
    assert suites.label_part("bookworm-backports") == "linux-6.12"


def test_image_build_linux(monkeypatch, capsys):
    built = []

    def build(force=False, progress=None, linux=None):
        built.append(linux)
        return image.ImageInfo(path=Path("/c/x/root.raw"), linux=Path("/c/k"),
                               initrd=Path("/c/i"), size_bytes=2**20, recipe_hash="x",
                               build_s=1.0, reused=True, linux_version="6.12.95+deb12-amd64",
                               linux_suite=linux or "")

    monkeypatch.setattr(image, "build", build)
    assert cli.main(["image", "build", "--linux", "bookworm-backports"]) == 0
    assert "linux 6.12.95+deb12-amd64 (bookworm-backports)" in capsys.readouterr().out
    assert cli.main(["image", "build", "--linux", "sid"]) == 2          # one line, nothing built
    err = capsys.readouterr().err
    assert "invalid choice: 'sid'" in err and len(err.strip().splitlines()) == 1
    assert cli.main(["image", "build", "--variant", "host", "--linux",
                     "bookworm-backports"]) == 2
    assert "--linux is for the guest image" in capsys.readouterr().err
    assert built == ["bookworm-backports"]


def test_an_old_info_json_still_gives_the_kernel_version(tmp_path):
    (tmp_path / "info.json").write_text('{"size_bytes": 1, "recipe_hash": "h", "build_s": 2,'
                                        ' "linux_version": "6.1.0-50-amd64"}')
    info = image.built_image(tmp_path)
    assert info.linux_version == "6.1.0-50-amd64" and info.linux_suite == ""
    assert info.bzimage == tmp_path / "vmlinuz"
