"""Privacy-curve records (:mod:`dpaudit.curves`): a claim stated as a curve δ_claim(ε) (μ-GDP,
ρ-zCDP, Rényi DP, a profile), against a lower confidence curve δ_LB(ε) of the mechanism's privacy
profile, simultaneous over every ε.

The record's keys are those of :meth:`dpaudit.curves.CurveResult.to_record`: ``claim`` ``{type,
text, curve, neighbours, domain, size}``, ``grid`` ``{epsilon, delta_claim, delta_lower_bound}``,
``point`` (the largest gap, or the closest approach), ``refuting_point``, ``mu_lower_bound``,
``rho_lower_bound``, ``refutable``, ``confidence``, ``samples``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from dpaudit.report.formatting import fmt, num, percent
from dpaudit.report.kinds.base import CounterexampleView, RecordKind, SarifRule, dataset_views

__all__ = ["CurveRecord"]


#: what a curve audit says of the float64 question, which it does not ask (a reviewer could not
#: tell whether the doubles were checked)
FLOAT_NOT_ASKED = ("; float64: not asked (a curve audit takes the mechanism as a model over the "
                   "reals; an (ε, δ) check asks it)")


class CurveRecord(RecordKind):
    """A curve claim, refuted where the mechanism's lower curve rises above it, or not."""

    __slots__ = ()
    kind = "curve"
    description = "privacy-curve audit (sampling)"
    rule = SarifRule("DPA007", "PrivacyCurveRefuted",
                     "A privacy curve claim (GDP, zCDP, Rényi DP, a profile) is refuted.",
                     "On fresh samples of one pair of neighbouring datasets, a lower confidence curve "
                     "of the mechanism's privacy profile δ(ε) rises above the curve the claim implies.")
    shown = frozenset({"grid", "point", "refuting_point", "mu_lower_bound", "rho_lower_bound",
                       "refutable", "confidence", "samples"})

    def claim(self) -> Mapping[str, Any]:
        claim = self.rec.get("claim")
        return claim if isinstance(claim, Mapping) else {}

    def claim_text(self) -> str:
        claim = self.claim()
        text = str(claim.get("text") or claim.get("type") or "a privacy curve")
        if claim.get("neighbours"):
            text += f", {claim['neighbours']} neighbours"
        if isinstance(claim.get("domain"), list) and len(claim["domain"]) == 2:
            text += f", domain [{fmt(claim['domain'][0])}, {fmt(claim['domain'][1])}]"
        if claim.get("size") is not None:
            text += f", size {claim['size']}"
        return text

    def finding(self) -> str:
        rec = self.rec
        point = rec.get("refuting_point") or rec.get("point")
        conf = num(rec.get("confidence"))
        at = f" at {percent(conf)}% confidence" if conf is not None else ""
        bounds = "; ".join(f"{name} ≥ {fmt(rec[key])}" for key, name in
                           (("mu_lower_bound", "μ"), ("rho_lower_bound", "ρ")) if num(rec.get(key)) is not None)
        details = rec.get("details") if isinstance(rec.get("details"), Mapping) else {}
        cut = " (cut short by the time limit)" if details.get("timed_out") else ""
        if details.get("out_of_reach") and rec.get("verdict") == "inconclusive":
            cut += f"; {details['out_of_reach']}"
        if not isinstance(point, Mapping):
            return f"no point of the lower curve{at}" + (f" ({bounds})" if bounds else "") + cut + FLOAT_NOT_ASKED
        eps, lb, claim = (num(point.get(k)) for k in ("epsilon", "delta_lower_bound", "delta_claim"))
        rel = "above" if rec.get("verdict") == "refuted" else "closest to"
        text = (f"the mechanism's δ(ε) ≥ {fmt(lb)} at ε = {fmt(eps)}{at}, {rel} the claimed "
                f"δ(ε) = {fmt(claim)}")
        return text + (f"; {bounds}" if bounds else "") + cut + FLOAT_NOT_ASKED

    def counterexample(self) -> Optional[CounterexampleView]:
        point = self.rec.get("refuting_point") or self.rec.get("point")
        cx = point.get("counterexample") if isinstance(point, Mapping) else None
        if not isinstance(cx, Mapping):
            return None
        datasets, marked = dataset_views(cx.get("dataset"), cx.get("neighbour"))
        event = cx.get("event") if isinstance(cx.get("event"), Mapping) else {}
        rows = ((("P[M(D) ∈ S]", fmt(cx.get("p"))), ("P[M(D′) ∈ S]", fmt(cx.get("q")))))
        return CounterexampleView(rows, event=str(event.get("text", "")) or None, datasets=datasets,
                                  marked=marked)

    def plots(self, salt: str) -> list[tuple[str, str]]:
        from dpaudit.report.plots import curve_claim_svgs

        try:
            return curve_claim_svgs(self.rec, salt=salt)
        except Exception:  # noqa: BLE001 - malformed or hostile plot data: the report, without its plot
            return []
