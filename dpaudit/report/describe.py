"""Human-readable text for records: the claim, the verdict and the finding, in one line each.

HTML, JUnit, SARIF, the terminal summary and the pytest plugin all describe a record the same
way: numbers and verdicts are formatted by :mod:`dpaudit.report.formatting` (re-exported here),
and each record's claim and finding come from its kind (:mod:`dpaudit.report.kinds`), which this
module imports and which never imports it back. Three kinds of evidence are never confused:
NOT REFUTED says "not a proof", INCONCLUSIVE says "not a pass"
(docs/ARCHITECTURE.md#kinds-of-evidence).
"""

from __future__ import annotations

from typing import Any, Mapping

from dpaudit.report.formatting import delta_floor, fmt, num, percent, verdict_label, verdict_meaning
from dpaudit.report.kinds import kind_of

__all__ = ["num", "fmt", "percent", "delta_floor", "verdict_label", "verdict_meaning", "claim_text",
           "title", "finding_text", "figure", "one_line", "verdict_text"]


def claim_text(rec: Mapping[str, Any]) -> str:
    """The claim a record checks, e.g. ``ε = 1 (pure DP), add-remove neighbours`` or
    ``sensitivity ≤ 1 (replace)`` or a formal claim's statement (its kind's wording)."""
    return kind_of(rec).claim_text()


def finding_text(rec: Mapping[str, Any]) -> str:
    """What was found, in one sentence (the evidence behind the verdict; an error's cause)."""
    return kind_of(rec).finding_text()


def figure(rec: Mapping[str, Any]) -> str:
    """The record's headline number for a terminal line (``ε ≥ 1.02 (claimed 1)``), or ``""``."""
    return kind_of(rec).figure()


def title(rec: Mapping[str, Any]) -> str:
    """What the row is called: the suite id when there is one, else the target."""
    return str(rec.get("id") or rec.get("target") or "?")


def verdict_text(rec: Mapping[str, Any]) -> str:
    """The verdict's label, qualified by the finding that decided it when a record has two
    (``REFUTED (logic)``, ``REFUTED (float64 only; the logic is NOT REFUTED, ε ≥ 0.49)``)."""
    return kind_of(rec).verdict_text()


def one_line(rec: Mapping[str, Any]) -> str:
    """``TITLE: VERDICT — claim; finding`` (with ``expected X`` for suite controls). A record with
    two findings (logic and float64) says which decided the verdict and ends with the float64 one
    (``…; float64: porous (ε ≥ 8.35: outputs in …; fix: …)``)."""
    line = f"{title(rec)}: {verdict_text(rec)} — {claim_text(rec)}; {finding_text(rec)}"
    if rec.get("expected") is not None:
        ok = rec.get("expected") == rec.get("verdict")
        line += f" [expected {verdict_label(rec['expected'])}{'' if ok else ' — MISMATCH'}]"
    return line
