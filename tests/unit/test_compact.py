"""Compact vector outputs and the fast score paths give the values of the plain float paths.

Deterministic: fixed seeds; scores compared exactly where the arithmetic is the same (cells,
patterns, naive Bayes) and to 1e-12 where only the order of a sum changed (logistic).
"""

import numpy as np
import pytest

from dpaudit.estimators import scores as S  # private: _cells_of, a coordinate's cells on both paths
from dpaudit.estimators.compact import compact, per_value, row_keys
from dpaudit.estimators.logistic import fit_logistic


def _old_cells(c, v):
    """The two-search definition of a coordinate's cell (atom index, else bin after the atoms)."""
    out = np.searchsorted(c.edges, v, side="right") + c.atoms.size
    if c.atoms.size:
        i = np.clip(np.searchsorted(c.atoms, v), 0, c.atoms.size - 1)
        out = np.where(c.atoms[i] == v, i, out)
    return out


def test_compact_keeps_only_exact_small_integers():
    y = np.array([[0.0, 1.0, -1.0], [127.0, -128.0, 0.0]])
    c = compact(y)
    assert c.dtype == np.int8 and np.array_equal(c, y)
    for bad in (128.0, 0.5, np.nan, np.inf, -129.0, -0.0):  # −0.0: its sign bit is an output too
        z = y.copy()
        z[1, 1] = bad
        assert compact(z) is z
    assert compact(y[:, 0]).dtype == np.float64  # 1-D samples are left as they are


def test_per_value_and_row_keys():
    rng = np.random.default_rng(0)
    y = rng.integers(-3, 4, size=(500, 4)).astype(float)
    c = compact(y)
    f = lambda u: np.exp(u) - 2 * u  # noqa: E731
    assert np.array_equal(per_value(f, c[:, 2]), f(y[:, 2]))
    assert np.unique(row_keys(c)).size == np.unique(row_keys(y)).size


@pytest.mark.parametrize("d", [1, 4, 10, 70])
def test_int8_row_keys_partition_rows_as_their_bytes_do(d):
    """Equal keys exactly for equal rows (mixed-radix integers, or the row bytes when the radix
    product overflows an int64: d = 70 columns of 3 values)."""
    rng = np.random.default_rng(d)
    y = rng.integers(-1, 2, size=(3000, d)).astype(np.int8)
    y[::7, 0] = -128
    y[::11, -1] = 127
    k = row_keys(y)
    raw = np.ascontiguousarray(y).view(np.dtype((np.void, d))).reshape(-1)
    _, first_k, inv_k = np.unique(k, return_index=True, return_inverse=True)
    _, first_r, inv_r = np.unique(raw, return_index=True, return_inverse=True)
    assert np.array_equal(np.sort(first_k), np.sort(first_r))
    assert np.array_equal(first_k[inv_k.ravel()], first_r[inv_r.ravel()])  # same partition
    assert (k.dtype == np.int64) == (d < 40)


@pytest.mark.parametrize("seed", range(40))
def test_cells_one_search_equals_two(seed):
    rng = np.random.default_rng(seed)
    v = rng.laplace(size=3000)
    pool = np.array([-1000.0, -2000.0, 0.0, -0.0, 1.0, -np.inf, 5e-324, np.finfo(float).max, 3.5])
    atoms = rng.choice(pool, size=rng.integers(0, 5), replace=False)
    if atoms.size:
        v[rng.random(v.size) < 0.3] = rng.choice(atoms)
    for special, share in ((np.nan, 0.01), (np.inf, 0.01), (-np.inf, 0.01)):
        v[rng.random(v.size) < share] = special
    c = S._cells_of(v, 16)
    if c is None:
        return
    with np.errstate(over="ignore"):
        probe = np.r_[v, atoms, np.nextafter(atoms, np.inf), np.nextafter(atoms, -np.inf), c.edges,
                      np.nextafter(c.edges, -np.inf), -0.0]
    assert np.array_equal(c(probe), _old_cells(c, probe))


