"""Human-readable text for records: the claim, the verdict and the finding, in one line each.

HTML, JUnit, SARIF, the terminal summary and the pytest plugin all describe a record the same
way: numbers and verdicts are formatted here, and each record's claim and finding come from its
kind (:mod:`dpaudit.report.kinds`). Three kinds of evidence are never confused: NOT REFUTED says
"not a proof", INCONCLUSIVE says "not a pass" (docs/ARCHITECTURE.md#kinds-of-evidence).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from dpaudit.results import Verdict

__all__ = ["num", "fmt", "delta_floor", "verdict_label", "verdict_meaning", "claim_text", "title",
           "finding_text", "figure", "one_line"]


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


def claim_text(rec: Mapping[str, Any]) -> str:
    """The claim a record checks, e.g. ``ε = 1 (pure DP), add-remove neighbours`` or
    ``sensitivity ≤ 1 (replace)`` or a formal claim's statement (its kind's wording)."""
    from dpaudit.report.kinds import kind_of

    return kind_of(rec).claim_text()


def finding_text(rec: Mapping[str, Any]) -> str:
    """What was found, in one sentence (the evidence behind the verdict; an error's cause)."""
    from dpaudit.report.kinds import kind_of

    return kind_of(rec).finding_text()


def figure(rec: Mapping[str, Any]) -> str:
    """The record's headline number for a terminal line (``ε ≥ 1.02 (claimed 1)``), or ``""``."""
    from dpaudit.report.kinds import kind_of

    return kind_of(rec).figure()


def title(rec: Mapping[str, Any]) -> str:
    """What the row is called: the suite id when there is one, else the target."""
    return str(rec.get("id") or rec.get("target") or "?")


def one_line(rec: Mapping[str, Any]) -> str:
    """``TITLE: VERDICT — claim; finding`` (with ``expected X`` for suite controls)."""
    line = f"{title(rec)}: {verdict_label(rec.get('verdict'))} — {claim_text(rec)}; {finding_text(rec)}"
    if rec.get("expected") is not None:
        ok = rec.get("expected") == rec.get("verdict")
        line += f" [expected {verdict_label(rec['expected'])}{'' if ok else ' — MISMATCH'}]"
    return line
