"""The checks a sweep runs on a built object, whatever its library: a privacy claim by sampling
(:func:`privacy`: the sampled audit for ε and (ε, δ), the curve audit for ρ-zCDP and a privacy
profile) and, for OpenDP, a stability map by exact distances (:func:`stability`, the checker of
:mod:`dpaudit.stability`). Each fills a :class:`~dpaudit.sweep.result.Case`.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from dpaudit.results import jsonable
from dpaudit.sweep.result import Case

__all__ = ["privacy", "stability", "record_audit", "record_curve"]


def _list(x: Any) -> Any:
    return None if x is None else [float(v) if isinstance(v, (int, float)) else v for v in x]


def record_audit(case: Case, result: Any) -> None:
    """A sampled audit's result into ``case``: the verdict on the map the library declares (the
    logic question: the claim for the mechanism as a model over the reals), its ε_LB, the pair
    and the event; the float64 question's verdict beside it (``details["float64"]``: porosity
    is a finding of its own, never mixed into the map's verdict)."""
    findings = getattr(result, "findings", None) or {}
    logic = findings.get("logic")
    source = logic if logic is not None else result
    case.verdict = source.verdict.value
    case.bound = None if source.epsilon_lower_bound is None else float(source.epsilon_lower_bound)
    flt = findings.get("float")
    if flt is not None and getattr(flt, "verdict", None) is not None:
        case.details["float64"] = {"verdict": flt.verdict.value,
                                   "epsilon_lower_bound": jsonable(flt.epsilon_lower_bound),
                                   "event": (getattr(flt.counterexample, "event", None) or {}).get("text")
                                   if flt.counterexample is not None else None}
    ce = source.counterexample
    claim = result.claim
    ev: dict = {"bound_name": "ε_LB", "claimed": float(getattr(claim, "epsilon", math.nan)),
                "delta": float(getattr(claim, "delta", 0.0) or 0.0),
                "samples": result.samples, "confidence": result.confidence}
    if ce is not None:
        ev.update(dataset=_list(ce.dataset), neighbour=_list(ce.neighbour),
                  event=(ce.event or {}).get("text") if isinstance(ce.event, dict) else str(ce.event),
                  event_record=jsonable(ce.event), p=ce.p, q=ce.q)
    ev["findings"] = {k: None if getattr(f, "verdict", None) is None else f.verdict.value
                      for k, f in findings.items()}
    if result.verdict.value == "error":
        case.reason = str(result.error or "the audited call failed")[:300]
    case.evidence = jsonable(ev)


def record_curve(case: Case, result: Any, name: str) -> None:
    """A curve audit's result into ``case``: its verdict, the bound of the claim's parameter
    (ρ_LB for ρ-zCDP, else the largest δ_LB / δ_claim over the grid) and the point."""
    case.verdict = result.verdict.value
    point = result.point
    if name == "rho" and result.rho_lower_bound is not None:
        case.bound = float(result.rho_lower_bound)
        bound_name = "ρ_LB"
    else:
        ratios = [lb / c for lb, c in zip(result.delta_lower_bound, result.delta_claim) if c > 0]
        case.bound = float(max(ratios, default=0.0))
        bound_name = "max δ_LB(ε)/δ_claim(ε)"
    ev: dict = {"bound_name": bound_name, "samples": result.samples, "confidence": result.confidence,
                "claimed": float(getattr(result.claim, "rho", math.nan)) if name == "rho" else None}
    if point is not None and point.counterexample is not None:
        ce = point.counterexample
        ev.update(at_epsilon=point.epsilon, delta_claim=point.delta_claim,
                  delta_lower_bound=point.delta_lower_bound, dataset=_list(ce.dataset),
                  neighbour=_list(ce.neighbour), event=(ce.event or {}).get("text"),
                  event_record=jsonable(ce.event), p=ce.p, q=ce.q)
    if result.verdict.value == "error":
        case.reason = str(result.error or "the audited call failed")[:300]
    case.evidence = jsonable(ev)


def privacy(case: Case, spec: Any, *, curve: Optional[dict], samples: int, confidence: float,
            seed: int, timeout: Optional[float]) -> None:
    """Sample ``spec`` against its claim: its curve (``{"rho": ρ}`` or ``{"profile": δ(ε)}``) by
    the curve audit, else its (ε, δ) by the sampled audit."""
    import dpaudit

    case.check = "privacy"
    if curve:
        (name, value), = curve.items()
        result = dpaudit.curve_audit(spec, samples=samples, confidence=confidence, seed=seed, **{name: value})
        record_curve(case, result, name)
    else:
        result = dpaudit.audit(spec, samples=samples, confidence=confidence, seed=seed, timeout=timeout)
        record_audit(case, result)


def stability(case: Case, obj: Any, *, seed: int, budget: int, timeout: Optional[float]) -> Any:
    """The stability maps of an OpenDP transformation (or of a measurement's chain) on searched
    neighbouring pairs, exactly (:func:`dpaudit.stability.check_stability`); returns the
    report."""
    from dpaudit.stability import check_stability

    case.check = "stability"
    report = check_stability(obj, seed=seed, budget=budget, timeout=timeout)
    checked = sum(s.get("pairs_checked", 0) for s in report.stages)
    worst = max(report.stages, key=lambda s: s["largest_ratio"], default=None)
    ev: dict = {"pairs": report.pairs, "evaluations": report.invocations, "d_in": jsonable(report.d_in),
                "relation": report.relation.value}
    if worst is not None:
        ev["part"] = worst["part"]
        ev["map_d_in"] = worst["map_d_in_repr"]
        ev["largest_observed"] = worst["largest_observed"]
        if worst.get("pair"):
            ev["dataset"], ev["neighbour"] = worst["pair"]["dataset"], worst["pair"]["neighbour"]
    if report.violations:
        v = report.violations[0]
        case.verdict = "refuted"
        rec = v.to_record()
        ev["violation"] = rec.get("message")
        vals = rec.get("values") or {}
        ev["violation_values"] = jsonable(vals)
        if rec.get("dataset") is not None:
            ev["dataset"], ev["neighbour"] = rec["dataset"], rec["neighbour"]
    elif report.error:
        case.verdict = "error"
        case.reason = report.error
        ev["failed_on"] = jsonable(report.failed_on)
    elif checked == 0 and not (report.measurement or {}).get("checked"):
        case.verdict = "skipped"
        case.reason = "; ".join(n.message for n in report.notes)[:300] or "no output distance could be measured"
    else:
        case.verdict = "not_refuted"
    case.bound = float(report.largest_ratio()) if checked else None
    if report.notes and case.verdict != "skipped":
        ev["notes"] = [n.message for n in report.notes][:3]
    case.evidence = jsonable(ev)
    return report
