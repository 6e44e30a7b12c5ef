"""Which Debian suite the guest's kernel comes from (`linux=SUITE` of the guest kinds, `virtbench
image build --linux SUITE`), pure.

The rest of the image stays bookworm's: the base tree is bootstrapped from bookworm with the
suite added as a second apt source and `linux-image-amd64/SUITE` in place of bookworm's
kernel (apt takes the kernel and the modules' package from that suite, everything else from
bookworm). The flavour is `linux-image-amd64`, not `-cloud-amd64`: the cloud flavour lacks
drivers of device models virtbench uses (ahci, ata_piix, 8139cp/8139too, e1000).

Only suites known to work with a bookworm userland are accepted: their kernel package
depends on nothing newer than bookworm has (`kmod`, `initramfs-tools`; seen with apt-cache
on 2026-11, docs/versions.md), and a guest booted from it ran the battery.
"""
from __future__ import annotations

import re

from ...core.errors import VirtbenchError
from ...core.text import url_problem

DEFAULT_SUITE = "bookworm"      # the image's own suite (guest.SUITE): its kernel is the default

# suite -> the Linux series it serves (what the label shows before the image is built; the
# built image's real version is checked against it and recorded in the metadata)
SUITES = {
    "bookworm": "6.1",
    "bookworm-backports": "6.12",
}
KERNEL_PACKAGE = "linux-image-amd64"


def check_suite(text: str) -> str:
    """The `linux=` value: a known suite (ValueError, naming them, otherwise)."""
    if text not in SUITES:
        raise ValueError(f"unknown Debian suite for the guest kernel; use one of: "
                         f"{', '.join(SUITES)}")
    return text


def is_default(suite: str | None) -> bool:
    return suite in (None, "", DEFAULT_SUITE)


def series(suite: str | None) -> str:
    """The Linux series (major.minor) a suite's kernel has."""
    return SUITES[suite or DEFAULT_SUITE]


def release_series(release: str) -> str | None:
    """A kernel release (`6.12.95+deb12-amd64`, `6.1.0-40-amd64`) -> its series ("6.12")."""
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def base_changes(suite: str, mirror: str, packages) -> dict:
    """What a non-default suite changes in the base recipe: a second apt source (mmdebstrap
    takes full `deb` lines as mirrors) and the kernel package pinned to the suite. The line
    is one apt source, no more: the suite a known one, the mirror one URL."""
    try:
        check_suite(suite)
    except ValueError as exc:
        raise VirtbenchError(f"linux={suite!r}: {exc}") from None
    problem = url_problem(mirror)
    if problem:
        raise VirtbenchError(f"the guest image's mirror {mirror!r} {problem}; give one "
                             "http://, https:// or file:// URL")
    return {"sources": [f"deb {mirror} {suite} main"],
            "packages": sorted(f"{p}/{suite}" if p == KERNEL_PACKAGE else p for p in packages),
            "linux_suite": suite}


def label_part(suite: str | None) -> str | None:
    """What a non-default suite adds to an environment's label: `linux-6.12`."""
    return None if is_default(suite) else f"linux-{series(suite)}"


DPKG_QUERY = ["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", "linux-image-*"]


def kernel_deb(dpkg_query: str, release: str) -> str:
    """`dpkg-query -W -f '${Package} ${Version}\\n' 'linux-image-*'` run in the guest tree ->
    "linux-image-RELEASE VERSION" of the installed kernel `release` ("" if not listed; the
    versionless lines are packages dpkg knows of but has not installed)."""
    want = f"{KERNEL_PACKAGE.removesuffix('-amd64')}-{release}"
    for line in dpkg_query.splitlines():
        package, _, version = line.strip().partition(" ")
        if package == want and version.strip():
            return f"{package} {version.strip()}"
    return ""
