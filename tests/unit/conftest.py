"""The unit tier: no root, no guest, no server, no network, and nothing written outside the
test's own temporary directories. virtbench's work root ($VIRTBENCH_TMP) goes into a private
directory of this session, so a unit test never touches /var/tmp/virtbench (and runs the
same as an unprivileged user)."""
import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_work_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("vbtmp")
    root.chmod(0o700)
    old = os.environ.get("VIRTBENCH_TMP")
    os.environ["VIRTBENCH_TMP"] = str(root)
    yield root
    if old is None:
        os.environ.pop("VIRTBENCH_TMP", None)
    else:
        os.environ["VIRTBENCH_TMP"] = old
