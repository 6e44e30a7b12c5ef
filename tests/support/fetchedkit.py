"""A fetched QEMU in a private virtbench cache, laid out as `virtbench qemu fetch SUITE` leaves
it (image/qemu_fetch.py): CACHE/qemu/SUITE/{info.json, debs/*.deb, root/usr/bin/...}. The
binary is a shell script that answers -version like QEMU; the .deb is a few bytes whose
sha256 info.json records, so the cache's re-check (ownership, modes, checksums) runs for real.
The caller points $VIRTBENCH_CACHE at `cache` (monkeypatch.setenv)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path


def fake_fetched(cache: Path, suite: str = "bookworm-backports", version: str = "10.0.2") -> Path:
    """Make SUITE's fetched QEMU under `cache`; returns its binary's path."""
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    cache.chmod(0o700)
    d = cache / "qemu" / suite
    for sub in ("debs", "root/usr/bin", "root/usr/share/qemu", "root/usr/lib/x86_64-linux-gnu/qemu"):
        (d / sub).mkdir(mode=0o755, parents=True, exist_ok=True)
    (cache / "qemu").chmod(0o700)
    d.chmod(0o700)
    binary = d / "root/usr/bin/qemu-system-x86_64"
    binary.write_text(f"#!/bin/sh\necho 'QEMU emulator version {version} (Debian fake)'\n")
    binary.chmod(0o755)
    deb = d / "debs" / f"qemu-system-x86_{version}_amd64.deb"
    deb.write_bytes(b"not really a deb " + version.encode())
    info = {"suite": suite, "mirror": "file:///fake", "fetched": "2026-11-28T00:00:00+0000",
            "qemu_version": version, "qemu": f"QEMU emulator version {version}",
            "binary": "root/usr/bin/qemu-system-x86_64",
            "packages": [{"name": "qemu-system-x86", "version": version, "file": deb.name,
                          "sha256": hashlib.sha256(deb.read_bytes()).hexdigest(),
                          "size": deb.stat().st_size}]}
    (d / "info.json").write_text(json.dumps(info))
    return binary
