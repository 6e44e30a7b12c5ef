"""The screening design for k knobs (foundations/stats/screening/design.py): its kind and size,
balance and orthogonality, its resolution checked from the columns themselves (not from
pyDOE3's alias chains), the alias strings in the knobs' names, and the interactions it
estimates."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from virtbench.foundations.stats.screening import design as screening

KS = range(1, 13)
# k -> (kind, configurations): the module docstring's rule
EXPECTED = {1: (screening.FULL, 2), 2: (screening.FULL, 4), 3: (screening.FULL, 8),
            4: (screening.FRACTIONAL, 8), 5: (screening.FRACTIONAL, 16),
            6: (screening.FRACTIONAL, 16), 7: (screening.FRACTIONAL, 16),
            8: (screening.FRACTIONAL, 16),
            9: (screening.PLACKETT_BURMAN, 24), 10: (screening.PLACKETT_BURMAN, 24),
            11: (screening.PLACKETT_BURMAN, 24), 12: (screening.PLACKETT_BURMAN, 32)}


def _knobs(k: int) -> list[str]:
    return [f"knob{i}" for i in range(k)]


def _matrix(k: int) -> tuple[screening.TwoLevelDesign, np.ndarray]:
    design = screening.two_level(_knobs(k))
    return design, np.array(design.rows, dtype=int)


def _pair_columns(X: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    return {(i, j): X[:, i] * X[:, j] for i, j in itertools.combinations(range(X.shape[1]), 2)}


@pytest.mark.parametrize("k", KS)
def test_kind_and_number_of_configurations(k):
    design, X = _matrix(k)
    kind, n = EXPECTED[k]
    assert design.kind == kind
    assert X.shape == (n, k)
    assert design.knobs == tuple(_knobs(k))
    assert design.full_size == 2 ** k
    assert len(set(design.rows)) == n                       # no configuration twice
    if k >= 6:
        assert n <= 2 ** k / 4
    if kind == screening.PLACKETT_BURMAN:                   # 2 N, N the next multiple of 4 > k
        assert n == 2 * (4 * (k // 4 + 1))


@pytest.mark.parametrize("k", KS)
def test_levels_are_coded_and_columns_balanced_and_orthogonal(k):
    design, X = _matrix(k)
    assert set(np.unique(X)) == {-1, 1}
    assert (X == 1).sum(axis=0).tolist() == (X == -1).sum(axis=0).tolist()
    assert np.array_equal(X.T @ X, len(X) * np.eye(k, dtype=int))   # main effects estimable
    assert design.levels(len(X) - 1) == dict(zip(_knobs(k), X[-1].tolist()))


@pytest.mark.parametrize("k", [k for k in KS if EXPECTED[k][0] == screening.FULL])
def test_full_factorial_runs_every_combination_and_estimates_every_interaction(k):
    design, X = _matrix(k)
    assert design.resolution is None and design.aliases == ()
    assert set(design.rows) == set(itertools.product((-1, 1), repeat=k))
    assert design.interactions == tuple(itertools.combinations(_knobs(k), 2))


@pytest.mark.parametrize("k", [k for k in KS if k >= 4])
def test_main_effects_clear_of_two_knob_interactions(k):
    """Resolution IV at least: every main-effect column is orthogonal to the product of every
    two other columns (in particular equal to none of them, nor to its negative)."""
    design, X = _matrix(k)
    assert design.resolution is not None and design.resolution >= 4
    for (i, j), product in _pair_columns(X).items():
        for main in set(range(k)) - {i, j}:
            assert X[:, main] @ product == 0, (main, i, j)


@pytest.mark.parametrize("k", [k for k in KS if k >= 4])
def test_resolution_v_exactly_where_two_knob_interactions_are_clear(k):
    """Resolution V: no two-knob product column equals +- another (they are all orthogonal);
    the resolution IV designs have two that are not (aliased, or partially so)."""
    design, X = _matrix(k)
    products = list(_pair_columns(X).values())
    clear = all(a @ b == 0 for a, b in itertools.combinations(products, 2))
    assert clear == (k == 5)
    assert design.resolution == (5 if k == 5 else 4)
    if k == 5:
        for a, b in itertools.combinations(products, 2):
            assert not np.array_equal(a, b) and not np.array_equal(a, -b)


@pytest.mark.parametrize("k", KS)
def test_interactions_estimated_only_where_resolved(k):
    design, _ = _matrix(k)
    resolved = design.kind == screening.FULL or design.resolution == 5
    expected = tuple(itertools.combinations(_knobs(k), 2)) if resolved else ()
    assert design.interactions == expected


@pytest.mark.parametrize("k", [4, 6, 7, 8])
def test_alias_chains_in_knob_names_match_the_columns(k):
    """Each chain names two-knob interactions whose columns are equal (up to sign), and every
    pair of equal two-knob columns is in one chain."""
    design, X = _matrix(k)
    names = _knobs(k)
    columns = {"×".join((names[i], names[j])): c for (i, j), c in _pair_columns(X).items()}
    assert design.aliases
    seen = set()
    for chain in design.aliases:
        terms = chain.split(" = ")
        assert len(terms) >= 2
        for term in terms:
            assert term in columns, term                    # knob names, not pyDOE3's letters
        for a, b in itertools.combinations(terms, 2):
            assert abs(columns[a] @ columns[b]) == len(X)
            seen.add(frozenset((a, b)))
    for a, b in itertools.combinations(columns, 2):
        if abs(columns[a] @ columns[b]) == len(X):
            assert frozenset((a, b)) in seen, (a, b)


def test_four_knobs_alias_in_pairs():
    design = screening.two_level(["w", "x", "y", "z"])
    assert sorted(design.aliases) == ["w×x = y×z", "w×y = x×z", "w×z = x×y"]


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_resolved_designs_list_no_aliases(k):
    assert screening.two_level(_knobs(k)).aliases == ()


@pytest.mark.parametrize("k", [9, 12])
def test_plackett_burman_says_its_interactions_are_not_estimated(k):
    design = screening.two_level(_knobs(k))
    assert len(design.aliases) == 1 and "not estimated" in design.aliases[0]


def test_max_knobs_is_accepted():
    design = screening.two_level(_knobs(screening.MAX_KNOBS))
    assert design.kind == screening.PLACKETT_BURMAN
    assert len(design.rows) <= design.full_size / 4


@pytest.mark.parametrize("knobs", [[], _knobs(screening.MAX_KNOBS + 1)])
def test_too_few_or_too_many_knobs_are_refused(knobs):
    with pytest.raises(ValueError, match=f"1 to {screening.MAX_KNOBS} knobs, not {len(knobs)}"):
        screening.two_level(knobs)


def test_full_is_the_full_factorial_whatever_the_number():
    design = screening.full(_knobs(5))
    assert design.kind == screening.FULL and len(design.rows) == 32
    assert set(design.rows) == set(itertools.product((-1, 1), repeat=5))
    assert len(design.interactions) == 10
