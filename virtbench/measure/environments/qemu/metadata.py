"""What a QEMU guest records about itself in the store (class Qemu's metadata()): QEMU's
binary, its version (from -version, and from QMP once the guest was up) and argv, the accelerator and why, the options, the boot, the image, our kernels
staged, the tunings and knobs as read back, and the guest's own facts."""
from __future__ import annotations

import os

from ....machinery.image import suites
from .cmdline import firmware
from . import hugepages
from .vmm import version
from .booted.guest import guest_kernel_release


def qemu_metadata(env) -> dict:
    """The metadata of `env` (a started or stopped class Qemu environment)."""
    guest, image, values = env.guest, env.image, env.values
    qemu = getattr(env, "qemu", None)
    if qemu is not None:
        facts = qemu.facts()
    else:
        ver, line = version.qemu_version()
        facts = {"qemu_version": ver, "qemu": line, "qemu_binary": version.qemu_binary()}
    meta = {
        **facts, "qemu_version_qmp": getattr(env, "qemu_version_qmp", None),
        "accel": env.accel, "accel_reason": env.accel_reason,
        "machine": env.machine, "cpu_model": env.cpu,
        "vcpus": values["vcpus"], "mem": values["mem"],
        "disk": values["disk"], "nic": values["nic"],
        "cache": values["cache"], "aio": values["aio"],
        "backing": values["backing"], "vhost": env.vhost,
        "agent_transport": values["agent"],
        "boot_s": env.boot_s, "guest_uptime_at_ready_s": env.guest_uptime_at_ready,
        "image_recipe": image.recipe_hash if image else None,
        "image_packages": list(image.packages) if image else [],
        "guest_kernel_package": image.linux_version if image else None,
        "guest_kernel_deb": (image.linux_deb or None) if image else None,
        "guest_linux_suite": values.get("linux") or suites.DEFAULT_SUITE,
        "firmware": values.get("firmware") or firmware.DEFAULT,
        "kernels_staged": list(guest.kernels_staged) if guest else [],
        "kernels_stage_s": guest.stage_s if guest else None,
        "qemu_argv": list(env.vmm.argv) if env.vmm is not None else [],
        "tunings": dict(guest.tunings_read) if guest else {},
        "hugepages": values.get("hugepages", "off"),
        "iothread": values.get("iothread", "off"),
        "queues": values.get("queues", "auto"), "knobs_read": dict(env.knobs_read),
        "host_thp": hugepages.host_thp(),
    }
    if guest is not None:
        meta.update(guest.facts())
    meta["host_kernel"] = os.uname().release
    if not meta.get("guest_kernel"):
        meta["guest_kernel"] = guest_kernel_release(meta.get("kernel")) or (
            image.linux_version if image else None)
    return meta
