"""Numbers and verdicts as people read them: the lowest layer of the report wording.

Every format, the record kinds (:mod:`dpaudit.report.kinds`), the plots and the one-line
descriptions (:mod:`dpaudit.report.describe`) format numbers and name verdicts with these, so
they read alike everywhere and import nothing of the report package.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from dpaudit.results import Verdict

__all__ = ["num", "fmt", "fmt_apart", "delta_floor", "verdict_label", "verdict_meaning", "record",
           "pair_records", "MARK"]


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


def fmt_apart(a: float, b: float, digits: int = 6) -> str:
    """``a`` with ``digits`` significant digits, or as many more as it takes to differ from
    ``b``'s (a supported ε = 1.000000238 above a claimed 1 read "ε = 1 ..., above the claimed
    ε = 1"; a ratio of 1.005 read "1 times smaller")."""
    for d in range(digits, 18):
        text = f"{a:.{d}g}"
        if text != f"{b:.{d}g}":
            return text
    return f"{a:.17g}"


def percent(conf: Any, digits: int = 4) -> str:
    """A confidence as a percentage for people (no ``%`` sign): ``digits`` significant digits, or
    as many more as it takes not to read 100 when it is below 1 (0.999999999 read "100%")."""
    v = num(conf)
    if v is None or not 0 < v < 1:
        return fmt(None if v is None else 100 * v, digits)
    return fmt_apart(100 * v, 100.0, digits)


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


#: how the record that differs between D and D′ is marked in a dataset shown as text
MARK = "⟨{}⟩"


def record(x: Any) -> str:
    """One record as text: a float by its shortest repr that reads back exactly (``1e-12``,
    ``0.1``, ``nan``), an integer as it is, anything else as its text."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    return repr(float(x))  # datasets are float arrays: 0 is 0.0, as the reproduce lines write it


def _differ(a: list, b: list) -> Optional[int]:
    """The first position at which D and D′ part (the extra record of an add-remove pair)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if record(x) != record(y):
            return i
    return min(len(a), len(b)) if len(a) != len(b) else None


def pair_records(a: Any, b: Any, most: int = 6) -> tuple[str, str]:
    """D and D′ as text, each cut to ``most`` records around the first record that differs, that
    record marked ⟨…⟩ in the dataset holding it (both, for a replaced record): ``[…, 0.5, ⟨1.0⟩,
    0.25, … (10 records)]`` and ``[…, 0.5, ⟨0.0⟩, 0.25, … (10 records)]``. Non-lists are shown as
    their text."""
    if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)):
        return str(a), str(b)
    a, b = list(a), list(b)
    at = _differ(a, b)
    n = max(len(a), len(b))
    start = 0 if n <= most or at is None else max(0, min(at - most // 2, n - most))

    def shown(x: list) -> str:
        end = min(len(x), start + most)
        items = [MARK.format(record(v)) if i == at and (len(a) == len(b) or len(x) == n) else record(v)
                 for i, v in enumerate(x[start:end], start=start)]
        cut = start > 0 or end < len(x)
        items = (["…"] if start > 0 else []) + items + (["…"] if end < len(x) else [])
        return "[" + ", ".join(items) + "]" + (f" ({len(x)} records)" if cut else "")

    return shown(a), shown(b)
