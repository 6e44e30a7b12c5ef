"""/proc/meminfo: read in one place, parsed by one pure function.

Used by the capacity checks (MemTotal), the memory an environment offers a benchmark
(MemAvailable), the profiling twin's room check and the fingerprint; an ssh target's text
comes over its agent and goes through the same parser.
"""
from __future__ import annotations

PATH = "/proc/meminfo"


def field(text: str, key: str) -> int | None:
    """One field (`MemAvailable:  123 kB`) in bytes (a count where there is no unit); None
    when absent (pure)."""
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name.strip() == key:
            parts = rest.split()
            if parts and parts[0].isdigit():
                return int(parts[0]) * (1024 if parts[1:2] == ["kB"] else 1)
    return None


def available(text: str) -> int | None:
    """Memory a new process could use: MemAvailable, or MemTotal on kernels without it."""
    return field(text, "MemAvailable") or field(text, "MemTotal")


def total(text: str) -> int | None:
    return field(text, "MemTotal")


def host_text() -> str | None:
    """This host's /proc/meminfo, or None where it cannot be read."""
    try:
        with open(PATH) as f:
            return f.read()
    except OSError:
        return None


def host_available() -> int | None:
    text = host_text()
    return available(text) if text is not None else None


def host_total() -> int | None:
    text = host_text()
    return total(text) if text is not None else None
