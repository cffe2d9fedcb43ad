"""The pieces a pair's comparison is written with: the :class:`Issue` it reports and the recorded
values it shows (:func:`summary`) and compares (:func:`same`, :func:`flat_output`).

:mod:`dpaudit.replay.compare` and :mod:`dpaudit.replay.sequences` build issues from them;
:mod:`dpaudit.replay.search` compares outputs with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from dpaudit.replay.sites import Site

__all__ = ["Issue", "summary", "same", "flat_output"]


@dataclass(frozen=True)
class Issue:
    """One thing a pair shows: ``kind`` (a key of :data:`dpaudit.replay.result.KINDS`), the call
    ``site`` it is about, a one-line ``message`` and its ``values`` (JSON-ready)."""

    kind: str
    site: Optional[Site]
    message: str
    values: dict = field(default_factory=dict)


def summary(x: Any, limit: int = 8) -> Any:
    """A short JSON-ready form of a value: numbers as numbers (non-finite as strings), small
    arrays as lists, larger ones as their first ``limit`` values and shape."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, tuple) and x and x[0] == "digest":
        return {"shape": list(x[1]), "digest": x[3][:12]}
    try:
        a = np.asarray(x)
    except Exception:  # noqa: BLE001 - any object
        return repr(x)[:120]
    if a.dtype.kind not in "biuf":
        return repr(x)[:120]
    if a.ndim == 0:
        return _num(a.item())
    flat = a.reshape(-1)
    if flat.size <= limit:
        return [_num(v) for v in flat.tolist()]
    return {"shape": list(a.shape), "first": [_num(v) for v in flat[:limit].tolist()]}


def _num(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def same(a: Any, b: Any) -> bool:
    """Whether two recorded values are the same (NaN equal to NaN; arrays by shape and values;
    digests by digest)."""
    if isinstance(a, tuple) and a and a[0] == "digest" or isinstance(b, tuple) and b and b[0] == "digest":
        return a == b
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:  # noqa: BLE001
        return a == b
    if x.dtype.kind in "biufc" and y.dtype.kind in "biufc":
        if x.shape != y.shape:
            return False
        return bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc" or y.dtype.kind in "fc"))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def flat_output(out: Any) -> Optional[np.ndarray]:
    """An output as a flat float array (numbers, bools, tuples/lists/arrays of them), else None."""
    try:
        a = np.asarray(out, dtype=float)
    except (TypeError, ValueError, OverflowError):  # an int past the double's range: no float
        return None
    return a.reshape(-1)
