"""Binner equals np.searchsorted element for element (dpaudit.estimators.binning)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpaudit.estimators.binning import Binner


def _values(rng, b, n):
    """Laplace values, every breakpoint and its two neighbouring doubles, and the specials."""
    with np.errstate(over="ignore"):
        near = np.r_[b, np.nextafter(b, -np.inf), np.nextafter(b, np.inf)]
    return np.r_[rng.laplace(scale=3.0, size=n), near, np.nan, np.inf, -np.inf, 0.0, -0.0,
                 5e-324, -5e-324, np.finfo(float).max, -np.finfo(float).max]


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("m", [1, 2, 8, 33, 130, 1500])
def test_binner_equals_searchsorted(side, m):
    rng = np.random.default_rng(m)
    b = np.unique(rng.laplace(scale=3.0, size=m))
    atoms = b[: min(3, b.size)]
    b = np.unique(np.r_[b, np.nextafter(atoms, np.inf), 0.0, np.nextafter(0.0, 1.0)])  # crowded pairs
    v = _values(rng, b, 100_000)
    assert np.array_equal(Binner(b, side)(v), np.searchsorted(b, v, side=side))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=True, width=64), min_size=1, max_size=40),
       st.integers(0, 2**32 - 1), st.sampled_from(["right", "left"]))
def test_binner_equals_searchsorted_on_any_breakpoints(raw, seed, side):
    """Any finite or infinite breakpoints (huge ranges, subnormals, a single point): the fast path
    or the fallback, the same answers."""
    b = np.unique(np.asarray(raw, dtype=float))
    rng = np.random.default_rng(seed)
    v = np.r_[_values(rng, b, 2000), rng.choice(b, 500)]
    assert np.array_equal(Binner(b, side)(v), np.searchsorted(b, v, side=side))


def test_binner_is_the_fast_path_on_quantile_edges_and_keeps_other_inputs():
    rng = np.random.default_rng(0)
    edges = np.unique(np.quantile(rng.laplace(size=10_000), np.linspace(0, 1, 34)[1:-1]))
    assert Binner(edges).steps > 0                      # the arithmetic path is taken
    ints = np.arange(5)
    assert np.array_equal(Binner(edges)(ints), np.searchsorted(edges, ints, side="right"))
    assert Binner(np.array([1.0, np.inf])).steps == 0   # not finite: the binary search


def test_coordinate_cells_same_below_and_above_the_binner_size():
    """A coordinate's cells answer by binary search for small inputs and build a Binner for large
    ones: the same cell for every value either way (atoms, their successors, bins, NaN)."""
    from dpaudit.estimators.scores import _BINNER_MIN, _cells_of  # private: both sides of the size switch

    rng = np.random.default_rng(7)
    pooled = np.r_[np.round(rng.laplace(scale=4.0, size=30_000)), rng.laplace(scale=4.0, size=30_000)]
    cells = _cells_of(pooled, 32)
    assert cells.atoms.size and cells.edges.size
    v = np.r_[_values(rng, np.r_[cells.atoms, cells.edges], 3 * _BINNER_MIN), cells.atoms]
    small = np.concatenate([cells(v[i:i + 1000]) for i in range(0, v.size, 1000)])
    assert v.size >= _BINNER_MIN
    assert np.array_equal(cells(v), small)
    assert cells._binner is not None  # the large call did build it
