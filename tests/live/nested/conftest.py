"""One outer guest for the tests of a module that asks for it (tests/live/nested/outer.py:
test_kvm_path.py's), torn down on every exit path: the fixture's finally at the module's end,
and the guest's guardian process should pytest itself be killed. Module scope, not session:
test_nested_env.py boots outer guests of its own and runs after test_kvm_path.py, so the
two never run at once (two TCG guests of 2 vCPUs each on this machine's 2 cores).

$VIRTBENCH_NESTED_KEEP=DIR keeps what the tests read in the guest (raw tool outputs, reports)
in DIR, for tests/live/nested/write_fixtures.py and the docs."""
import os
import time
from pathlib import Path

import pytest

from virtbench.measure.environments.qemu import qemu_binary
from virtbench.core.errors import VirtbenchError


@pytest.fixture(scope="module")
def outer():
    if os.geteuid() != 0 or qemu_binary() is None:
        pytest.skip("nested tests need root and qemu-system-x86_64")
    from outer import OuterGuest
    from virtbench.machinery.image import host_image
    import prebuild
    said = prebuild.wait("host image")
    if said:
        print(said, flush=True)
    t0 = time.monotonic()
    try:
        info = host_image.build(progress=lambda m: print(f"host image: {m}", flush=True))
    except VirtbenchError as exc:
        pytest.fail(f"the host image could not be built: {exc}")
    print(f"host image {info.recipe_hash}: {'reused' if info.reused else 'built'} in "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    guest = OuterGuest()
    try:
        guest.start()
        print(f"outer guest up in {guest.boot_s:.1f} s", flush=True)
        yield guest
    finally:
        guest.stop()
        for cmd, s, code in guest.log:
            print(f"  outer guest: {s:6.1f} s exit {code}: {cmd}")


@pytest.fixture(scope="session")
def keep_dir(tmp_path_factory) -> Path:
    """Where raw outputs of the nested tests go ($VIRTBENCH_NESTED_KEEP, else a temp dir)."""
    kept = os.environ.get("VIRTBENCH_NESTED_KEEP")
    if kept:
        path = Path(kept)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("nested")
