"""Fitted scores of long vectors (dpaudit.estimators.selection): vectors longer than
MAX_COORDINATES are fitted on the coordinates that differ most on the *fitting* half only, so the
thresholds chosen on the other half stay honest, beside a linear discriminant of every coordinate
(fitted on that half too); the coordinate events still find a moved one."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.estimators.scores import Discriminant, OnColumns
from dpaudit.estimators.selection import MAX_COORDINATES, score_families, top_coordinates, vector_families
from dpaudit.outputs import OutputSchema
from dpaudit.spec import OutputKind

D = 300


def _rows(seed: int, n: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.geometric(0.5, (n, D)) - rng.geometric(0.5, (n, D))).astype(float), \
        (rng.geometric(0.5, (n, D)) - rng.geometric(0.5, (n, D))).astype(float)


@pytest.mark.slow
def test_long_vectors_are_fitted_on_columns_screened_on_the_fitting_half():
    yd, yp = _rows(1)
    half = yd.shape[0] // 2
    yp[:half, 5] += 3.0  # a difference the fitting half shows
    fams = list(vector_families(yd, yp, quick=False))
    disc, fams = fams[0][0], fams[1:]
    assert isinstance(disc, Discriminant) and disc.weights.shape == (D,)
    assert fams
    cols = np.asarray(top_coordinates(yd[:half], yp[:half], MAX_COORDINATES))
    for sc, sd, sp, _ in fams:
        assert isinstance(sc, OnColumns) and sc.columns.size == MAX_COORDINATES
        assert np.array_equal(sc.columns, cols) and 5 in sc.columns
        rows = yd[half:] if sd.shape[0] == yd.shape[0] - half else yd  # joint scores: all rows
        assert np.array_equal(sc(rows), sd, equal_nan=True)
    # what the evaluation half shows does not change the columns
    yp2 = yp.copy()
    yp2[half:, 200] += 3.0
    again = list(vector_families(yd, yp2, quick=False))
    assert np.array_equal(again[0][0].weights, disc.weights)
    for (sc, *_), (sc2, *_) in zip(fams, again[1:]):
        assert np.array_equal(sc.columns, sc2.columns)
    assert "on coordinates" in fams[0][0].describe()


@pytest.mark.slow
def test_a_moved_coordinate_of_a_long_vector_gets_events_of_its_own():
    yd, yp = _rows(2)
    yp[:, 123] += 2.0
    schema = OutputSchema(OutputKind.VECTOR, length=D)
    coords = [sc.j for sc, *_ in score_families(yd, yp, schema, quick=False, floats=False)
              if type(sc).__name__ == "Coordinate"]
    assert 123 in coords and len(coords) <= 8


def test_short_vectors_are_fitted_on_every_coordinate():
    rng = np.random.default_rng(3)
    yd, yp = rng.normal(size=(2000, 20)), rng.normal(size=(2000, 20))
    assert not any(isinstance(sc, OnColumns) for sc, *_ in vector_families(yd, yp, quick=False))


def test_a_small_move_of_every_coordinate_is_seen_by_the_discriminant():
    """Each of 300 coordinates moves by 0.3 of its spread: no coordinate alone separates D from D',
    their sum does (about 5 standard deviations)."""
    yd, yp = _rows(5)
    yp += 0.3 * np.sqrt(2 * 2.0)  # sd of a difference of two geometric(0.5): sqrt(2·2)
    half = yd.shape[0] // 2
    disc = next(iter(vector_families(yd, yp, quick=False)))[0]
    sd, sp = disc(yd[half:]), disc(yp[half:])
    assert (sd.mean() - sp.mean()) / np.sqrt(0.5 * (sd.var() + sp.var())) > 3


def test_a_discriminant_ignores_coordinates_it_does_not_weigh():
    from dpaudit.estimators.scores import fit_discriminant

    stats = (np.array([1.0, 0.0, np.nan]), np.array([1.0, 0.0, 1.0])), (np.array([0.0, 0.0, 0.0]),
                                                                         np.array([1.0, 0.0, 1.0]))
    disc = fit_discriminant(*stats)
    assert disc.columns.tolist() == [0]  # no spread in 1, a non-finite mean in 2
    assert disc(np.array([[2.0, 5.0, np.nan]])).tolist() == [1.5]
