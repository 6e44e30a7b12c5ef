"""What `virtbench envs` shows: every kind's probe() answer, cached on disk with its date so
that listing the kinds answers at once (the probes boot a guest and start sandboxes: 23.5 s on
a cold host), probed again on request (`envs --probe`) or when the host or virtbench changed.

The cache file lives in virtbench's cache directory (kernels.cache_dir(): made 0700 and
checked, as the KVM and gVisor probes' caches are); the file itself is read only when it is a
regular file of ours that no one else can write, and its content only when every field has
the type it should. Anything else is probed again and the file replaced (written to a new
file, then renamed over it)."""
from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from ... import __version__
from ...machinery.kernels import build as kernels
from .spec import Usability

CACHE_NAME = "envs-probe.json"


@dataclass(frozen=True)
class Answers:
    kinds: dict[str, Usability]
    probed: datetime           # when the probes ran
    cached: bool               # read from the cache, not probed now


def cache_key(kinds) -> str:
    """What the answers depend on: virtbench, the host's kernel, the kinds (pure input)."""
    u = os.uname()
    return f"virtbench {__version__}|{u.release}|{u.version}|{','.join(sorted(kinds))}"


def decode(text: str, key: str) -> tuple[dict[str, Usability], datetime] | None:
    """The cached answers in `text` if they are for `key` and well formed, else None (pure)."""
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("key") != key:
            return None
        probed = datetime.fromisoformat(doc["probed"])
        kinds = {}
        for kind, u in doc["kinds"].items():
            if not (isinstance(u["usable"], bool) and isinstance(u["reason"], str)
                    and isinstance(u["details"], dict)):
                return None
            kinds[kind] = Usability(u["usable"], u["reason"], u["details"])
        return kinds, probed
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def encode(kinds: dict[str, Usability], probed: datetime, key: str) -> str:
    return json.dumps({"key": key, "probed": probed.isoformat(), "kinds": {
        k: {"usable": u.usable, "reason": u.reason, "details": u.details}
        for k, u in kinds.items()}}, indent=1, default=str)


def _trusted_text(path: Path) -> str | None:
    """The file's text when it is a regular file of ours, writable by no one else."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() \
                or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return None
        return path.read_text()
    except OSError:
        return None


def _save(path: Path, text: str) -> None:
    try:
        fd, tmp = tempfile.mkstemp(prefix=".envs-probe-", dir=path.parent)   # 0600
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass                    # the answers stand; the next listing probes again


def answers(kinds: dict, fresh: bool = False,
            progress: Callable[[str], None] = lambda line: None) -> Answers:
    """Each kind's Usability: from the cache unless `fresh` or it is missing, stale or not
    trusted; else probed now (one `progress` line per kind) and cached."""
    path = kernels.cache_dir() / CACHE_NAME
    key = cache_key(kinds)
    if not fresh:
        text = _trusted_text(path)
        found = decode(text, key) if text is not None else None
        if found is not None and set(found[0]) == set(kinds):
            return Answers(found[0], found[1], cached=True)
    if fresh:
        from .qemu.vmm import kvm_probe
        from .gvisor import platform as gvisor_platform
        progress("probing KVM (a short guest boot)")
        kvm_probe.kvm_probe(force=True)
        gvisor_platform.forget()
    probed = datetime.now(timezone.utc)
    out = {}
    for kind, cls in sorted(kinds.items()):
        progress(f"probing {kind}")
        out[kind] = cls.probe()
    _save(path, encode(out, probed, key))
    return Answers(out, probed, cached=False)
