"""Float-structure scores: events on the binary representation of real outputs.

A mechanism computed in floating point does not output a real number: it outputs a double, and
the set of doubles that f(D) + noise can produce may differ from the set that f(D') + noise can
produce (Mironov, "On significance of the least significant bits for differential privacy", CCS
2012, §3: the porous output of x + Laplace in double precision). An output then has probability
> 0 under D and exactly 0 under D', and no finite ε holds. Such events are invisible to
thresholds and intervals on the value; they are visible on the bits. The scores here map each
output (a float64) to an integer *cell* read from its IEEE-754 fields (on ``numpy`` uint64 views,
vectorised), and are fitted like :class:`~dpaudit.estimators.scores.AtomRatio`: the estimated
log-ratio of each cell, thresholded into a set of cells, chosen on the selection split and
counted on the validation split like every other event.

Cells (sign s, biased exponent e, 52-bit mantissa m of the double y):

``trailing``  (s, e, tz(m)): the binade and the number of trailing zero bits of the mantissa
              (capped at 52). tz = 0 says the last mantissa bit is 1; tz ≥ j says y lies on the
              ulp grid of the binade j above its own (the rounding grid of a coarser magnitude).
``lowbits``   (s, e, m mod 4): the binade and the last two mantissa bits.
``repeated``  the value itself (its canonical bits): exact atoms for values that repeat
              (clamped bounds, a snapping grid, constants).

Non-finite outputs are atoms of the output space in every family: NaN (all NaN payloads are one
atom), +inf and −inf each have a cell of their own, so "NaN on D, a number on D'" is an event.

A vector output gets the same cells per coordinate (``coordinate=j`` reads column j), since each
released double of a vector is porous on its own; an event on coordinate j is named as such
("coordinate 2: outputs in [0.25, 0.5) whose last mantissa bit is 1"). Columns with no float
structure worth testing (every finite value an integer, :func:`has_float_structure`) get none:
their bits say nothing the atoms and patterns of the values do not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from dpaudit.estimators.scores import PRIOR, AtomRatio, fit_atoms

__all__ = ["FloatCells", "FloatCellRatio", "fit_float_cells", "has_float_structure", "FAMILIES",
           "nonfinite_text"]

#: the float-structure families fitted for real outputs by default. ``trailing`` is binade × low
#: mantissa bits in the form that matters for rounding (tz = j ⟺ the last j + 1 bits are 1 then j
#: zeros); ``lowbits`` (the last two bits as such) is available but adds little for its cost
FAMILIES = ("trailing", "repeated")

_MANT = np.uint64((1 << 52) - 1)
_CANON_NAN = np.float64(np.nan).view(np.uint64)


def _fields(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b = np.ascontiguousarray(y, dtype=np.float64).view(np.uint64)
    return b >> np.uint64(63), (b >> np.uint64(52)) & np.uint64(0x7FF), b & _MANT


def _trailing_zeros(m: np.ndarray) -> np.ndarray:
    """Trailing zero bits of each 52-bit mantissa (52 for m = 0), vectorised: the lowest set bit
    m & −m is a power of two, exact as a float64, and its exponent is the count."""
    low = m & (~m + np.uint64(1))
    tz = np.frexp(low.astype(np.float64))[1] - 1
    return np.where(m == 0, 52, tz).astype(np.int64)


@dataclass(frozen=True, slots=True)
class FloatCells:
    """y ↦ its cell under ``family`` (module docstring), as a float64 array of integer codes
    (or of canonical bit patterns for ``repeated``, as uint64)."""

    family: str

    def __call__(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        if self.family == "repeated":
            bits = (y + 0.0).view(np.uint64)  # +0.0 turns −0.0 into 0.0
            return np.where(np.isnan(y), _CANON_NAN, bits)
        return self.index(y).astype(np.float64)

    @property
    def size(self) -> int:
        """Number of dense cell indices (finite cells, then NaN, +inf, −inf)."""
        return (1 << 12) * (64 if self.family == "trailing" else 4) + 3

    def index(self, y: np.ndarray) -> np.ndarray:
        """Dense cell index in 0..size−1 (``trailing`` and ``lowbits``)."""
        s, e, m = _fields(np.asarray(y, dtype=np.float64))
        head = ((s << np.uint64(11)) | e).astype(np.int64)
        if self.family == "trailing":
            cells = head * 64 + _trailing_zeros(m)
        else:
            cells = head * 4 + (m & np.uint64(3)).astype(np.int64)
        top = self.size - 3
        with np.errstate(invalid="ignore"):
            cells = np.where(np.isnan(y), top, cells)
            cells = np.where(y == np.inf, top + 1, cells)
            return np.where(y == -np.inf, top + 2, cells)

    # ------------------------------------------------------------------ words
    def describe_cell(self, cell) -> str:
        """One cell in words, e.g. ``outputs in [0.25, 0.5) whose last mantissa bit is 1``."""
        if self.family == "repeated":
            v = np.asarray([cell], dtype=np.uint64).view(np.float64)[0]
            return f"output = {_value(float(v))}" + (" (non-finite output)" if not math.isfinite(v) else "")
        c = int(cell)
        top = self.size - 3
        if c >= top:
            return f"output is {('NaN', '+inf', '−inf')[c - top]} (non-finite output)"
        k = 64 if self.family == "trailing" else 4
        head, low = divmod(c, k)
        sign, e = divmod(head, 1 << 11)
        where = _binade(sign, e)
        if self.family == "trailing":
            if e == 0 and low == 52:
                return f"outputs equal to {'−' if sign else ''}0"
            if low == 0:
                return f"outputs in {where} whose last mantissa bit is 1"
            if low == 52:
                return f"outputs in {where} that are exact powers of two"
            return f"outputs in {where} with exactly {low} trailing zero mantissa bits"
        return f"outputs in {where} whose last two mantissa bits are {low:02b}"

    def describe(self) -> str:
        return {"trailing": "binade and trailing zero bits of the output",
                "lowbits": "binade and last two mantissa bits of the output",
                "repeated": "the output's exact value"}[self.family]


def _value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+inf" if v > 0 else "−inf"
    return repr(v)


def _binade(sign: int, e: int) -> str:
    """The binade of biased exponent e as an interval, e.g. ``[0.25, 0.5)`` or ``(−1, −0.5]``."""
    if e == 0:
        lo, hi = 0.0, 2.0 ** -1022
        text = f"the subnormals [0, {hi:.6g})"
        return text if not sign else f"the negative subnormals (−{hi:.6g}, 0]"
    lo, hi = math.ldexp(1.0, e - 1023), math.ldexp(1.0, e - 1022) if e < 2046 else math.inf
    if sign:
        return f"({_num(-hi)}, {_num(-lo)}]"
    return f"[{_num(lo)}, {_num(hi)})"


def _num(x: float) -> str:
    return f"{x:.6g}".replace("-", "−")


@dataclass(frozen=True, slots=True, eq=False)
class FloatCellRatio:
    """s(y) = estimated ln(P[cell(y) | D] / P[cell(y) | D']) for cells seen at fitting time."""

    cells: FloatCells
    inner: AtomRatio
    table: Optional[np.ndarray] = None  # dense llr per cell index (NaN: never seen), not repeated
    coordinate: Optional[int] = None    # vector outputs: the column scored

    def __call__(self, y: np.ndarray) -> np.ndarray:
        if self.coordinate is not None:
            y = y[:, self.coordinate]
        if self.table is not None:
            return self.table[self.cells.index(y)]
        return self.inner(self.cells(y))

    def describe(self) -> str:
        where = "" if self.coordinate is None else f" (coordinate {self.coordinate})"
        return f"estimated log-likelihood ratio of the {self.cells.describe()}{where}"

    def members(self, keep: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        return self.inner.members(keep)

    def text(self, members: np.ndarray, limit: int = 6) -> str:
        """The set of cells ``members`` in words."""
        parts = [self.cells.describe_cell(c) for c in members[:limit]]
        more = f"; … ({len(members)} cells in all)" if len(members) > limit else ""
        where = "" if self.coordinate is None else f"coordinate {self.coordinate}: "
        return where + "; ".join(parts) + more if parts else "∅"

    def to_record(self) -> dict:
        where = {} if self.coordinate is None else {"coordinate": self.coordinate}
        return {"kind": "float-structure", "family": self.cells.family, **where,
                "cells": [int(c) if self.cells.family == "repeated" else float(c)
                          for c in self.inner.atoms.tolist()],
                "llr": self.inner.llr.tolist()}


def fit_float_cells(family: str, yd: np.ndarray, yp: np.ndarray,
                    coordinate: Optional[int] = None) -> FloatCellRatio:
    """Per-cell log-ratios of ``family`` from equal-size samples of D and D' (counts by
    ``bincount`` over dense cell indices, so fitting and scoring are O(n)). With ``coordinate``,
    ``yd`` and ``yp`` are vector outputs (rows) and column ``coordinate`` is fitted."""
    cells = FloatCells(family)
    if coordinate is not None:
        yd, yp = yd[:, coordinate], yp[:, coordinate]
    if family == "repeated":
        return FloatCellRatio(cells, fit_atoms(cells(yd), cells(yp)), None, coordinate)
    cd = np.bincount(cells.index(yd), minlength=cells.size).astype(float)
    cp = np.bincount(cells.index(yp), minlength=cells.size).astype(float)
    seen = np.flatnonzero(cd + cp)
    llr = np.log((cd[seen] + PRIOR) / (cp[seen] + PRIOR))
    table = np.full(cells.size, np.nan)
    table[seen] = llr
    return FloatCellRatio(cells, AtomRatio(seen.astype(float), llr), table, coordinate)


def has_float_structure(y: np.ndarray) -> bool:
    """Whether the real values ``y`` (1-D) have bits worth testing: some value is non-finite or
    finite and not an integer. Integer-valued outputs (counts, indices, codes) have none."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return bool(np.any(~np.isfinite(y)) or np.any(y != np.round(y)))


def nonfinite_text(values) -> str:
    """" (non-finite output)" when any of ``values`` is NaN or ±inf, else ""."""
    v = np.asarray(values, dtype=float)
    return " (non-finite output)" if v.size and not np.all(np.isfinite(v)) else ""
