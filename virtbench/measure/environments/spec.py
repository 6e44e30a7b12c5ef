"""An environment as the user writes it: `KIND[:key=value,...]`, each kind's options, and
whether a kind can run on this host."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ...core.errors import VirtbenchError
from ...core.text import text_problem


@dataclass(frozen=True)
class Option:
    """One option of an environment kind: its default and what values it takes."""

    default: Any
    choices: tuple[str, ...] | None = None      # the valid values, when they are a fixed set
    convert: Callable[[str], Any] | None = None  # a parser for free-form values (int, size)
    help: str = ""
    in_label: bool = True                        # does a non-default value appear in the label?

    def parse(self, kind: str, name: str, raw: str) -> Any:
        if self.choices is not None and raw not in self.choices:
            raise VirtbenchError(
                f"environment {kind}: {name}={raw} is not valid; use one of: {', '.join(self.choices)}")
        if self.convert is not None:
            try:
                return self.convert(raw)
            except ValueError as exc:
                raise VirtbenchError(f"environment {kind}: {name}={raw} is not valid ({exc})") from exc
        return raw


@dataclass(frozen=True)
class EnvSpec:
    """`KIND[:key=value,...]` as the user wrote it, split into its parts."""

    kind: str
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> "EnvSpec":
        # every option's value reaches a command line or a configuration file (QEMU's argv,
        # ssh's options, libvirt's XML, podman's arguments): none may hold a newline
        problem = text_problem(text)
        if problem:
            raise VirtbenchError(f"environment spec {text!r} {problem}; write it on one line "
                                 "without control characters, e.g. qemu:disk=ide,nic=e1000")
        text = text.strip()
        if not text:
            raise VirtbenchError("empty environment spec; write KIND[:key=value,...], e.g. native")
        kind, _, rest = text.partition(":")
        options: dict[str, str] = {}
        for item in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = item.partition("=")
            if not eq or not key or not value:
                raise VirtbenchError(
                    f"environment spec {text!r}: {item!r} is not key=value; "
                    "write e.g. qemu:disk=ide,nic=e1000")
            if key in options:
                raise VirtbenchError(f"environment spec {text!r}: option {key} given twice")
            options[key] = value
        return cls(kind.strip(), options)

    def __str__(self) -> str:
        if not self.options:
            return self.kind
        return self.kind + ":" + ",".join(f"{k}={v}" for k, v in self.options.items())


NAME_OPTION = "name"      # every kind takes it: the environment's own name in its label
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def check_name(kind: str, text: str) -> str:
    """`name=LABEL`, which every kind takes: letters, digits, '.', '_' and '-' (it becomes
    part of the label, a file name in reports and a key of the store); one line otherwise."""
    if not NAME_RULE.fullmatch(text):
        raise VirtbenchError(f"environment {kind}: name={text} is not valid; use letters, "
                             "digits, '.', '_' and '-' (at most 63), e.g. name=twin")
    return text


@dataclass
class Usability:
    """Whether an environment kind can run here, and why not."""

    usable: bool
    reason: str = ""
    details: dict = field(default_factory=dict)


def options_text(options: dict[str, Option]) -> str:
    """The options with their choices or defaults, for `virtbench envs`."""
    return ", ".join(f"{n}={'|'.join(o.choices) if o.choices else o.default}"
                     for n, o in options.items())
