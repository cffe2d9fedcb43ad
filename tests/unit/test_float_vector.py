"""Float-structure events on the coordinates of vector outputs (dpaudit/estimators/floats.py,
selection.py's per-coordinate families)."""

import numpy as np
import pytest

from dpaudit.estimators.floats import FloatCellRatio, fit_float_cells, has_float_structure
from dpaudit.estimators.selection import choose_event, score_families
from dpaudit.outputs import OutputSchema
from dpaudit.spec import OutputKind

VECTOR = OutputSchema(OutputKind.VECTOR, length=3)


def _porous_column(n=50_000, seed=1):
    """Column 1 is float64 x + Laplace with x = 0 on D and 1 on D'; columns 0 and 2 are the same
    law on both (on the 2^-5 grid, and integers)."""
    rng = np.random.default_rng(seed)
    nu = rng.laplace(scale=10.0, size=(n, 3))
    # (+ 0.0 turns the −0.0 that rounding gives into 0.0: a signed zero is float structure)
    base = np.c_[np.round(nu[:, 0] * 32) / 32 + 0.0, nu[:, 1], np.round(nu[:, 2]) + 0.0]
    yp = base.copy()
    yp[:, 1] = 1.0 + nu[:, 1]
    return base, yp


@pytest.mark.slow
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


def test_integer_and_grid_columns_get_no_float_families():
    yd, yp = _porous_column(4000)
    scores = [sc for sc, *_ in score_families(yd, yp, VECTOR, quick=True)]
    cols = sorted(sc.coordinate for sc in scores if isinstance(sc, FloatCellRatio))
    assert cols and set(cols) == {1}  # column 0 lies on the grid 2^-5·Z, column 2 holds integers
    none = [sc for sc, *_ in score_families(yd, yp, VECTOR, quick=True, floats=False)]
    assert not any(isinstance(sc, FloatCellRatio) for sc in none)


def test_float_structure_means_bits_finer_than_a_common_grid():
    rng = np.random.default_rng(5)
    noise = rng.laplace(scale=10.0, size=1000)
    assert has_float_structure(noise)                                  # all 53 bits in use
    assert not has_float_structure(np.round(noise) + 0.0)              # integers (+ 0.0: no −0.0)
    assert not has_float_structure(np.round(noise * 2.0**30) / 2.0**30 + 0.0)  # the grid 2^-30·Z
    assert not has_float_structure(32.0 * np.round(noise) + 0.0, np.array([100.0, -100.0]))  # snapping
    assert not has_float_structure(np.array([0.0, 0.5, 2.0**40]))
    assert has_float_structure(np.array([0.0, -0.0, 0.5, 2.0**40]))   # a signed zero: its sign bit
    assert has_float_structure(np.array([2.0**-30, 2.0**22 + 1]))      # 2^-30·Z at 2^22 needs 53 bits
    assert has_float_structure(np.array([1.0]), np.array([np.nan]))
    assert has_float_structure(np.array([np.inf]))
    assert has_float_structure(np.array([5e-324, 1.0]))                # a subnormal next to 1
    assert not has_float_structure(np.array([], dtype=float), np.zeros(3))
    # judged on the first values of each sample
    assert not has_float_structure(np.r_[np.zeros(10), noise], head=10)


def test_values_of_a_narrower_format_are_bits_worth_testing_unless_one_grid():
    rng = np.random.default_rng(6)
    noise = rng.laplace(scale=10.0, size=1000)
    assert has_float_structure(noise.astype(np.float32) + 0.0)         # float32 over many binades
    assert has_float_structure(noise.astype(np.float16) + 0.0)         # float16 likewise
    one_binade = (1.0 + rng.random(1000)).astype(np.float32) + 0.0     # [1, 2): the grid 2^-23·Z
    assert not has_float_structure(one_binade)
    assert not has_float_structure(np.round(rng.random(1000) * 2047) + 0.0)  # integers < 2^11
    assert not has_float_structure(np.round(rng.random(1000) * 2 ** 23) + 0.0)  # integers < 2^24
    assert not has_float_structure(np.array([0.0, 0.5, 2.0**40], dtype=np.float32) + 0.0)


def test_a_non_finite_coordinate_is_an_atom():
    rng = np.random.default_rng(4)
    yd = np.c_[rng.normal(size=4000), np.full(4000, np.nan)]
    yp = np.c_[rng.normal(size=4000), rng.normal(size=4000)]
    c = choose_event(yd, yp, OutputSchema(OutputKind.VECTOR, length=2), n_val=1e6, alpha=0.05)
    assert c.projected > 5.0


def test_a_signed_zero_is_float_structure_and_a_cell_of_its_own():
    """−0.0 == 0.0 as numbers, but they are different doubles: integer outputs with a −0.0 among
    them have bits worth testing, and the two zeros fall in different cells."""
    from dpaudit.estimators.floats import FloatCells

    ints = np.array([0.0, 3.0, -2.0, 7.0])
    assert not has_float_structure(ints, ints)
    assert has_float_structure(ints, np.r_[ints, -0.0])
    cells = FloatCells("trailing")
    plus, minus = cells.index(np.array([0.0, -0.0]))
    assert plus != minus and cells.is_zero(plus) and cells.is_zero(minus)
    assert not any(cells.is_zero(c) for c in cells.index(np.array([5e-324, -5e-324, 1.0, np.nan])))
    assert cells.describe_cell(plus) == "outputs equal to +0.0"
    assert cells.describe_cell(minus) == "outputs equal to −0.0"
