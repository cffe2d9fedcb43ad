"""Human-readable text for records: the claim, the verdict and the finding, in one line each.

HTML, JUnit, SARIF, the terminal summary and the pytest plugin all describe a record the same
way, so the wording lives here. Three kinds of evidence are never confused: NOT REFUTED says
"not a proof", INCONCLUSIVE says "not a pass" (DESIGN.md). A ``seed-claim`` record is a source
paper's statement re-checked numerically: its claim is the statement, its finding the check's
detail with the observed value against the bound.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Optional

from dpaudit.results import Verdict

__all__ = ["num", "fmt", "delta_floor", "verdict_label", "verdict_meaning", "claim_text", "title",
           "finding_text", "one_line", "paper_source", "KIND_TEXT"]

#: What each record kind is, in words (also the SARIF rule names).
KIND_TEXT = {
    "audit": "sampled privacy audit (black box)",
    "exact": "exact privacy audit (white box, exact output law)",
    "sensitivity": "sensitivity search (hypothesis)",
    "formal": "formal claim (z3)",
    "seed-claim": "seed claim (a source paper's statement, checked numerically)",
}


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


def _privacy_claim(claim: Mapping[str, Any]) -> str:
    eps, delta = claim.get("epsilon"), num(claim.get("delta")) or 0.0
    text = f"ε = {fmt(eps)}" + (f", δ = {fmt(delta)}" if delta else " (pure DP)")
    if claim.get("neighbours"):
        text += f", {claim['neighbours']} neighbours"
    return text


def claim_text(rec: Mapping[str, Any]) -> str:
    """The claim a record checks, e.g. ``ε = 1 (pure DP), add-remove neighbours`` or
    ``sensitivity ≤ 1 (replace)`` or a formal claim's statement."""
    claim = rec.get("claim")
    if rec.get("kind") == "seed-claim":
        statement = str(rec.get("statement") or rec.get("target") or "")
        source = paper_source(rec)
        return f"{source}: {statement}" if source else statement
    if isinstance(claim, Mapping) and "epsilon" in claim:
        return _privacy_claim(claim)
    if rec.get("kind") == "sensitivity" or "bound" in rec:
        bound = rec.get("bound", claim.get("bound") if isinstance(claim, Mapping) else None)
        text = f"sensitivity ≤ {fmt(bound)}" if bound is not None else "declared sensitivity bound"
        if rec.get("individual") or (isinstance(claim, Mapping) and claim.get("individual")):
            text = "individual sensitivities Δ_i (" + text + ")"
        rel = rec.get("neighbours") or (claim.get("neighbours") if isinstance(claim, Mapping) else None)
        if rel:
            text += f", {rel} neighbours"
        return text
    for key in ("statement", "description", "claim"):
        v = rec.get(key)
        if isinstance(v, str) and v:
            return v
    if isinstance(claim, Mapping):
        return ", ".join(f"{k} = {fmt(v) if num(v) is not None else v}" for k, v in claim.items())
    return str(rec.get("target", ""))


def paper_source(rec: Mapping[str, Any]) -> str:
    """Where the paper states a seed claim, in SPEC's notation: ``S4 eq 2.1`` (the seed's tag ``S<n>``
    is added when the source does not start with it)."""
    source = str(rec.get("source") or "")
    paper = rec.get("seed_paper")
    tag = f"S{int(paper)}" if isinstance(paper, str) and paper.isdigit() else ""
    if tag and source != tag and not source.startswith(tag + " "):
        source = f"{tag} {source}".strip()
    return source


def title(rec: Mapping[str, Any]) -> str:
    """What the row is called: the suite id when there is one, else the target."""
    return str(rec.get("id") or rec.get("target") or "?")


def _cx_text(cx: Mapping[str, Any]) -> str:
    parts = []
    if "dataset" in cx:
        parts.append(f"D = {_short(cx['dataset'])}")
    if "neighbour" in cx:
        parts.append(f"D′ = {_short(cx['neighbour'])}")
    event = cx.get("event")
    if isinstance(event, Mapping) and event.get("text"):
        parts.append(f"event {event['text']}")
    return ", ".join(parts)


