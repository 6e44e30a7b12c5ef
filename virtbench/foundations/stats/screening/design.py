"""The two-level screening design for k knobs (docs/tune.md). Pure.

The rule, as a specification:
- k <= 3: the full factorial, 2^k configurations; every main effect and every two-knob
  interaction is estimated clear of the others ("full factorial", resolution None).
- k = 4: the half fraction 2^(4-1) with D = ABC, 8 configurations, resolution IV: main
  effects are clear of two-knob interactions, which are aliased in pairs (AB = CD).
- k = 5: the half fraction with E = ABCD, 16 configurations, resolution V (two-knob
  interactions clear of each other too).
- 6 <= k <= 8: pyDOE3's fracfact_by_res, 16 configurations, resolution IV.
- k >= 9: a Plackett-Burman design folded over (pyDOE3's pbdesign and fold): 2 N
  configurations with N the next multiple of 4 above k; the foldover makes it resolution
  IV (main effects clear of two-knob interactions; the interactions, partially aliased with
  each other, are not estimated).
Two-knob interactions are estimated only where the design resolves them: the full
factorial and resolution V. Resolution IV lists their alias chains (`aliases`) instead.
Levels are coded -1 (a knob's first level) and +1 (its second); a configuration's level of
a knob is its column's sign. For 6 or more knobs the design runs at most a quarter of the
full factorial's configurations.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

FULL, FRACTIONAL, PLACKETT_BURMAN = ("full factorial", "fractional factorial",
                                     "Plackett-Burman, folded over")
MAX_KNOBS = 20
LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class TwoLevelDesign:
    """A design over `knobs`: its rows' coded levels (+-1), its kind, resolution (None for a
    full factorial: nothing aliased), the alias chains in the knobs' names, and the
    two-knob interactions it estimates."""
    knobs: tuple[str, ...]
    rows: tuple[tuple[int, ...], ...]
    kind: str
    resolution: int | None
    aliases: tuple[str, ...]
    interactions: tuple[tuple[str, str], ...]

    @property
    def full_size(self) -> int:
        return 2 ** len(self.knobs)

    def levels(self, row: int) -> dict[str, int]:
        """Knob -> coded level (-1 or +1) of configuration `row`."""
        return dict(zip(self.knobs, self.rows[row]))


def two_level(knobs: list[str] | tuple[str, ...]) -> TwoLevelDesign:
    """The design the module's rule gives for these knobs (1 <= k <= MAX_KNOBS)."""
    import pyDOE3
    knobs = tuple(knobs)
    k = len(knobs)
    if not 1 <= k <= MAX_KNOBS:
        raise ValueError(f"a screening takes 1 to {MAX_KNOBS} knobs, not {k}")
    if k <= 3:
        matrix = pyDOE3.ff2n(k)
        pairs = tuple(itertools.combinations(knobs, 2))
        return TwoLevelDesign(knobs, _rows(matrix), FULL, None, (), pairs)
    if k >= 9:
        base = pyDOE3.pbdesign(k)
        matrix = pyDOE3.fold(base)
        return TwoLevelDesign(knobs, _rows(matrix), PLACKETT_BURMAN, 4,
                              ("main effects clear of two-knob interactions by the foldover; "
                               "two-knob interactions partially aliased with each other, "
                               "not estimated",), ())
    # 4 and 5 knobs: the generators of the highest resolution (pyDOE3's search finds none
    # for 4, and a resolution IV one for 5); 6 to 8: its resolution IV
    generators = {4: "a b c abc", 5: "a b c d abcd"}
    matrix = (pyDOE3.fracfact(generators[k]) if k in generators
              else pyDOE3.fracfact_by_res(k, 4))
    chains = [[t.strip() for t in chain.split("=")]
              for chain in pyDOE3.fracfact_aliasing(matrix)[0]]
    resolution = _resolution(chains)
    aliases = tuple(" = ".join(_named(t, knobs) for t in chain if len(t) <= 2)
                    for chain in chains if sum(len(t) <= 2 for t in chain) > 1)
    pairs = tuple(itertools.combinations(knobs, 2)) if resolution >= 5 else ()
    return TwoLevelDesign(knobs, _rows(matrix), FRACTIONAL, resolution, aliases, pairs)


def full(knobs: list[str] | tuple[str, ...]) -> TwoLevelDesign:
    """The full factorial over `knobs`, whatever their number (the simulations' yardstick)."""
    import pyDOE3
    knobs = tuple(knobs)
    return TwoLevelDesign(knobs, _rows(pyDOE3.ff2n(len(knobs))), FULL, None, (),
                          tuple(itertools.combinations(knobs, 2)))


def _rows(matrix: np.ndarray) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(round(v)) for v in row) for row in np.asarray(matrix))


def _resolution(chains: list[list[str]]) -> int:
    """The design's resolution from pyDOE3's alias chains: the shortest word of its defining
    relation is the least total length of two terms aliased with each other."""
    lengths = [len(a) + len(b) - 2 * len(set(a) & set(b))
               for chain in chains for a, b in itertools.combinations(chain, 2)]
    return min(lengths) if lengths else 0


def _named(term: str, knobs: tuple[str, ...]) -> str:
    """A term of pyDOE3's alias chains ("ab") in the knobs' names ("a×b"); the chains shown
    keep terms of at most two knobs (higher ones are taken as negligible, as screening
    does)."""
    return "×".join(knobs[LETTERS.index(ch)] for ch in term)
