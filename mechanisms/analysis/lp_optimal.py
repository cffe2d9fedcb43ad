"""Optimal ε-DP mechanisms for a count query by linear programming (Chen, Pal and Golubchik (2016) OPT1 and OPT2).

A mechanism for a count on {0..n} is a row-stochastic matrix x[i, j] = P(output j | true count i).
It is ε-DP iff x[i, j] ≤ e^ε x[i+1, j] and x[i+1, j] ≤ e^ε x[i, j] for all i < n and j (Chen, Pal and Golubchik (2016) §2.1).
With a loss l(i, j) (``"abs"`` |i − j|, ``"squared"`` (i − j)², ``"binary"`` [i ≠ j]):

* OPT1 (Bayesian, Chen, Pal and Golubchik (2016) eq (4)): minimise Σ_i p_i Σ_j x[i, j] l(i, j) for a prior p;
* OPT2 (risk-averse / minimax, Chen, Pal and Golubchik (2016) eq (5)): minimise max_i Σ_j x[i, j] l(i, j), written with an
  epigraph variable t: Σ_j x[i, j] l(i, j) ≤ t for every i.

Both are solved with ``scipy.optimize.linprog`` (HiGHS). Reference mechanisms are compared through
*cells*: a mechanism M followed by a remap is described by a matrix C[i, c] = P(M(i) ∈ cell c)
(rows sum to 1) whose cells are so fine that the optimal remap is constant on each. Then

* the Bayes-optimal remap sends cell c to argmin_j Σ_i p_i C[i, c] l(i, j) (exact);
* the minimax-optimal remap is an LP over row-stochastic Y[c, j] (randomised), or a MILP over
  0/1 Y (deterministic, ``scipy.optimize.milp``).

Cells used: the truncated geometric's outputs {0..n} (outputs beyond 0 or n carry the same
posterior, Ghosh, Roughgarden and Sundararajan 2009, §2); for the staircase the cells between the
points ℤ ∪ (ℤ + γ) ∪ (ℤ + 1 − γ) of [0, n] plus one period of each tail, weighted by 1/(1 − ρ)
(the density pattern repeats with factor ρ per period); for Laplace with a Bayes remap the unit
cells split at the points where the Bayes decision changes (within (m, m + 1) the risk of j is
e^{−εy}A_j + e^{εy}B_j, so two decisions swap at most once), and for a minimax remap a uniform
refinement (an upper bound on its optimum, which is stated as such).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Union

import numpy as np
from scipy import optimize, sparse

from dpaudit.claims import check_epsilon, check_size
from dpaudit.errors import InvalidArgument, DpauditError
from ..laplace import Laplace
from ..staircase import Staircase

__all__ = [
    "LOSSES", "loss_matrix", "check_prior", "LPResult", "solve_optimal", "dp_loss_of_matrix",
    "bayes_risk", "worst_case_risk", "geometric_cells", "geometric_z_cells", "rounding_cells", "staircase_cells",
    "laplace_bayes_cells", "laplace_grid_cells", "bayes_remap", "minimax_remap", "MinimaxRemap",
]

LOSSES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "abs": lambda i, j: np.abs(i - j).astype(float),
    "squared": lambda i, j: ((i - j) ** 2).astype(float),
    "binary": lambda i, j: (i != j).astype(float),
}


def loss_matrix(n: int, loss: Union[str, Callable]) -> np.ndarray:
    """L[i, j] = l(i, j) on {0..n}²; ``loss`` is a name in :data:`LOSSES` or a vectorised callable."""
    n = check_size(n, "n")
    f = LOSSES.get(loss) if isinstance(loss, str) else loss
    if f is None or not callable(f):
        raise InvalidArgument.bad("loss", loss, f"one of {', '.join(LOSSES)} or a callable l(i, j)")
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    L = np.asarray(f(i, j), dtype=float)
    if L.shape != (n + 1, n + 1) or not np.all(np.isfinite(L)) or np.any(L < 0):
        raise InvalidArgument.bad("loss", loss, "finite and >= 0 on {0..n}²")
    return L


def check_prior(prior: Any, n: int) -> np.ndarray:
    """A prior on {0..n}: n + 1 non-negative numbers summing to 1 (to 1e-9); None means uniform."""
    if prior is None:
        return np.full(n + 1, 1.0 / (n + 1))
    p = np.asarray(prior, dtype=float).reshape(-1)
    if p.size != n + 1 or not np.all(np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1) > 1e-9:
        raise InvalidArgument.bad("prior", prior, f"{n + 1} non-negative numbers summing to 1")
    return p


def bayes_risk(Z: np.ndarray, prior: np.ndarray, L: np.ndarray) -> float:
    """Σ_i p_i Σ_j Z[i, j] l(i, j) (Chen, Pal and Golubchik (2016) eq (4))."""
    return float(np.sum(prior[:, None] * Z * L))


def worst_case_risk(Z: np.ndarray, L: np.ndarray) -> float:
    """max_i Σ_j Z[i, j] l(i, j) (Chen, Pal and Golubchik (2016) eq (5))."""
    return float(np.max(np.sum(Z * L, axis=1)))


def dp_loss_of_matrix(Z: np.ndarray) -> float:
    """max over adjacent counts i, i+1 and outputs j of |ln Z[i, j] − ln Z[i+1, j]| (0/0 counts as 0)."""
    a, b = Z[:-1], Z[1:]
    both = (a <= 0) & (b <= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.abs(np.log(a) - np.log(b))
    d = np.where(both, 0.0, d)
    return float(np.nanmax(np.where(np.isnan(d), np.inf, d))) if d.size else 0.0


# -- the LPs ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LPResult:
    """An optimal mechanism: ``matrix`` x[i, j], its ``value`` (the objective), and the solver's word."""

    objective: str
    value: float
    matrix: np.ndarray
    epsilon: float
    message: str