@pytest.mark.parametrize("seed", range(5))
def test_cell_patterns_as_integers_equal_rows(seed):
    rng = np.random.default_rng(seed)
    d = 6
    yd = np.where(rng.random((4000, d)) < 0.5, -1000.0, rng.laplace(size=(4000, d)) + 0.3)
    yp = np.where(rng.random((4000, d)) < 0.5, -1000.0, rng.laplace(size=(4000, d)))
    yd[:, 2] = yp[:, 2] = 7.0
    sc = S.fit_cell_patterns(yd, yp)
    probe = S.CellPatternRatio(sc.cells, S.PatternRatio(np.zeros((0, d)), np.zeros(0)))
    ref = S.fit_patterns(probe.codes(yd), probe.codes(yp))
    assert np.array_equal(ref.patterns, sc.inner.patterns) and np.array_equal(ref.llr, sc.inner.llr)
    z = np.where(rng.random((3000, d)) < 0.5, -1000.0, 2 * rng.laplace(size=(3000, d)))
    assert np.array_equal(sc(z), ref(probe.codes(z)), equal_nan=True)
    assert S.fit_cell_patterns(yd, yp, max_patterns=3) is None


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_scores_equal_on_int8_and_float(seed):
    rng = np.random.default_rng(seed)
    d = 7
    yd = rng.choice([-1.0, 0.0, 1.0, 3.0], p=[0.2, 0.5, 0.2, 0.1], size=(6000, d))
    yp = rng.choice([-1.0, 0.0, 1.0, 3.0], p=[0.3, 0.4, 0.2, 0.1], size=(6000, d))
    yd[:, 1] = yp[:, 1] = 2.0
    cd, cp = compact(yd), compact(yp)
    z = rng.choice([-1.0, 0.0, 1.0, 3.0, 5.0], size=(3000, d))
    cz = compact(z)
    for fit in (S.fit_naive_bayes, S.fit_cell_patterns, S.fit_patterns, fit_logistic):
        a, b = fit(yd, yp), fit(cd, cp)
        assert a.to_record() == b.to_record()
        exact = fit is not fit_logistic
        for sc in (a, b):
            if exact:
                assert np.array_equal(sc(z), sc(cz), equal_nan=True)
            else:
                np.testing.assert_allclose(sc(z), sc(cz), rtol=1e-12, atol=1e-12)
    pr = S.fit_patterns(yd, yp)
    assert np.array_equal(pr(cz), S.lookup(S.row_bytes(pr.patterns), pr.llr, S.row_bytes(z)), equal_nan=True)


