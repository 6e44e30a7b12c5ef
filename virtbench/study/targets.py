"""Machines the user names for environments virtbench cannot start itself (a XenServer guest,
a VirtualBox or VMware VM): `~/.config/virtbench/targets.toml` (or $VIRTBENCH_TARGETS).

    [xenserver]                     # the name a study's environment gives as `target`
    spec = "ssh:host=192.0.2.10,known_hosts=/root/.ssh/known_hosts,name=xenserver"

A study environment with `target = "xenserver"` runs as that spec; without the entry it is
skipped with one line naming the key to set. The file is validated strictly, like a study.
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

from ..core.errors import VirtbenchError
from ..core.text import text_problem

KINDS_FOR_TARGETS = ("ssh", "libvirt")


def targets_path() -> Path:
    env = os.environ.get("VIRTBENCH_TARGETS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(base) / "virtbench" / "targets.toml"


def parse_targets(text: str, where: str) -> dict[str, str]:
    """NAME -> spec from the file's text; one-line errors naming the file and the table."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise VirtbenchError(f"targets {where}: not valid TOML ({exc})") from None
    out = {}
    for name, table in data.items():
        problem = text_problem(name)
        if problem:
            raise VirtbenchError(f"targets {where}: the table name {name!r} {problem}; name "
                                 "it with letters, digits, '.', '_' and '-' only")
        if not isinstance(table, dict):
            raise VirtbenchError(f"targets {where}: {name} must be a table [{name}] with spec = "
                                 "\"ssh:host=...\"")
        unknown = sorted(set(table) - {"spec", "note"})
        if unknown:
            raise VirtbenchError(f"targets {where}: [{name}]: unknown key {unknown[0]!r}; valid "
                                 "keys: note, spec")
        spec = table.get("spec")
        if not isinstance(spec, str) or not spec.strip():
            raise VirtbenchError(f"targets {where}: [{name}]: spec must be a non-empty string, "
                                 "e.g. spec = \"ssh:host=192.0.2.10\"")
        problem = text_problem(spec)
        if problem:
            raise VirtbenchError(f"targets {where}: [{name}]: spec {spec!r} {problem}; write it "
                                 "on one line, e.g. spec = \"ssh:host=192.0.2.10\"")
        kind = spec.split(":", 1)[0].strip()
        if kind not in KINDS_FOR_TARGETS:
            raise VirtbenchError(f"targets {where}: [{name}]: spec kind {kind!r} is not a "
                                 f"machine you name; use one of: {', '.join(KINDS_FOR_TARGETS)}")
        out[name] = spec.strip()
    return out


def load_targets(path: Path | None = None) -> dict[str, str]:
    path = path or targets_path()
    if not path.exists():
        return {}
    return parse_targets(path.read_text(), str(path))


def missing_target_message(name: str, path: Path | None = None) -> str:
    path = path or targets_path()
    return (f"needs target {name!r}: add [{name}] with spec = \"ssh:host=ADDRESS,name={name}\" "
            f"(or a libvirt: spec) to {path}")
