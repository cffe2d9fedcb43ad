"""Compact vector outputs: small-integer outputs stored as int8, and per-coordinate functions
evaluated once per possible byte value.

Many vector mechanisms release flags or small codes as float64 (RAPPOR's bits, the sparse vector
technique's 1 / 0 / −1 answers): eight bytes for one of a few values. :func:`compact` stores a
2-D float sample whose values are all integers in [−128, 127] as int8, exactly (it is kept only
when every value survives the round trip and no zero is −0.0, whose sign bit the float-structure
events test), in an eighth of the memory. A function f of one coordinate applied to an int8 column is then
f evaluated on the 256 byte values and gathered (:func:`per_value`): the scores of
:mod:`~dpaudit.estimators.scores` and :mod:`~dpaudit.estimators.logistic` cost one table look-up
per coordinate, whatever f is, and give the values f gives on the floats.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["compact", "per_value", "BYTE_VALUES", "row_keys"]

#: the value of each byte 0..255 read as an int8, as float64 (index a table with ``v.view(uint8)``)
BYTE_VALUES = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.float64)


def compact(y: np.ndarray) -> np.ndarray:
    """``y`` as int8 when it is a 2-D float array of integers in [−128, 127], else ``y`` itself."""
    if y.dtype == np.int8 or y.ndim != 2 or y.dtype.kind != "f" or y.size == 0:
        return y
    with np.errstate(invalid="ignore"):  # NaN, ±inf and large values do not survive: kept as floats
        head = y[:64]
        if not np.array_equal(head.astype(np.int8), head):
            return y
        c = y.astype(np.int8)
    if not np.array_equal(c, y) or np.signbit(y[c == 0]).any():  # a −0.0 stays a float
        return y
    return c


def per_value(f: Callable[[np.ndarray], np.ndarray], v: np.ndarray) -> np.ndarray:
    """f(v) for a 1-D column ``v``; for int8 ``v``, f on the 256 byte values, gathered."""
    if v.dtype == np.int8:
        return np.take(f(BYTE_VALUES), v.view(np.uint8))
    return f(v)


def row_keys(y: np.ndarray) -> np.ndarray:
    """Each row of a 2-D array as one opaque value, equal for equal rows within one call (for
    counting distinct rows: the order is not the numeric one). int8 rows become mixed-radix
    integers Σ_j r_j(y_j)·Π_{i<j} m_i, with r_j the rank of a value among the m_j values that
    column j takes (an int64 sorts far faster than a row of bytes), or their d bytes when the
    product of the m_j does not fit in an int64."""
    if y.dtype == np.int8:
        keys = _int8_keys(y)
        if keys is not None:
            return keys
        y = np.ascontiguousarray(y)
        return y.view(np.dtype((np.void, y.shape[1]))).reshape(-1)
    y = np.ascontiguousarray(y, dtype=float) + 0.0  # +0.0 turns -0.0 into 0.0
    return y.view(np.dtype((np.void, y.dtype.itemsize * y.shape[1]))).reshape(-1)


def _int8_keys(y: np.ndarray):
    """The mixed-radix keys of :func:`row_keys` for int8 rows, or None when they overflow."""
    ranks, mults, mult = [], [], 1
    for j in range(y.shape[1]):
        seen = np.bincount(y[:, j].view(np.uint8), minlength=256) > 0
        ranks.append(np.cumsum(seen) - 1)
        mults.append(mult)
        mult *= max(1, int(seen.sum()))
        if mult >= 2**62:
            return None
    key = np.zeros(y.shape[0], dtype=np.int64)
    for j, (r, m) in enumerate(zip(ranks, mults)):
        key += np.take(r, y[:, j].view(np.uint8)) * m
    return key
