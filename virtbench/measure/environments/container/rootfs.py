"""The tree a container runs: virtbench's debootstrap tree (the guest image's base level, no
image pulled), built once under the image builder's lock."""
from __future__ import annotations


def base_rootfs_cached():
    """The debootstrap tree if it is built, else None (nothing built)."""
    from ....machinery.image import guest_image as image
    out = image.images_dir() / f"base-{image._hash(image.base_recipe())}"
    return out / "rootfs" if (out / "done").exists() else None


def rootfs(progress=None):
    """virtbench's debootstrap tree (the guest image's base level), built if needed under
    the image builder's lock (a guest image being built beside us builds it once)."""
    import fcntl
    from ....machinery.image import guest_image as image
    cached = base_rootfs_cached()
    if cached is not None:
        return cached
    image.check_tools()
    image.images_dir().mkdir(parents=True, exist_ok=True)
    with open(image.build_lock(), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return image.build_base(progress=progress)
