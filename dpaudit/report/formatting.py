"""Numbers and verdicts as people read them: the lowest layer of the report wording.

Every format, the record kinds (:mod:`dpaudit.report.kinds`), the plots and the one-line
descriptions (:mod:`dpaudit.report.describe`) format numbers and name verdicts with these, so
they read alike everywhere and import nothing of the report package.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from dpaudit.results import Verdict

__all__ = ["num", "fmt", "delta_floor", "verdict_label", "verdict_meaning"]


def num(x: Any) -> Optional[float]:
    """A record number as a float: JSON's ``"inf"``/``"-inf"``/``"nan"`` strings included;
    None for anything else."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str) and x in ("inf", "-inf", "nan"):
        return float(x)
    return None


def fmt(x: Any, digits: int = 4) -> str:
    """A number for people: 4 significant digits, ``∞`` for infinity, ``—`` when absent."""
    v = num(x)
    if v is None:
        return "—" if x is None else str(x)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.{digits}g}"


def delta_floor(x: Any) -> Any:
    """A δ lower bound as shown: below 0 it says nothing beyond δ ≥ 0, so 0 is shown."""
    v = num(x)
    return x if v is None or v != v or v >= 0 else 0.0


def verdict_label(verdict: Any) -> str:
    """``REFUTED``, ``NOT REFUTED``, ``PROVED``, ``INCONCLUSIVE`` or ``ERROR``."""
    try:
        return Verdict(verdict).label
    except ValueError:
        return str(verdict).upper()


def verdict_meaning(verdict: Any) -> str:
    try:
        return Verdict(verdict).description
    except ValueError:
        return ""