def _dp_rows(n: int, m: int, eps: float, offset: int = 0) -> sparse.csr_matrix:
    """Rows x[i, j] − e^ε x[i+1, j] ≤ 0 and x[i+1, j] − e^ε x[i, j] ≤ 0 over (n + 1) × m variables."""
    e = math.exp(eps)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a, b = (i * m + j).ravel(), ((i + 1) * m + j).ravel()
    r = np.arange(a.size)
    rows = np.concatenate([r, r, r + a.size, r + a.size])
    cols = np.concatenate([a, b, b, a]) + offset
    vals = np.concatenate([np.ones(a.size), -e * np.ones(a.size), np.ones(a.size), -e * np.ones(a.size)])
    return sparse.csr_matrix((vals, (rows, cols)), shape=(2 * a.size, offset + (n + 1) * m))


def _stochastic_rows(rows: int, cols: int, extra: int = 0) -> sparse.csr_matrix:
    """Σ_j y[r, j] = 1 for every row r of a rows × cols variable block (plus ``extra`` columns)."""
    r = np.repeat(np.arange(rows), cols)
    return sparse.csr_matrix((np.ones(rows * cols), (r, np.arange(rows * cols))),
                             shape=(rows, rows * cols + extra))


def _solve(c, A_ub, b_ub, A_eq, b_eq, what: str, integrality=None, time_limit: float = 60.0):
    """HiGHS via linprog (LP) or milp (MILP). A MILP stopped by its time limit is returned with its
    incumbent; the caller reads ``mip_dual_bound`` for a valid lower bound."""
    if integrality is None:
        res = optimize.linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None),
                               method="highs", options={"primal_feasibility_tolerance": 1e-10,
                                                        "dual_feasibility_tolerance": 1e-10})
        ok = res.status == 0
    else:
        cons = [optimize.LinearConstraint(A_ub, -np.inf, b_ub), optimize.LinearConstraint(A_eq, b_eq, b_eq)]
        ub = np.where(integrality == 1, 1.0, np.inf)
        res = optimize.milp(c, constraints=cons, integrality=integrality, bounds=optimize.Bounds(0, ub),
                            options={"mip_rel_gap": 1e-9, "time_limit": time_limit})
        ok = res.status in (0, 1)
    if res.x is None or not ok:
        raise DpauditError(f"{what}: the solver did not finish: {res.message}")
    return res


def solve_optimal(n: int, epsilon: float, loss: Union[str, Callable] = "abs", prior: Any = None,
                  objective: str = "bayes") -> LPResult:
    """The optimal ε-DP mechanism on {0..n} for OPT1 (``"bayes"``, with ``prior``; uniform if None)
    or OPT2 (``"minimax"``, prior ignored), by HiGHS (module docstring)."""
    n, eps = check_size(n, "n"), check_epsilon(epsilon)
    if n < 1:
        raise InvalidArgument.bad("n", n, "an integer >= 1")
    L = loss_matrix(n, loss)
    N = (n + 1) ** 2
    if objective == "bayes":
        p = check_prior(prior, n)
        c = (p[:, None] * L).ravel()
        A_ub, b_ub = _dp_rows(n, n + 1, eps), np.zeros(2 * n * (n + 1))
        A_eq = _stochastic_rows(n + 1, n + 1)
    elif objective == "minimax":
        c = np.zeros(N + 1)
        c[-1] = 1.0
        dp = _dp_rows(n, n + 1, eps)
        dp = sparse.hstack([dp, sparse.csr_matrix((dp.shape[0], 1))])
        risk = sparse.hstack([sparse.block_diag([L[i][None, :] for i in range(n + 1)]),
                              -np.ones((n + 1, 1))])
        A_ub = sparse.vstack([dp, risk]).tocsr()
        b_ub = np.zeros(A_ub.shape[0])
        A_eq = _stochastic_rows(n + 1, n + 1, extra=1)
    else:
        raise InvalidArgument.bad("objective", objective, "'bayes' (OPT1) or 'minimax' (OPT2)")
    res = _solve(c, A_ub, b_ub, A_eq, np.ones(n + 1), f"OPT {objective}")
    x = np.clip(res.x[:N].reshape(n + 1, n + 1), 0.0, None)
    return LPResult(objective, float(res.fun), x, eps, str(res.message))


