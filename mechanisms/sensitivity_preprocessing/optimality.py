"""The best sensitivity-bounded fit, by linear programming (Cummings and Durfee 2020, Lemma 4.2, Cor 4.4) [R, docs/math.md#spf-optimality].

``F_Δ = {g : |g(D ∪ {i}) − g(D)| ≤ Δ_i for all i and D ∌ i}`` (g(∅) free). Lemma 4.2 /
Corollary 4.4: for every D,

    max_{D'⊆D} |f − f̂|(D') ≤ 2 · min_{g∈F_Δ} max_{D'⊆D} |f − g|(D'),

and the factor 2 is tight (docs/math.md#spf-optimality observed exactly 2.000). :func:`best_fit_error` computes the
right-hand minimum exactly on a finite universe as the LP

    minimise t  s.t.  |f(S) − g(S)| ≤ t  and  |g(S ∪ i) − g(S)| ≤ Δ_i   for all S ⊆ D, i ∈ D∖S,

solved by ``scipy.optimize.linprog`` (HiGHS). Only subsets of D matter: a g feasible on them
extends to the whole universe by g(S) := g(S ∩ D). The optimal g is returned too: it is one of
the competitors against which the tests check Lemma 4.5 (Pareto optimality: a g ∈ F_Δ that beats
f̂ at D is strictly worse at some D' ⊊ D, when f̂(∅) = f(∅)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.errors import InvalidArgument

from .errors import SpfError
from .general import SubsetTable
from .subsets import check_subset, members

__all__ = ["BestFit", "best_fit"]


@dataclass(frozen=True, slots=True, eq=False)
class BestFit:
    """``error`` = min over g ∈ F_Δ of max_{S⊆D} |f(S) − g(S)|; ``g`` maps the submasks of D
    (``masks``) to an optimal g."""

    error: float
    masks: np.ndarray
    g: np.ndarray


def best_fit(table: SubsetTable, within=None) -> BestFit:
    """The LP optimum of Lemma 4.2's right-hand side for D = ``within`` (default: everyone).

    Uses ``table.f_values`` (scalar f) and ``table.deltas``; row 0 is f(∅) as the table holds it.
    """
    if not isinstance(table, SubsetTable) or not table.scalar:
        raise InvalidArgument.bad("table", type(table).__name__, "a SubsetTable of a scalar f")
    from scipy import sparse
    from scipy.optimize import linprog

    n = table.n
    D = table.full if within is None else check_subset(within, n)
    people = members(D)
    k = len(people)
    # submasks of D, enumerated through the k members; local index r ↔ mask masks[r]
    local = np.arange(1 << k, dtype=np.int64)
    masks = np.zeros(1 << k, dtype=np.int64)
    for j, person in enumerate(people):
        masks |= ((local >> j) & 1) << person
    f = table.f_values[masks, 0]
    nv = (1 << k) + 1                                    # g_0 … g_{2^k − 1}, t
    rows, cols, vals, rhs = [], [], [], []

    def add(entries, b):
        r = len(rhs)
        for c, v in entries:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        rhs.append(b)

    t = nv - 1
    for r in range(1 << k):
        add([(r, 1.0), (t, -1.0)], f[r])                 # g − t ≤ f
        add([(r, -1.0), (t, -1.0)], -f[r])               # −g − t ≤ −f
        for j in range(k):
            if not r >> j & 1:
                up, d = r | (1 << j), float(table.deltas[people[j]])
                add([(up, 1.0), (r, -1.0)], d)
                add([(up, -1.0), (r, 1.0)], d)
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(len(rhs), nv))
    cost = np.zeros(nv)
    cost[t] = 1.0
    res = linprog(cost, A_ub=A, b_ub=np.asarray(rhs), bounds=[(None, None)] * nv, method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded (t ≥ 0)
        raise SpfError(f"the best-fit LP failed on D = {set(people)}: {res.message}")
    return BestFit(float(res.x[t]), masks, res.x[:-1].copy())
