"""Float-structure events on the coordinates of vector outputs (dpaudit/estimators/floats.py,
selection.py's per-coordinate families)."""

import numpy as np

from dpaudit.estimators.floats import FloatCellRatio, fit_float_cells, has_float_structure
from dpaudit.estimators.selection import _families, choose_event
from dpaudit.outputs import OutputSchema
from dpaudit.spec import OutputKind

VECTOR = OutputSchema(OutputKind.VECTOR, length=3)


def _porous_column(n=50_000, seed=1):
    """Column 1 is float64 x + Laplace with x = 0 on D and 1 on D'; columns 0 and 2 are the same
    law on both (on the 2^-5 grid, and integers)."""
    rng = np.random.default_rng(seed)
    nu = rng.laplace(scale=10.0, size=(n, 3))
    base = np.c_[np.round(nu[:, 0] * 32) / 32, nu[:, 1], np.round(nu[:, 2])]
    yp = base.copy()
    yp[:, 1] = 1.0 + nu[:, 1]
    return base, yp


def test_a_porous_coordinate_is_found_and_named():
    yd, yp = _porous_column()
    c = choose_event(yd, yp, VECTOR, n_val=1e6, alpha=0.05)
    assert isinstance(c.event.score, FloatCellRatio) and c.event.score.coordinate == 1
    assert c.projected > 5.0
    rec = c.event.to_record()
    assert rec["kind"] == "float-structure" and rec["coordinate"] == 1 and rec["reason"] == "porosity"
    assert rec["text"].startswith("coordinate 1: outputs in ") and "mantissa" in rec["text"]
    # the event reads column 1 of whole output vectors
    inside = c.event.contains(yd if c.numerator == 0 else yp)
    assert inside.shape == (yd.shape[0],) and 0 < inside.mean() < 1
    off = choose_event(yd, yp, VECTOR, n_val=1e6, alpha=0.05, floats=False)
    assert not isinstance(off.event.score, FloatCellRatio) and off.projected < 1.0


def test_float_cells_of_a_column_equal_those_of_the_column_alone():
    yd, yp = _porous_column(4000)
    whole = fit_float_cells("trailing", yd, yp, coordinate=1)
    alone = fit_float_cells("trailing", yd[:, 1], yp[:, 1])
    assert np.array_equal(whole(yd), alone(yd[:, 1]), equal_nan=True)
    assert alone.coordinate is None and "coordinate" not in alone.to_record()
    assert whole.to_record()["coordinate"] == 1


def test_integer_and_grid_free_columns_get_no_float_families():
    yd, yp = _porous_column(4000)
    scores = [sc for sc, *_ in _families(yd, yp, VECTOR, quick=True)]
    cols = sorted(sc.coordinate for sc in scores if isinstance(sc, FloatCellRatio))
    assert cols and set(cols) == {0, 1}  # column 2 holds integers only
    none = [sc for sc, *_ in _families(yd, yp, VECTOR, quick=True, floats=False)]
    assert not any(isinstance(sc, FloatCellRatio) for sc in none)


def test_float_structure_means_a_non_integer_or_non_finite_value():
    assert not has_float_structure(np.array([0.0, -3.0, 2.0**60]))
    assert has_float_structure(np.array([0.0, 0.5]))
    assert has_float_structure(np.array([1.0, np.nan]))
    assert has_float_structure(np.array([np.inf]))
    assert not has_float_structure(np.array([], dtype=float))


def test_a_non_finite_coordinate_is_an_atom():
    rng = np.random.default_rng(4)
    yd = np.c_[rng.normal(size=4000), np.full(4000, np.nan)]
    yp = np.c_[rng.normal(size=4000), rng.normal(size=4000)]
    c = choose_event(yd, yp, OutputSchema(OutputKind.VECTOR, length=2), n_val=1e6, alpha=0.05)
    assert c.projected > 5.0
