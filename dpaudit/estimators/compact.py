"""Compact vector outputs: small-integer outputs stored as int8, and per-coordinate functions
evaluated once per possible byte value.

Many vector mechanisms release flags or small codes as float64 (RAPPOR's bits, the sparse vector
technique's 1 / 0 / −1 answers): eight bytes for one of a few values. :func:`compact` stores a
2-D float sample whose values are all integers in [−128, 127] as int8, exactly (it is kept only
when every value survives the round trip; −0.0 becomes 0, as the pattern scores already treat
it), in an eighth of the memory. A function f of one coordinate applied to an int8 column is then
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
    return c if np.array_equal(c, y) else y


def per_value(f: Callable[[np.ndarray], np.ndarray], v: np.ndarray) -> np.ndarray:
    """f(v) for a 1-D column ``v``; for int8 ``v``, f on the 256 byte values, gathered."""
    if v.dtype == np.int8:
        return np.take(f(BYTE_VALUES), v.view(np.uint8))
    return f(v)


def row_keys(y: np.ndarray) -> np.ndarray:
    """Each row of a 2-D array as one opaque value, equal for equal rows (for counting distinct
    rows: the order is not the numeric one). int8 rows are compared as their d bytes."""
    if y.dtype == np.int8:
        y = np.ascontiguousarray(y)
        return y.view(np.dtype((np.void, y.shape[1]))).reshape(-1)
    y = np.ascontiguousarray(y, dtype=float) + 0.0  # +0.0 turns -0.0 into 0.0
    return y.view(np.dtype((np.void, y.dtype.itemsize * y.shape[1]))).reshape(-1)
