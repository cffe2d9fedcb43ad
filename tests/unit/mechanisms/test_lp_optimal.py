"""Optimal mechanisms by LP (S1 OPT1/OPT2) and the universality of the geometric (Ghosh et al. 2009;
Gupte and Sundararajan 2010): every check is an exact comparison of optimisation values."""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.errors import InvalidArgument
from dpaudit.reference.analysis import lp_optimal as lp
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.staircase import Staircase


def priors(n):
    i = np.arange(n + 1)
    skew = 0.6 ** i
    point = np.full(n + 1, 0.1 / n)
    point[n // 3] = 0.9
    return {"uniform": np.full(n + 1, 1 / (n + 1)), "binomial": stats.binom.pmf(i, n, 0.3),
            "skewed": skew / skew.sum(), "point-heavy": point}


def tol(v):
    return 1e-8 * max(1.0, v)


@pytest.mark.parametrize("n", [1, 3, 8])
@pytest.mark.parametrize("eps", [0.4, 1.6])
def test_geometric_with_bayes_remap_reaches_opt1(n, eps):
    """Ghosh, Roughgarden and Sundararajan 2009, Thm 1.2: for every prior and loss monotone in |i − j|."""
    for name, p in priors(n).items():
        for loss in lp.LOSSES:
            L = lp.loss_matrix(n, loss)
            opt = lp.solve_optimal(n, eps, loss, p)
            _, Z = lp.bayes_remap(lp.geometric_cells(n, eps), p, L)
            assert lp.bayes_risk(Z, p, L) == pytest.approx(opt.value, abs=tol(opt.value)), (name, loss)
            assert lp.bayes_risk(opt.matrix, p, L) == pytest.approx(opt.value, abs=tol(opt.value))


def test_lp_solution_is_a_dp_mechanism():
    n, eps = 6, 0.8
    opt = lp.solve_optimal(n, eps, "squared", priors(n)["skewed"])
    x = opt.matrix
    np.testing.assert_allclose(x.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(x[:-1] <= math.exp(eps) * x[1:] + 1e-9) and np.all(x[1:] <= math.exp(eps) * x[:-1] + 1e-9)
    assert lp.dp_loss_of_matrix(lp.geometric_cells(n, eps)) == pytest.approx(eps)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_laplace_and_staircase_fall_short_of_opt1(eps):
    n = 6
    for name, p in priors(n).items():
        L = lp.loss_matrix(n, "abs")
        opt = lp.solve_optimal(n, eps, "abs", p).value
        lap, sc = Laplace(eps), Staircase(eps)
        _, Zl = lp.bayes_remap(lp.laplace_bayes_cells(lap, n, p, L), p, L)
        _, Zs = lp.bayes_remap(lp.staircase_cells(sc, n), p, L)
        for Z, rounded in ((Zl, lp.rounding_cells(lap, n)), (Zs, lp.rounding_cells(sc, n))):
            np.testing.assert_allclose(Z.sum(axis=1), 1.0, atol=1e-12)
            assert lp.dp_loss_of_matrix(Z) <= eps + 1e-9                  # post-processing keeps ε
            assert opt - tol(opt) <= lp.bayes_risk(Z, p, L) <= lp.bayes_risk(rounded, p, L) + 1e-12
            if name == "uniform":   # (with a point-heavy prior at small ε, all reach the constant answer)
                assert lp.bayes_risk(Z, p, L) > opt + 1e-3


def test_laplace_bayes_cells_are_exact():
    """A finer uniform partition can only reach the exact Bayes remap, never beat it."""
    n, eps = 4, 1.0
    p = priors(n)["binomial"]
    L = lp.loss_matrix(n, "squared")
    lap = Laplace(eps)
    _, exact = lp.bayes_remap(lp.laplace_bayes_cells(lap, n, p, L), p, L)
    _, grid = lp.bayes_remap(lp.laplace_grid_cells(lap, n, per_unit=2000), p, L)
    assert lp.bayes_risk(exact, p, L) <= lp.bayes_risk(grid, p, L) + 1e-12
    assert lp.bayes_risk(grid, p, L) - lp.bayes_risk(exact, p, L) < 1e-6


@pytest.mark.parametrize("n, eps, loss", [(3, 0.5, "abs"), (5, 2.0, "squared"), (6, 1.0, "binary")])
def test_geometric_with_randomised_remap_reaches_opt2(n, eps, loss):
    """Gupte and Sundararajan 2010: a (randomised) remap of the geometric is minimax-optimal."""
    L = lp.loss_matrix(n, loss)
    opt = lp.solve_optimal(n, eps, loss, objective="minimax")
    assert lp.worst_case_risk(opt.matrix, L) == pytest.approx(opt.value, abs=tol(opt.value))
    rem = lp.minimax_remap(lp.geometric_cells(n, eps), L)
    assert rem.optimal and rem.value == pytest.approx(opt.value, abs=tol(opt.value))


def test_a_deterministic_remap_of_the_geometric_is_not_minimax_optimal():
    """Relaxation: interior outputs 0/1, the two tails (many atoms of ℤ) randomised: a lower bound on
    every deterministic remap of the geometric on ℤ, and it is above OPT2."""
    n, eps = 5, 2.0
    L = lp.loss_matrix(n, "squared")
    opt = lp.solve_optimal(n, eps, "squared", objective="minimax").value
    G = lp.geometric_cells(n, eps)
    mask = np.r_[False, np.ones(n - 1, bool), False]
    relaxed = lp.minimax_remap(G, L, deterministic=mask)
    full = lp.minimax_remap(lp.geometric_z_cells(n, eps, 6), L, deterministic=True)
    assert relaxed.optimal and full.optimal
    assert opt + 1e-4 < relaxed.lower_bound <= full.value + 1e-9


def test_staircase_cells_are_a_complete_partition():
    for g in (None, 0.0, 0.3):
        C = lp.staircase_cells(Staircase(0.7, 1.0, g), 4)
        np.testing.assert_allclose(C.sum(axis=1), 1.0, atol=1e-12)
    C = lp.geometric_z_cells(4, 0.7, 5)
    np.testing.assert_allclose(C.sum(axis=1), 1.0, atol=1e-12)


def test_bad_inputs():
    with pytest.raises(InvalidArgument, match="^loss must be one of abs, squared, binary"):
        lp.loss_matrix(3, "hinge")
    with pytest.raises(InvalidArgument, match="^prior must be 4 non-negative numbers summing to 1"):
        lp.solve_optimal(3, 1.0, "abs", [0.5, 0.5])
    with pytest.raises(InvalidArgument, match="^objective must be 'bayes'"):
        lp.solve_optimal(3, 1.0, "abs", objective="maximin")
    with pytest.raises(InvalidArgument, match="^n must be an integer >= 1"):
        lp.solve_optimal(0, 1.0)
    with pytest.raises(InvalidArgument, match="^noise.sensitivity must be 1"):
        lp.staircase_cells(Staircase(1.0, 2.0), 3)
