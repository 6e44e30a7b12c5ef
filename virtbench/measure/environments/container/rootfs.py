"""The tree a container runs: virtbench's debootstrap tree (the guest image's base level, no
image pulled), built once under the image builder's lock; with a benchmark's Debian packages,
the variant of it with them (image/variant.py), built on first use and cached by the set."""
from __future__ import annotations


def base_rootfs_cached(packages=()):
    """The debootstrap tree (or its variant with `packages`) if it is built, else None
    (nothing built)."""
    from ....machinery.image import guest_image as image, variant
    base = image.base_recipe()
    if variant.extra(base, packages):
        return variant.cached_tree(image.images_dir(), base, packages)
    out = image.images_dir() / f"base-{image._hash(base)}"
    return out / "rootfs" if (out / "done").exists() else None


def rootfs(progress=None, packages=()):
    """virtbench's debootstrap tree (the guest image's base level), with `packages` added
    (a variant), built if needed under the image builder's lock (a guest image being built
    beside us builds it once)."""
    import fcntl
    from ....machinery.image import guest_image as image, variant
    cached = base_rootfs_cached(packages)
    if cached is not None:
        return cached
    image.check_tools()
    image.images_dir().mkdir(parents=True, exist_ok=True)
    with open(image.build_lock(), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        base = image.build_base(progress=progress)
        return variant.tree(base, image.base_recipe(), packages, image.images_dir(), progress)
