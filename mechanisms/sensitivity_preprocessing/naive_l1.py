"""The naive ℓ1 preprocessing in ℝ^d, d ≥ 3, and why it fails (Cummings and Durfee 2020, Remark 8.6) [R, N, docs/math.md#spf-2d].

Definition 8.2 read literally in ℝ^d: f̂(D) is an ℓ1-nearest point to f(D) in
``K(D) = ∩_{i∈D} B₁(f̂(D∖i), Δ_i)``, found here by the linear program

    minimise Σ_k t_k  s.t.  |z_k − f_k(D)| ≤ t_k,  Σ_k w_ik ≤ Δ_i,  |z_k − c_ik| ≤ w_ik

(scipy.optimize.linprog, HiGHS). In ℝ² K(D) is never empty (Lemma 8.5); in ℝ³ it can be:
docs/math.md#spf-2d's construction (:func:`remark_8_6_example`) has four balls of radius 1 around
e₁, e₂, e₃ and (½, ½, ½) that meet pairwise, while ∩_k B₁(e_k, 1) = {0} and ‖(½,½,½)‖₁ = 3/2 > 1.
Inside the preprocessing f̂ = f on every set of size ≤ 3 and K({1,2,3,4}) = ∅, so the naive
extension is undefined there; :func:`spf_l1_naive` raises :class:`~.errors.EmptyFeasibleSet`
naming that database. Use Remark 3.4's coordinatewise preprocessing in ℝ^d instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from dpaudit.errors import InvalidArgument

from .errors import EmptyFeasibleSet, SpfError
from .general import SubsetTable, _check_records, _evaluate, check_deltas
from .subsets import by_size, members

__all__ = ["L1Projection", "l1_projection", "spf_l1_naive", "remark_8_6_example"]

#: Slack allowed when testing ‖p − c_i‖₁ ≤ Δ_i directly (touching balls stay feasible).
_TOL = 1e-9


@dataclass(frozen=True, slots=True, eq=False)
class L1Projection:
    """An ℓ1-nearest point of ∩_i B₁(c_i, r_i) to a point, and its ℓ1 distance."""

    point: np.ndarray
    distance: float


def _project(p: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> L1Projection | None:
    from scipy import sparse
    from scipy.optimize import linprog

    d, m = p.size, centres.shape[0]
    if m == 0 or np.all(np.abs(centres - p).sum(axis=1) <= radii + _TOL):
        return L1Projection(p.copy(), 0.0)
    # variables: z (d), t (d), w (m·d): 2d + md in all
    eye = sparse.identity(d, format="csr")
    blocks, rhs = [], []
    blocks.append(sparse.hstack([eye, -eye, sparse.csr_matrix((d, m * d))]))       # z − t ≤ p
    rhs.append(p)
    blocks.append(sparse.hstack([-eye, -eye, sparse.csr_matrix((d, m * d))]))      # −z − t ≤ −p
    rhs.append(-p)
    for i in range(m):
        w = sparse.csr_matrix((np.full(d, -1.0), (np.arange(d), i * d + np.arange(d))), shape=(d, m * d))
        blocks.append(sparse.hstack([eye, sparse.csr_matrix((d, d)), w]))         # z − w_i ≤ c_i
        rhs.append(centres[i])
        blocks.append(sparse.hstack([-eye, sparse.csr_matrix((d, d)), w]))        # −z − w_i ≤ −c_i
        rhs.append(-centres[i])
    sums = sparse.csr_matrix((np.ones(m * d), (np.repeat(np.arange(m), d), np.arange(m * d))),
                             shape=(m, m * d))
    blocks.append(sparse.hstack([sparse.csr_matrix((m, 2 * d)), sums]))            # Σ_k w_ik ≤ r_i
    rhs.append(radii)
    A = sparse.vstack(blocks, format="csr")
    cost = np.concatenate([np.zeros(d), np.ones(d), np.zeros(m * d)])
    bounds = [(None, None)] * d + [(0, None)] * (d + m * d)
    res = linprog(cost, A_ub=A, b_ub=np.concatenate(rhs), bounds=bounds, method="highs")
    if res.status == 2:
        return None
    if res.status != 0:  # pragma: no cover - bounded below by 0; only numerical trouble lands here
        raise SpfError(f"the ℓ1 projection LP failed: {res.message}")
    return L1Projection(res.x[:d].copy(), float(res.fun))


def l1_projection(point: Any, centres: Any, radii: Any) -> L1Projection | None:
    """An ℓ1-nearest point to ``point`` in ∩_i B₁(centres[i], radii[i]); None if that is empty."""
    p = np.asarray(point, dtype=float).reshape(-1)
    c = np.asarray(centres, dtype=float).reshape(-1, p.size)
    r = np.asarray(radii, dtype=float).reshape(-1)
    if r.size != c.shape[0] or np.any(r < 0) or not np.all(np.isfinite(r)):
        raise InvalidArgument.bad("radii", radii, f"{c.shape[0]} finite numbers >= 0, one per centre")
    return _project(p, c, r)


def spf_l1_naive(f: Callable, records: Any, deltas: Any, *, centre: Any = None,
                 batched: bool = False) -> SubsetTable:
    """Definition 8.2 literally, in any dimension, one LP per clamped subset (slow; for small n).

    Raises :class:`~.errors.EmptyFeasibleSet` naming the first database (in increasing size)
    whose feasible set is empty. The table's ``lower`` / ``upper`` are nan (K(D) is not a box).
    """
    recs = _check_records(records)
    ds = check_deltas(deltas, recs.shape[0])
    if not callable(f):
        raise InvalidArgument.bad("f", f, "a callable")
    fv, scalar = _evaluate(f, recs, centre, bool(batched))
    n = ds.size
    values = np.empty_like(fv)
    values[0] = fv[0]
    for k in range(1, n + 1):
        for mask in by_size(n)[k]:
            mask = int(mask)
            who = members(mask)
            centres = np.stack([values[mask ^ (1 << i)] for i in who])
            proj = _project(fv[mask], centres, ds[list(who)])
            if proj is None:
                raise EmptyFeasibleSet(who, fv.shape[1])
            values[mask] = proj.point
    nan = np.full_like(fv, np.nan)
    return SubsetTable(records=recs, deltas=ds, centre=fv[0].copy(), f_values=fv, values=values,
                       lower=nan, upper=nan.copy(), scalar=scalar)


def remark_8_6_example() -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray], float]:
    """docs/math.md#spf-2d's realisation of Remark 8.6: (records, f, Δ) with individuals holding records 1..4.

    f(∅) = 0, f({1}) = (½,0,0), other singletons 0; f({1,2}) = (0,0,½), f({1,3}) = f({2,3}) = (½,½,0),
    other pairs 0; f({2,3,4}) = e₁, f({1,3,4}) = e₂, f({1,2,4}) = e₃, f({1,2,3}) = (½,½,½);
    Δ_i = 1. Then f̂ = f on all sets of size ≤ 3 and K({1,2,3,4}) = ∅. f({1,2,3,4}) = 0 (any value).
    """
    h = 0.5
    table = {
        frozenset({1}): (h, 0, 0),
        frozenset({1, 2}): (0, 0, h), frozenset({1, 3}): (h, h, 0), frozenset({2, 3}): (h, h, 0),
        frozenset({2, 3, 4}): (1, 0, 0), frozenset({1, 3, 4}): (0, 1, 0), frozenset({1, 2, 4}): (0, 0, 1),
        frozenset({1, 2, 3}): (h, h, h),
    }

    def f(records: np.ndarray) -> np.ndarray:
        key = frozenset(int(r) for r in np.asarray(records).reshape(-1))
        return np.asarray(table.get(key, (0.0, 0.0, 0.0)), dtype=float)

    return np.array([1.0, 2.0, 3.0, 4.0]), f, 1.0
