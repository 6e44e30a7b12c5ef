"""Connecting to libvirt: the binding imported lazily, libvirt's errors as one line, what a
connection or a domain says about the platform (pure where it can be), and a domain paused
and resumed (suspend_domain, resume_domain)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from urllib.parse import urlsplit

from ....core.errors import EnvironmentUnusable, VirtbenchError

BINDING_HINT = ("install libvirt's Python binding: apt-get install libvirt-dev pkg-config, then "
                ".venv/bin/pip install libvirt-python==$(pkg-config --modversion libvirt)")

# libvirt's own name of a driver (virConnectGetType) -> the platform word in labels
PLATFORMS = {"QEMU": "kvm", "XEN": "xen", "VBOX": "virtualbox", "ESX": "vmware",
             "VMWARE": "vmware", "HYPERV": "hyperv", "BHYVE": "bhyve", "LXC": "lxc",
             "TEST": "test", "CH": "cloud-hypervisor"}


def binding():
    """The libvirt module, or a one-line error saying how to install it."""
    try:
        import libvirt
    except ImportError:
        raise VirtbenchError(f"environment libvirt: no libvirt Python binding; {BINDING_HINT}") \
            from None
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)  # no printing to stderr
    return libvirt


def version_text(n: int) -> str:
    """libvirt's packed version number (major * 1e6 + minor * 1e3 + micro) as text."""
    return f"{n // 1000000}.{n // 1000 % 1000}.{n % 1000}"


def describe_error(uri: str, exc: Exception) -> str:
    """libvirt's error for `uri` as one line naming the thing and the fix."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    scheme = urlsplit(uri).scheme.split("+")[0]
    if "no connection driver available" in text:
        return (f"libvirt URI {uri}: the {scheme} driver is not installed in that libvirtd "
                f"({text}); install it (Debian: apt-get install libvirt-daemon-driver-{scheme}) "
                "or fix the URI")
    if "Failed to connect socket" in text or "Cannot recv data" in text:
        return (f"libvirt URI {uri}: no libvirtd answers ({text}); start libvirtd, or add "
                "?socket=PATH for a daemon on another socket")
    if "authentication" in text.lower() or "credentials" in text.lower():
        return (f"libvirt URI {uri}: {text}; put the credentials in libvirt's auth file "
                "(~/.config/libvirt/auth.conf) or use a key-based transport (qemu+ssh://)")
    return f"libvirt URI {uri}: {text}"


def open_connection(uri: str):
    """A read-write connection to `uri`, or EnvironmentUnusable in one line."""
    libvirt = binding()
    try:
        return libvirt.open(uri)
    except libvirt.libvirtError as exc:
        raise EnvironmentUnusable(describe_error(uri, exc)) from None


def is_local_qemu(uri: str) -> bool:
    """Does `uri` reach the QEMU driver on this machine (qemu:///system, qemu:///session,
    qemu+unix:///system?socket=...)? Domains virtbench defines must run here: their image,
    taps and scratch disks are local files and devices."""
    parts = urlsplit(uri)
    return parts.scheme in ("qemu", "qemu+unix") and not parts.netloc


def platform_of(driver: str, domain_xml: str) -> str:
    """The platform word of a domain from its driver and its XML (pure): kvm or qemu (TCG) for
    QEMU by the domain type; xen-pv, xen-pvh or xen-hvm by the OS type; else the driver's."""
    root = ET.fromstring(domain_xml)
    driver = driver.upper()
    if driver == "QEMU":
        return "kvm" if root.get("type") == "kvm" else "qemu"
    if driver == "XEN":
        os_type = (root.findtext("os/type") or "").strip()
        return {"hvm": "xen-hvm", "xenpvh": "xen-pvh"}.get(os_type, "xen-pv")
    return PLATFORMS.get(driver, driver.lower())


def domain_state_words(libvirt, state: int, reason: int) -> str:
    """virDomainGetState's (state, reason) as words, e.g. "shut off (crashed)"."""
    names = {libvirt.VIR_DOMAIN_RUNNING: "running", libvirt.VIR_DOMAIN_BLOCKED: "blocked",
             libvirt.VIR_DOMAIN_PAUSED: "paused", libvirt.VIR_DOMAIN_SHUTDOWN: "shutting down",
             libvirt.VIR_DOMAIN_SHUTOFF: "shut off", libvirt.VIR_DOMAIN_CRASHED: "crashed",
             libvirt.VIR_DOMAIN_PMSUSPENDED: "suspended by the guest"}
    word = names.get(state, f"state {state}")
    if state == libvirt.VIR_DOMAIN_SHUTOFF:
        why = {libvirt.VIR_DOMAIN_SHUTOFF_SHUTDOWN: "shut down by the guest",
               libvirt.VIR_DOMAIN_SHUTOFF_DESTROYED: "destroyed",
               libvirt.VIR_DOMAIN_SHUTOFF_CRASHED: "crashed",
               libvirt.VIR_DOMAIN_SHUTOFF_FAILED: "failed to start"}.get(reason)
        if why:
            word += f" ({why})"
    return word



def suspend_domain(holder) -> None:
    """virDomainSuspend of `holder.dom` (none: nothing to do), `holder.paused` set first: a
    failed suspend may still have taken, so resume_domain is tried after. The pause() of a
    domain the user has (ExistingDomain) and of one virtbench defines (DomainVmm)."""
    if holder.dom is not None:
        holder.paused = True
        holder.dom.suspend()


def resume_domain(holder) -> None:
    """virDomainResume of `holder.dom` (none: nothing to do); then it is no longer paused."""
    if holder.dom is not None:
        holder.dom.resume()
        holder.paused = False
