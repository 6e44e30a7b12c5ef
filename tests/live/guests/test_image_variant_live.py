"""A real image variant: the container tree (the guest image's base level) plus a package it
lacks (bzip2), built by apt-get in a copy of the cached base, said in one line with its time,
and a container running it; the same set reused without a word; the base still without it."""
import os
import re
import shutil
import time

import pytest

from virtbench.machinery.image import guest_image as image, variant
from virtbench.measure.environments import create
from virtbench.measure.environments.container import podman

pytestmark = [pytest.mark.skipif(os.geteuid() != 0 or not podman.shutil.which("podman"),
                                 reason="containers need root and podman"),
              pytest.mark.usefixtures("debian_rootfs")]

LINE = re.compile(r"^  rootfs: building a variant with 1 more package \(bzip2\) \.\.\. "
                  r"done in \d+ s$")


def bzip2_in(env) -> int:
    env.start()
    try:
        return env.exec(["sh", "-c", "command -v bzip2 && bzip2 --help"], timeout=60).exit
    finally:
        env.stop()


@pytest.mark.slow            # 39 to 108 s here (the copy and apt-get), by the load beside it
def test_a_container_runs_the_variant_built_for_its_packages(capsys):
    where = variant.directory(image.images_dir(), image.base_recipe(), ["bzip2"])
    shutil.rmtree(where, ignore_errors=True)              # built here, not found from before
    env = create("container")
    env.add_packages(["bzip2"])
    t0 = time.monotonic()
    assert bzip2_in(env) == 0
    built_s = time.monotonic() - t0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "variant" in ln]
    assert len(lines) == 1 and LINE.match(lines[0]), lines
    assert env.rootfs_path == where / "rootfs"
    assert [ln.split()[0] for ln in variant.installed(env.rootfs_path)] == ["bzip2"]

    again = create("container")
    again.add_packages(("bzip2",))
    assert bzip2_in(again) == 0 and again.rootfs_path == env.rootfs_path
    assert "variant" not in capsys.readouterr().out        # the same set: reused, silently

    assert bzip2_in(create("container")) != 0               # the base tree has no bzip2
    print(f"built and run in {built_s:.0f} s")