def _short(x: Any, limit: int = 80) -> str:
    text = json.dumps(x, ensure_ascii=False) if not isinstance(x, str) else x
    return text if len(text) <= limit else text[: limit - 1] + "…"


def finding_text(rec: Mapping[str, Any]) -> str:
    """What was found, in one sentence (the evidence behind the verdict)."""
    v = rec.get("verdict")
    kind = rec.get("kind")
    if v == Verdict.ERROR.value:
        return f"the check could not run: {rec.get('error') or 'unknown error'}"
    if kind in ("audit", "exact"):
        claim = rec.get("claim") or {}
        eps_lb, conf = rec.get("epsilon_lower_bound"), num(rec.get("confidence"))
        exact = kind == "exact"
        where = "exactly" if exact else (f"at {fmt(100 * conf, 3)}% confidence" if conf else "")
        text = f"ε ≥ {fmt(eps_lb)} {where}".strip() if num(eps_lb) is not None else "no ε bound"
        if num(rec.get("delta_lower_bound")) is not None and (num(claim.get("delta")) or 0) > 0:
            text += f"; δ ≥ {fmt(delta_floor(rec['delta_lower_bound']))} at ε = {fmt(claim.get('epsilon'))}"
        text += f" (claimed ε = {fmt(claim.get('epsilon'))}"
        text += f", δ = {fmt(claim.get('delta'))})" if (num(claim.get("delta")) or 0) > 0 else ")"
        if rec.get("samples"):
            text += f" from {int(num(rec['samples']) or 0):,} samples"
        cx = rec.get("counterexample")
        if v == Verdict.REFUTED.value and isinstance(cx, Mapping):
            text += f"; counterexample {_cx_text(cx)}"
        return text
    if kind == "sensitivity":
        claim = rec.get("claim") if isinstance(rec.get("claim"), Mapping) else {}
        gap = rec.get("max_gap", rec.get("gap"))
        text = f"largest gap {fmt(gap)} against bound {fmt(rec.get('bound', claim.get('bound')))}"
        if num(rec.get("ratio")) is not None:
            text += f" (ratio {fmt(rec['ratio'])})"
        if rec.get("examples"):
            text += f" over {int(num(rec['examples']) or 0):,} examples"
        cx = rec.get("counterexample")
        if v == Verdict.REFUTED.value and isinstance(cx, Mapping):
            text += f"; counterexample {_cx_text(cx)}"
        return text
    if kind == "seed-claim":
        return _seed_claim_finding(rec)
    if kind == "formal":
        text = verdict_meaning(v)
        model = rec.get("model")
        if v == Verdict.REFUTED.value and model:
            text += f"; model {_short(model)}"
        return text
    return verdict_meaning(v)


def _seed_claim_finding(rec: Mapping[str, Any]) -> str:
    """``DETAIL (observed x against bound b)``, and the recorded verdict when the re-check disagrees."""
    text = str(rec.get("detail") or verdict_meaning(rec.get("verdict")))
    if rec.get("observed") is not None:
        bound = f" against bound {fmt(rec['bound'])}" if rec.get("bound") is not None else ""
        text += f" (observed {fmt(rec['observed'])}{bound})"
    if rec.get("agrees") is False:
        text += f"; the verdict recorded with the claim is {verdict_label(rec.get('recorded_verdict'))}"
    return text


def one_line(rec: Mapping[str, Any]) -> str:
    """``TITLE: VERDICT — claim; finding`` (with ``expected X`` for suite controls)."""
    line = f"{title(rec)}: {verdict_label(rec.get('verdict'))} — {claim_text(rec)}; {finding_text(rec)}"
    if rec.get("expected") is not None:
        ok = rec.get("expected") == rec.get("verdict")
        line += f" [expected {verdict_label(rec['expected'])}{'' if ok else ' — MISMATCH'}]"
    return line
