"""The 2-D ℓ1 sensitivity-preprocessing function (Cummings and Durfee 2020, Def 8.2, Thm 8.3, Lemmas 8.4-8.5, 8.9) [R, D, docs/math.md#spf-2d].

For f into ℝ², f̂(∅) = f(∅) (or a centre), and f̂(D) is an ℓ1-nearest point to f(D) in

    K(D) = ∩_{i∈D} B₁(f̂(D∖i), Δ_i).

Rotate to (u, v) = (x + y, x − y): ‖(x, y)‖₁ = max(|u|, |v|), so each ℓ1 ball is an axis-parallel
square and K(D) is the box [max_i(u_i − Δ_i), min_i(u_i + Δ_i)] × [max_i(v_i − Δ_i), min_i(v_i + Δ_i)].
The box is non-empty (Lemma 8.4: centres are within Δ_i + Δ_j, so the u- and v-intervals meet
pairwise; 1-D Helly, Lemma 8.5), and the coordinatewise clamp of (u, v)(f(D)) is a nearest point
(ℓ∞ distance to a box is the max of the coordinate distances). That is exactly the 1-D algorithm
run on u and on v with the same Δ_i; map back with x = (u+v)/2, y = (u−v)/2. Nearest points need
not be unique; the clamp is the canonical choice. Theorem 8.3's time: O(2^n (T_f + n)).
Claim: ``‖f̂(D ∪ {i}) − f̂(D)‖₁ ≤ Δ_i``. Where f(D) already lies in K(D), f̂(D) = f(D) exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from dpaudit.errors import InvalidArgument

from .general import SubsetTable, _check_records, _evaluate, _fill, _IndividualModel, check_deltas

__all__ = ["spf_l1_2d", "TwoDimSPF", "to_uv", "from_uv"]


def to_uv(p: np.ndarray) -> np.ndarray:
    """(x, y) ↦ (x + y, x − y) along the last axis: ℓ1 becomes ℓ∞."""
    p = np.asarray(p, dtype=float)
    return np.stack([p[..., 0] + p[..., 1], p[..., 0] - p[..., 1]], axis=-1)


def from_uv(q: np.ndarray) -> np.ndarray:
    """(u, v) ↦ ((u + v)/2, (u − v)/2), the inverse of :func:`to_uv`."""
    q = np.asarray(q, dtype=float)
    return np.stack([0.5 * (q[..., 0] + q[..., 1]), 0.5 * (q[..., 0] - q[..., 1])], axis=-1)


def spf_l1_2d(f: Callable, records: Any, deltas: Any, *, centre: Any = None,
              batched: bool = False) -> SubsetTable:
    """Preprocess f: subsets → ℝ² to individual ℓ1 sensitivities Δ_i (Def 8.2), on every subset.

    Arguments as for :func:`~.general.spf_table`; f returns length-2 vectors. The returned
    table's ``values`` are f̂ in (x, y); its ``lower`` / ``upper`` are the corners of the box K(D)
    in the rotated coordinates (u, v) = (x + y, x − y).
    """
    recs = _check_records(records)
    ds = check_deltas(deltas, recs.shape[0])
    if not callable(f):
        raise InvalidArgument.bad("f", f, "a callable")
    fv, scalar = _evaluate(f, recs, centre, bool(batched), dim=2)
    if scalar or fv.shape[1] != 2:
        raise InvalidArgument.bad("f", f"outputs of dimension {1 if scalar else fv.shape[1]}",
                                  "into ℝ² (length-2 vectors)")
    uv = to_uv(fv)
    uv_hat, lower, upper = _fill(uv, ds)
    values = from_uv(uv_hat)
    inside = np.all(uv_hat == uv, axis=1)
    values[inside] = fv[inside]
    return SubsetTable(records=recs, deltas=ds, centre=fv[0].copy(), f_values=fv, values=values,
                       lower=lower, upper=upper, scalar=False)


@dataclass(frozen=True, slots=True, eq=False)
class TwoDimSPF(_IndividualModel):
    """The 2-D ℓ1 preprocessed f as a function of a dataset: ``spf(data[, ids]) -> array([x, y])``.

    Arguments, identities and records as in :class:`~.general.GeneralSPF` (on the fly with
    ``spf(data, ids)``, or a fixed ``population``). Claim: ``‖f̂(D ∪ {i}) − f̂(D)‖₁ ≤ Δ_i``, stated as
    ``sensitivity`` with ``norm='l1'``.
    """

    def _builder(self) -> Callable:
        return spf_l1_2d

    @property
    def name(self) -> str:
        return f"spf-2d-l1({getattr(self.f, '__name__', 'f')})"

    def __call__(self, data: Any, ids: Any = None) -> np.ndarray:
        return self._value(data, ids, spf_l1_2d)
