"""What the environment kinds declare they can do, read from their source, for the capability tests."""
import os

from virtbench.measure.environments import create
from virtbench.measure.environments.base import ABILITIES, Environment


ROOT = os.geteuid() == 0


# specs that construct without I/O, covering each kind's option-dependent answers
SPECS = ("native", "qemu", "qemu:accel=tcg", "ssh:host=h", "ssh:host=h,peer=p,user=joe",
         "libvirt:uri=qemu:///system", "libvirt:uri=test:///default,domain=d",
         "libvirt:uri=test:///default,domain=d,peer=p", "container", "container:network=bridge",
         "gvisor", "gvisor:network=none", "nested")


def _implements(cls, method: str) -> bool:
    return getattr(cls, method) is not getattr(Environment, method)


def _declared() -> dict[type, set[str]]:
    """Each kind's class and the capabilities (of ABILITIES) it declares for some spec."""
    out: dict[type, set[str]] = {}
    for spec in SPECS:
        env = create(spec)
        caps = env.capabilities()
        out.setdefault(type(env), set()).update(c for c in ABILITIES if getattr(caps, c))
    return out
