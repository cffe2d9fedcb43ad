"""Errors of the sensitivity-preprocessing package (Cummings and Durfee (2020), docs/math.md#sensitivity-preprocessing, #spf-2d).

Both are :class:`~dpaudit.errors.DpauditError` subclasses, so callers catch them with the rest of
dpaudit's errors and a bad case prints one clear line, never a traceback.
"""

from __future__ import annotations

from dpaudit.errors import DpauditError

__all__ = ["SpfError", "EmptyFeasibleSet"]


class SpfError(DpauditError):
    """A sensitivity-preprocessing function cannot be evaluated as asked."""


class EmptyFeasibleSet(SpfError):
    """The feasible set ``K(D) = ∩_{i∈D} B(f̂(D∖i), Δ_i)`` of a preprocessing step is empty.

    In 1-D (Lemma 3.5) and in 2-D under ℓ1 (Lemma 8.5, via 1-D Helly in rotated coordinates) this
    cannot happen. In ℝ³ under ℓ1 it can: docs/math.md#spf-2d, Remark 8.6 [R] builds four balls that meet
    pairwise but have no common point, so the naive 3-D extension is undefined there.
    ``subset`` is the database D (individuals numbered from 0) at which it happened.
    """

    def __init__(self, subset: tuple[int, ...], dim: int, norm: str = "l1") -> None:
        self.subset = tuple(int(i) for i in subset)
        self.dim = int(dim)
        self.norm = norm
        members = "{" + ", ".join(str(i) for i in self.subset) + "}"
        super().__init__(
            f"the naive {self.dim}-D {norm} sensitivity preprocessing is undefined at D = {members} "
            f"(individuals numbered from 0): the balls B(f̂(D∖i), Δ_i), i ∈ D, meet pairwise but "
            f"have no common point (docs/math.md#spf-2d, Remark 8.6); preprocess each coordinate on its own "
            f"(Remark 3.4) instead")