# -- remaps ---------------------------------------------------------------------------------------------
def bayes_remap(C: np.ndarray, prior: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Bayes-optimal deterministic remap of cells: (j*(c), Z = C·onehot(j*)), exact."""
    risk = (prior[:, None] * C).T @ L                 # [c, j] = Σ_i p_i C[i, c] l(i, j)
    choice = np.argmin(risk, axis=1)
    Z = np.zeros((C.shape[0], L.shape[1]))
    np.add.at(Z.T, choice, C.T)
    return choice, Z


@dataclass(frozen=True, slots=True)
class MinimaxRemap:
    """A minimax remap: its worst-case risk ``value`` and the remapped ``matrix`` Z = C·Y.

    ``lower_bound`` is a proven lower bound on the best value over the remaps allowed (equal to
    ``value`` when ``optimal``; a MILP stopped by its time limit gives HiGHS's dual bound).
    """

    value: float
    lower_bound: float
    matrix: np.ndarray
    optimal: bool
    message: str


def minimax_remap(C: np.ndarray, L: np.ndarray, deterministic: Any = False,
                  time_limit: float = 60.0) -> MinimaxRemap:
    """The remap Y[c, j] minimising max_i Σ_j (C·Y)[i, j] l(i, j): an LP over row-stochastic Y
    (randomised), or a MILP where ``deterministic`` (True, or a boolean mask over the cells) forces
    those cells' rows of Y to be 0/1 (HiGHS, at most ``time_limit`` seconds)."""
    C, L = np.asarray(C, dtype=float), np.asarray(L, dtype=float)
    rows, cells = C.shape
    m = L.shape[1]
    if L.shape[0] != rows:
        raise InvalidArgument(f"C has {rows} inputs but L has {L.shape[0]} rows")
    N = cells * m
    risk = (C[:, :, None] * L[:, None, :]).reshape(rows, N)      # Σ_c Σ_j C[i,c] Y[c,j] L[i,j]
    A_ub = sparse.csr_matrix(np.hstack([risk, -np.ones((rows, 1))]))
    A_eq = _stochastic_rows(cells, m, extra=1)
    c = np.zeros(N + 1)
    c[-1] = 1.0
    integrality = None
    mask = np.broadcast_to(np.asarray(deterministic, dtype=bool), (cells,))
    if mask.any():
        integrality = np.zeros(N + 1)
        integrality[:N] = np.repeat(mask, m)
    res = _solve(c, A_ub, np.zeros(rows), A_eq, np.ones(cells), "minimax remap", integrality, time_limit)
    Y = np.clip(res.x[:N].reshape(cells, m), 0.0, None)
    Z = C @ Y
    value = worst_case_risk(Z, L)
    optimal = res.status == 0
    lower = value if optimal else float(getattr(res, "mip_dual_bound", -np.inf))
    return MinimaxRemap(value, min(lower, value), Z, optimal, str(res.message))


# -- cells of the reference mechanisms ----------------------------------------------------------------
def geometric_cells(n: int, epsilon: float) -> np.ndarray:
    """The truncated geometric G[i, r] on {0..n}: c·ρ^{|r−i|} inside, ρ^i/(1+ρ) at 0, ρ^{n−i}/(1+ρ) at n."""
    n, eps = check_size(n, "n"), check_epsilon(epsilon)
    i, r = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    rho = math.exp(-eps)
    G = (1 - rho) / (1 + rho) * rho ** np.abs(r - i)
    G[:, 0] = rho ** np.arange(n + 1) / (1 + rho)
    G[:, n] = rho ** (n - np.arange(n + 1)) / (1 + rho)
    if n == 0:
        G[:, 0] = 1.0
    return G


def geometric_z_cells(n: int, epsilon: float, reach: int) -> np.ndarray:
    """The untruncated geometric i + K on ℤ as cells: outputs −reach..n + reach one by one, and the two
    remaining tails pooled (so a remap of these cells is a remap of ℤ constant on each tail)."""
    n, eps, reach = check_size(n, "n"), check_epsilon(epsilon), check_size(reach, "reach")
    rho = math.exp(-eps)
    i = np.arange(n + 1)[:, None]
    r = np.arange(-reach, n + reach + 1)[None, :]
    inner = (1 - rho) / (1 + rho) * rho ** np.abs(r - i)
    left = rho ** (reach + 1 + i) / (1 + rho)
    right = rho ** (n + reach + 1 - i) / (1 + rho)
    return np.hstack([left, inner, right])


def _interval_probs(noise: Any, lo: np.ndarray, hi: np.ndarray, n: int) -> np.ndarray:
    """C[i, c] = P(lo_c < i + Z ≤ hi_c) for symmetric continuous ``noise``, stable in both tails."""
    i = np.arange(n + 1)[:, None]
    a, b = lo[None, :] - i, hi[None, :] - i
    right = noise.sf(np.maximum(a, 0)) - noise.sf(np.maximum(b, 0))     # part on (0, ∞)
    left = noise.cdf(np.minimum(b, 0)) - noise.cdf(np.minimum(a, 0))    # part on (−∞, 0]
    return np.clip(right, 0, None) + np.clip(left, 0, None)


def rounding_cells(noise: Any, n: int) -> np.ndarray:
    """Chen, Pal and Golubchik (2016)'s remap (Chen, Pal and Golubchik (2016) §4.2.3): round i + Z to the nearest integer, clamped to {0..n}."""
    edges = np.concatenate([[-np.inf], np.arange(n) + 0.5, [np.inf]])
    return _interval_probs(noise, edges[:-1], edges[1:], n)


def staircase_cells(noise: Staircase, n: int) -> np.ndarray:
    """Cells on which every f(y − i) is constant (Δ = 1): exact for any remap (module docstring)."""
    if noise.sensitivity != 1.0:
        raise InvalidArgument.bad("noise.sensitivity", noise.sensitivity, "1 for a count query")
    g = noise.gamma
    base = np.concatenate([np.arange(-1, n + 1), np.arange(-1, n + 1) + g, np.arange(-1, n + 1) + 1 - g])
    pts = np.unique(np.concatenate([base, [n + 1.0]]))
    pts = pts[(pts >= -1) & (pts <= n + 1)]
    lo, hi = pts[:-1], pts[1:]
    C = _interval_probs(noise, lo, hi, n)
    tail = (hi <= 0) | (lo >= n)
    C[:, tail] /= -math.expm1(-noise.epsilon)           # Σ_m ρ^m over the repeated periods
    return C


def laplace_grid_cells(noise: Laplace, n: int, per_unit: int = 64) -> np.ndarray:
    """Uniform cells of width 1/per_unit on [0, n] plus the two tails (a restriction of the remaps)."""
    pts = np.concatenate([[-np.inf], np.linspace(0, n, n * check_size(per_unit, "per_unit") + 1), [np.inf]])
    return _interval_probs(noise, pts[:-1], pts[1:], n)


def laplace_bayes_cells(noise: Laplace, n: int, prior: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Cells of ℝ on which the Bayes decision for Laplace noise (Δ = 1) is constant (exact).

    On (m, m + 1), with y' = y − m, Σ_i p_i f(y − i) l(i, j) ∝ e^{−εy'}A_j + e^{εy'}B_j where
    A_j = Σ_{i≤m} p_i e^{−ε(m−i)} l(i, j) and B_j = Σ_{i>m} p_i e^{−ε(i−m)} l(i, j); decisions j, j'
    swap only at e^{2εy'} = (A_j − A_j')/(B_j' − B_j). Both tails have a constant posterior.
    """
    eps = noise.epsilon / noise.sensitivity
    pts = [-np.inf, 0.0]
    i = np.arange(n + 1)
    for m in range(n):
        wa = np.where(i <= m, prior * np.exp(-eps * np.abs(m - i)), 0.0)
        wb = np.where(i > m, prior * np.exp(-eps * np.abs(i - m)), 0.0)
        A, B = wa @ L, wb @ L
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (A[:, None] - A[None, :]) / (B[None, :] - B[:, None])
            y = np.log(ratio) / (2 * eps)
        y = y[np.isfinite(y) & (y > 0) & (y < 1)]
        pts.extend(np.sort(m + y).tolist())
        pts.append(m + 1.0)
    pts.append(np.inf)
    pts = np.unique(np.asarray(pts))
    return _interval_probs(noise, pts[:-1], pts[1:], n)
