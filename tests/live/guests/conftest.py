"""The live sandbox tests' Debian tree, built once per session when it is not cached yet (a
fresh machine, CI): the tests then run there too, instead of skipping at collection time."""
import os
import shutil

import pytest

from virtbench.core.errors import VirtbenchError


@pytest.fixture(scope="session")
def debian_rootfs():
    """virtbench's base tree (what containers and gVisor sandboxes run), built by the
    same code `virtbench run` uses (a couple of minutes the first time, then cached). Skips
    only where it cannot be built at all (not root, mmdebstrap missing); a build that fails
    fails the tests."""
    from virtbench.measure.environments.container import rootfs
    from virtbench.machinery.image import guest_image as image
    if os.geteuid() != 0 or not shutil.which("podman"):
        pytest.skip("containers need root and podman")
    try:
        image.check_tools()
    except VirtbenchError as exc:
        pytest.skip(str(exc))
    return rootfs.rootfs()