@pytest.mark.parametrize("seed", range(5))
def test_logistic_score_equals_feature_product(seed):
    rng = np.random.default_rng(seed)
    d = 5
    yd = np.where(rng.random((5000, d)) < 0.3, -1000.0, rng.laplace(size=(5000, d)) + 0.3)
    yp = np.where(rng.random((5000, d)) < 0.3, -1000.0, rng.laplace(size=(5000, d)))
    yd[rng.random((5000, d)) < 0.05] = np.nan
    yp[rng.random((5000, d)) < 0.02] = np.inf
    lg = fit_logistic(yd, yp)
    z = np.where(rng.random((3000, d)) < 0.3, -1000.0, rng.laplace(size=(3000, d)))
    z[rng.random((3000, d)) < 0.05] = np.nan
    z[rng.random((3000, d)) < 0.05] = -np.inf
    np.testing.assert_allclose(lg(z), lg.features(z) @ lg.weights + lg.bias, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_joint_pattern_ids_as_integers_equal_rows(seed):
    from dpaudit.estimators import joint as J
    from dpaudit.estimators.structure import fit_pattern_counts

    rng = np.random.default_rng(seed)
    d, n = 6, 4000
    codes = lambda size, p: np.where(rng.random(size) < p, rng.choice([-1000.0, -2000.0], size=size),  # noqa: E731
                                     rng.laplace(size=size))
    yd, yp = codes((n, d), 0.4), codes((n, d), 0.5)
    yd[rng.random((n, d)) < 0.05] = np.nan
    pats = fit_pattern_counts(yd, yp, J.fit_structure(np.concatenate([yd, yp])))
    z = codes((3000, d), 0.4)
    z[rng.random((3000, d)) < 0.05] = np.nan
    z[rng.random((3000, d)) < 0.05] = 5.0
    ids, sig = pats.ids(z)
    rows = S.lookup(pats.keys, np.arange(pats.keys.size, dtype=float), S.row_bytes(sig))
    assert np.array_equal(ids, rows, equal_nan=True)


@pytest.mark.parametrize("seed", range(6))
def test_byte_tables_equal_the_sorted_tables(seed):
    """The one-pass tables of int8 scores equal the tables sorting the same values as floats
    gives (thresholds, counts of D, D' and of pairs, every side), on few and on many values."""
    from dpaudit.estimators.selection import _tables  # private: the byte and float count paths

    rng = np.random.default_rng(seed)
    n = 5000
    spread = [3, 40, 256][seed % 3]
    sd = rng.integers(-128, -128 + spread, n).astype(np.int8)
    sp = np.where(rng.random(n) < 0.5, sd, rng.integers(-128, -128 + spread, n)).astype(np.int8)
    for g, gi, iv in [(1500, 120, True), (16, 6, True), (20, 8, False)]:
        fast = list(_tables(sd, sp, g, gi, iv))
        slow = list(_tables(sd.astype(float), sp.astype(float), g, gi, iv))
        assert [t.side for t in fast] == [t.side for t in slow] and fast
        for a, b in zip(fast, slow):
            for f in ("lo", "hi", "x", "y", "a"):
                np.testing.assert_array_equal(getattr(a, f).astype(float), getattr(b, f).astype(float))


def test_coordinates_of_int8_rows_from_histograms():
    """The coordinates whose laws differ most are the same whether the rows are int8 (counted
    in histograms) or floats, and the column statistics agree to 1e-12."""
    from dpaudit.estimators.selection import _column_stats  # private: the int8 and float statistics paths
    from dpaudit.estimators.selection import top_coordinates

    rng = np.random.default_rng(5)
    shift = np.linspace(0.2, 0.8, 12)
    yd = (rng.random((20_000, 12)) < shift).astype(np.int8) - (rng.random((20_000, 12)) < 0.1)
    yp = (rng.random((20_000, 12)) < 0.5).astype(np.int8) - (rng.random((20_000, 12)) < 0.1)
    yd, yp = yd.astype(np.int8), yp.astype(np.int8)
    assert top_coordinates(yd, yp) == top_coordinates(yd.astype(float), yp.astype(float))
    for a, b in zip(_column_stats(yd, yd[0]), _column_stats(yd.astype(float), yd[0].astype(float))):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_column_stats_of_float_rows_one_column_at_a_time():
    from dpaudit.estimators.selection import _column_stats  # private: the blockwise statistics path

    rng = np.random.default_rng(6)
    y = np.where(rng.random((30_000, 7)) < 0.3, -1000.0, rng.laplace(size=(30_000, 7)))
    y[::97, 2] = np.nan
    for got, want in zip(_column_stats(y, y[0]),
                         (y.mean(axis=0), y.var(axis=0), (y == y[0]).mean(axis=0))):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_logistic_fit_with_all_zero_features_left_out_of_the_hessian():
    """Bits (RAPPOR-like rows: every coordinate takes only its flagged values, so its 'other
    values' feature is 0 on every row): the weights equal a fit with the full Hessian to 1e-10."""
    from scipy import optimize
    from scipy.special import expit

    from dpaudit.estimators.logistic import RIDGE

    rng = np.random.default_rng(8)
    yd = (rng.random((5000, 6)) < np.linspace(0.3, 0.7, 6)).astype(float)
    yp = (rng.random((5000, 6)) < 0.5).astype(float)
    got = fit_logistic(yd, yp)
    x = got.features(np.concatenate([yd, yp]))
    assert (~np.any(x != 0, axis=0)).sum() == 6  # one dead feature per coordinate
    t = np.r_[np.ones(5000), np.zeros(5000)]
    xb = np.column_stack([x, np.ones(x.shape[0])])
    ridge = np.r_[np.full(x.shape[1], 2 * RIDGE), 0.0]

    def loss(theta):
        z = xb @ theta
        w = theta[:-1]
        g = expit(z) - t
        return (np.mean(np.logaddexp(0.0, z) - t * z) + RIDGE * (w @ w),
                xb.T @ g / len(t) + ridge * theta)

    def hess(theta):
        p = expit(xb @ theta)
        return (xb * (p * (1 - p))[:, None]).T @ xb / len(t) + np.diag(ridge)

    ref = optimize.minimize(loss, np.zeros(xb.shape[1]), jac=True, hess=hess, method="trust-exact",
                            options={"maxiter": 30, "gtol": 1e-6}).x
    np.testing.assert_allclose(np.r_[got.weights, got.bias], ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("nan", [False, True])
def test_float_tables_equal_counting_every_event(nan):
    """Every table entry of a float score equals a direct count: #{s_D in S}, #{s_D' in S} and
    the pairs with both in S (with and without NaN scores, which lie in no event)."""
    from dpaudit.estimators.selection import _tables  # private: the byte and float count paths

    rng = np.random.default_rng(12)
    sd = np.round(rng.laplace(size=3000), 1)
    sp = np.where(rng.random(3000) < 0.4, sd, np.round(rng.laplace(0.3, size=3000), 1))
    sd[:3], sp[-2:] = np.inf, -np.inf
    if nan:
        sd[rng.random(3000) < 0.05] = np.nan
    tabs = list(_tables(sd, sp, 200, 30, True))
    assert [t.side for t in tabs] == ["above", "below", "interval"]
    with np.errstate(invalid="ignore"):
        for t in tabs:
            for k in range(0, t.x.size, 7):  # as Event.holds: "above" is s ≥ lo, "below" s < hi
                ind = (sd >= t.lo[k]) & ((sd < t.hi[k]) | (t.side == "above"))
                inp = (sp >= t.lo[k]) & ((sp < t.hi[k]) | (t.side == "above"))
                assert (t.x[k], t.y[k], t.a[k]) == (ind.sum(), inp.sum(), (ind & inp).sum())


@pytest.mark.parametrize("seed", range(4))
def test_cells_from_sorted_values_equal_the_quantiles_of_the_values(seed):
    """Atoms and quantile edges of a coordinate's cells, the quantiles taken on the sorted
    non-atom values, equal those of the values in drawing order (atoms, NaN, few values)."""
    from dpaudit.estimators.scores import _cells_of  # private: a coordinate's cells, two ways

    rng = np.random.default_rng(seed)
    v = rng.laplace(size=20_000)
    v[rng.random(v.size) < 0.3] = -1000.0
    if seed % 2:
        v[rng.random(v.size) < 0.02] = np.nan
    if seed == 2:
        v = rng.integers(0, 30, v.size).astype(float)
    vals, counts = np.unique(v, return_counts=True)
    atoms = vals if vals.size <= 64 else vals[counts >= max(20, 0.01 * v.size)]
    rest = v[~np.isin(v, atoms)] if atoms.size else v
    nb = int(np.clip(np.sqrt(rest.size) / 4, 2, 32))
    edges = np.unique(np.quantile(rest, np.linspace(0, 1, nb + 1)[1:-1])) if rest.size else np.empty(0)
    c = _cells_of(v, 32)
    np.testing.assert_array_equal(c.atoms, atoms)
    np.testing.assert_array_equal(c.edges, edges)


def test_cell_fits_from_shared_pooled_cells_equal_their_own():
    """Naive Bayes and the cell-pattern ratio fitted on cells computed once for both equal the
    fits that compute their own cells."""
    from dpaudit.estimators.scores import fit_cell_patterns, fit_naive_bayes, pooled_cells

    rng = np.random.default_rng(13)
    yd = np.where(rng.random((4000, 3)) < 0.2, -1000.0, rng.laplace(size=(4000, 3)))
    yp = np.where(rng.random((4000, 3)) < 0.3, -1000.0, rng.laplace(0.2, size=(4000, 3)))
    yd[:, 2] = 1.0
    yp[:, 2] = 1.0  # a constant column: no cells
    cells = pooled_cells(yd, yp, (16, 32))
    a, b = fit_naive_bayes(yd, yp, 32, cells=tuple(c[1] for c in cells)), fit_naive_bayes(yd, yp, 32)
    ev = np.concatenate([yd, yp])
    np.testing.assert_array_equal(a(ev), b(ev))
    a = fit_cell_patterns(yd, yp, 16, max_patterns=4000, cells=tuple(c[0] for c in cells))
    b = fit_cell_patterns(yd, yp, 16, max_patterns=4000)
    np.testing.assert_array_equal(a(ev), b(ev))
    assert cells[2] == (None, None)


@pytest.mark.parametrize("method", ["ratio", "paired", "marginal"])
def test_projected_bounds_of_many_events_at_once_equal_one_at_a_time(method):
    """The honest re-projection projects its shortlist in one call per (method, split): each
    event's value equals its own call."""
    from dpaudit.estimators.bounds import SPLITS, projected_lb

    rng = np.random.default_rng(14)
    x = rng.integers(0, 5000, 40)
    y = rng.integers(0, 5000, 40)
    a = np.minimum(x, y) // 2
    split = SPLITS[method][0]
    together = projected_lb(method, 20_000, x, y, a, 1e6, 0.01, split, 0.0, pessimism=2.0)
    alone = [float(projected_lb(method, 20_000, [xi], [yi], [ai], 1e6, 0.01, split, 0.0,
                                pessimism=2.0)[0]) for xi, yi, ai in zip(x, y, a)]
    np.testing.assert_array_equal(together, alone)
