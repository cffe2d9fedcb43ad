"""Lemma 3.6's instance-specific error bound (Cummings and Durfee 2020, Lemma 3.6, Theorem 3.3) [R, docs/math.md#spf-definition].

For a database D and an ordering σ of its members, P^σ_j is the set of the first j of them. Then

    ‖f(D) − f̂(D)‖ ≤ max_{σ ∈ Sym(D)} Σ_{j=1}^{|D|} ( ‖f(P^σ_j) − f(P^σ_{j−1})‖ − Δ_{σ(j)} )⁺,

with f(∅) read as f̂(∅) (the centre, when one is used). The sum runs along a path ∅ → D in the
subset lattice, so the max over the |D|! orderings is a DP over subsets:

    B(∅) = 0,   B(S) = max_{i∈S} [ B(S∖i) + (‖f(S) − f(S∖i)‖ − Δ_i)⁺ ],

which is also the sharper recursive form of docs/math.md#spf-definition. The 2-D ℓ1 version (Lemma 8.9) is the
same with ℓ1 norms. **The min over σ is false** (docs/math.md#e22); ``over="min"`` computes that
variant only so that tests can refute it.
"""

from __future__ import annotations

import numpy as np

from dpaudit.errors import InvalidArgument

from .general import SubsetTable, _norm
from .subsets import by_size

__all__ = ["permutation_error_bound"]


def permutation_error_bound(table: SubsetTable, *, over: str = "max", norm: str = "l1") -> np.ndarray:
    """B(D) for every mask D of ``table`` (shape (2^n,)): Lemma 3.6's max over orderings.

    ``over="min"`` gives the false variant (E22). ``norm`` compares vector outputs (l1 for 2-D).
    """
    if not isinstance(table, SubsetTable):
        raise InvalidArgument.bad("table", type(table).__name__, "a SubsetTable from spf_table")
    if over not in ("max", "min"):
        raise InvalidArgument.bad("over", over, "'max' (Lemma 3.6) or 'min' (the false variant)")
    pick = np.maximum if over == "max" else np.minimum
    start = -np.inf if over == "max" else np.inf
    fv, deltas, n = table.f_values, table.deltas, table.n
    bound = np.zeros(fv.shape[0])
    for k in range(1, n + 1):
        g = by_size(n)[k]
        acc = np.full(g.size, start)
        for i in range(n):
            has = ((g >> i) & 1).astype(bool)
            sub = g[has]
            parent = sub ^ (1 << i)
            step = np.maximum(_norm(fv[sub] - fv[parent], norm) - deltas[i], 0.0)
            acc[has] = pick(acc[has], bound[parent] + step)
        bound[g] = acc
    return bound
