"""Native environments started for a test module and stopped after it."""
import pytest

from virtbench.measure import environments


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    """A native environment with a scratch directory of its own: (env, scratch)."""
    scratch = tmp_path_factory.mktemp("disk-scratch")
    env = environments.create(f"native:scratch={scratch}")
    env.start()
    yield env, scratch
    env.stop()


@pytest.fixture(scope="module")
def native_env():
    env = environments.create("native")
    env.start()
    yield env
    env.stop()
