"""What an environment must release when it stops, in one list (as contextlib.ExitStack, with
names and early release).

A kind registers each thing the moment it creates it (a process, a network namespace, a work
directory and its guardian, a container, a domain, an agent connection) with the function
that releases it. `Environment.stop()` releases them all, last registered first: whatever
state a start reached, what it made goes, in the reverse order of its making, and no kind
writes that order by hand. A thing released before the stop (a profiling twin after the
profiles) leaves the list through its handle.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(eq=False)
class Held:
    """One registered thing: its name (for errors and tests) and how it is released."""

    name: str
    release_fn: Callable[[], None]
    owner: "Resources"

    def release(self) -> None:
        """Release it now (once): it leaves its list, so stop() does not release it again."""
        if self.owner.forget(self):
            self.release_fn()


class Resources:
    """The things to release, in the order they were made."""

    def __init__(self):
        self._held: list[Held] = []

    def add(self, name: str, release: Callable[[], None]) -> Held:
        held = Held(name, release, self)
        self._held.append(held)
        return held

    def forget(self, held: Held) -> bool:
        """Take `held` off the list without releasing it; False if it was not on it."""
        if held in self._held:
            self._held.remove(held)
            return True
        return False

    @property
    def names(self) -> list[str]:
        """What is held, in the order it was registered."""
        return [h.name for h in self._held]

    def __len__(self) -> int:
        return len(self._held)

    def close(self) -> None:
        """Release everything, last registered first. Every release runs even when one
        fails (cleanup goes on); then the first failure is raised, naming what it released."""
        failures: list[tuple[str, BaseException]] = []
        while self._held:
            held = self._held.pop()
            try:
                held.release_fn()
            except BaseException as exc:      # noqa: B902 - the rest must still be released
                failures.append((held.name, exc))
        if failures:
            name, first = failures[0]
            if isinstance(first, Exception):
                others = "".join(f"; {n} too: {e}" for n, e in failures[1:])
                raise ReleaseError(f"releasing {name} failed: {first}{others}") from first
            raise first                       # KeyboardInterrupt, SystemExit: as they came


class ReleaseError(RuntimeError):
    """A release failed (the others ran)."""
