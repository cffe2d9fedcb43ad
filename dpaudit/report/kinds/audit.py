"""Privacy-audit records: the sampled (black-box) audit and the exact (white-box) audit.

Both check an (ε, δ) claim on neighbouring datasets D, D′ and report
ε_LB = ln((p_lo − δ)/q_hi) and δ_LB(ε) = p_lo − e^ε q_hi at the claimed ε (Clopper-Pearson bounds
at a family-wise confidence for a sampled audit; exact values for an exact one; docs/math.md#oblivious-noise). The
record's keys are those of :meth:`dpaudit.results.AuditResult.to_record`; the facts read from its
``details`` are listed in :data:`SampledAudit.DETAIL_FACTS` and :data:`ExactAudit.DETAIL_FACTS`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping, Optional

from dpaudit.report.formatting import delta_floor, fmt, num
from dpaudit.report.kinds.base import (CounterexampleView, RecordKind, SarifRule, as_json, interval_text,
                                       number_text, privacy_claim_text, short)
from dpaudit.results import Verdict

__all__ = ["PrivacyAudit", "SampledAudit", "ExactAudit", "counterexample_text", "refuting_pair"]


def refuting_pair(rec: Mapping[str, Any]) -> str:
    """``; counterexample D = …`` for a REFUTED record with a counterexample, else ``""``."""
    cx = rec.get("counterexample")
    if rec.get("verdict") == Verdict.REFUTED.value and isinstance(cx, Mapping):
        return f"; counterexample {counterexample_text(cx)}"
    return ""


def counterexample_text(cx: Mapping[str, Any]) -> str:
    """``D = [...], D′ = [...], event output ≥ 0.7`` (each part cut to 80 characters)."""
    parts = []
    if "dataset" in cx:
        parts.append(f"D = {short(cx['dataset'])}")
    if "neighbour" in cx:
        parts.append(f"D′ = {short(cx['neighbour'])}")
    event = cx.get("event")
    if isinstance(event, Mapping) and event.get("text"):
        parts.append(f"event {event['text']}")
    return ", ".join(parts)


class PrivacyAudit(RecordKind):
    """An (ε, δ) claim checked on neighbouring pairs; ``claim`` is ``{epsilon, delta, neighbours}``."""

    __slots__ = ()
    shown = frozenset({"epsilon_lower_bound", "delta_lower_bound", "confidence", "samples", "counterexample"})
    #: ``details`` key -> fact label, in the order shown
    DETAIL_FACTS: ClassVar[tuple] = ()

    def claim(self) -> Mapping[str, Any]:
        claim = self.rec.get("claim")
        return claim if isinstance(claim, Mapping) else {}

    def claim_text(self) -> str:
        claim = self.rec.get("claim")
        if isinstance(claim, Mapping) and "epsilon" in claim:
            return privacy_claim_text(claim)
        return str(self.rec.get("target", ""))  # an error record has no claim

    def where(self) -> str:
        raise NotImplementedError

    def finding(self) -> str:
        rec, claim = self.rec, self.claim()
        eps_lb = rec.get("epsilon_lower_bound")
        text = f"ε ≥ {fmt(eps_lb)} {self.where()}".strip() if num(eps_lb) is not None else "no ε bound"
        approximate = (num(claim.get("delta")) or 0) > 0
        if num(rec.get("delta_lower_bound")) is not None and approximate:
            text += f"; δ ≥ {fmt(delta_floor(rec['delta_lower_bound']))} at ε = {fmt(claim.get('epsilon'))}"
        text += f" (claimed ε = {fmt(claim.get('epsilon'))}"
        text += f", δ = {fmt(claim.get('delta'))})" if approximate else ")"
        if rec.get("samples"):
            text += f" from {int(num(rec['samples']) or 0):,} samples"
        return text + refuting_pair(rec)

    def figure(self) -> str:
        if num(self.rec.get("epsilon_lower_bound")) is None:
            return ""
        return f"ε ≥ {fmt(self.rec['epsilon_lower_bound'])} (claimed {fmt(self.claim().get('epsilon'))})"

    def epsilon_bound(self) -> str:
        return fmt(self.rec.get("epsilon_lower_bound"))

    def confidence_text(self) -> str:
        raise NotImplementedError

    def own_facts(self) -> list[tuple[str, str]]:
        rec = self.rec
        facts = [("ε lower bound", fmt(rec.get("epsilon_lower_bound"))),
                 ("δ lower bound (at the claimed ε)", fmt(delta_floor(rec.get("delta_lower_bound")))),
                 ("confidence", self.confidence_text()),
                 ("samples", f"{int(num(rec.get('samples')) or 0):,}")]
        det = rec.get("details") if isinstance(rec.get("details"), Mapping) else {}
        facts += [(label, self.detail_text(det[key])) for key, label in self.DETAIL_FACTS
                  if det.get(key) is not None]
        return facts

    def detail_text(self, value: Any) -> str:
        return str(value)

    def counterexample(self) -> Optional[CounterexampleView]:
        cx = self.rec.get("counterexample")
        if not isinstance(cx, Mapping):
            return None
        event = cx.get("event")
        event_text = event.get("text") if isinstance(event, Mapping) and event.get("text") else (
            as_json(event) if event is not None else None)
        rows = tuple((label, as_json(cx[key])) for key, label in (("dataset", "D"), ("neighbour", "D′"))
                     if key in cx)
        probs = None
        if "p" in cx or "q" in cx:
            probs = {"p": fmt(cx.get("p")), "p_interval": interval_text(cx.get("p_interval")),
                     "q": fmt(cx.get("q")), "q_interval": interval_text(cx.get("q_interval"))}
        return CounterexampleView(rows, event_text, probs)

    def plots(self, salt: str) -> list[tuple[str, str]]:
        from dpaudit.report.plots import record_svgs

        try:
            return record_svgs(self.rec, salt=salt)
        except (ValueError, TypeError, OverflowError):  # malformed plot data: no plot, not a crash
            return []


class SampledAudit(PrivacyAudit):
    """A black-box audit: bounds from validation samples that played no part in choosing the pair
    or the event, at the run's family-wise confidence."""

    __slots__ = ()
    kind = "audit"
    description = "sampled privacy audit (black box)"
    rule = SarifRule("DPA001", "PrivacyClaimRefutedBySampling",
                     "A differential-privacy claim is refuted by a sampled audit.",
                     "A black-box audit found neighbouring datasets D, D' and an event S with "
                     "P[M(D) in S] > e^eps P[M(D') in S] + delta: the Clopper-Pearson lower bound on epsilon, "
                     "from samples that played no part in choosing D, D' or S, exceeds the claim at the "
                     "stated family-wise confidence.")
    DETAIL_FACTS = (("pair_label", "pair found by"), ("bound_method", "bound"),
                    ("candidates_validated", "candidates validated (family-wise)"), ("output_kind", "output"))

    shown = PrivacyAudit.shown | {"p_value", "margin", "marginal", "power", "reproducible", "family"}

    def where(self) -> str:
        conf = num(self.rec.get("confidence"))
        return f"at {fmt(100 * conf, 3)}% confidence" if conf else ""

    def own_facts(self) -> list[tuple[str, str]]:
        """The shared facts, then how strong the verdict is (p-value, margin, MARGINAL, power),
        whether the mechanism replays from its seed, and the family the confidence covers."""
        rec, facts = self.rec, super().own_facts()
        if num(rec.get("p_value")) is not None:
            text = fmt(rec["p_value"])
            if rec.get("marginal"):
                text += " — MARGINAL (above 0.001): confirm with a fresh seed at a higher confidence"
            facts.append(("p-value of the claim (family-wise)", text))
        if num(rec.get("margin")) is not None:
            facts.append(("margin ε_LB / ε", fmt(rec["margin"])))
        power = rec.get("power")
        if isinstance(power, Mapping):
            seen = [f"ε ≥ {fmt(power['epsilon'])}" if num(power.get("epsilon")) is not None else "",
                    f"δ ≥ {fmt(power['delta'])} at the claimed ε" if num(power.get("delta")) is not None else ""]
            seen = [x for x in seen if x]
            facts.append((f"this budget would refute (probability {fmt(power.get('probability'))})",
                          " or ".join(seen) if seen else "no ε on this event"))
        if rec.get("reproducible") is not None:
            facts.append(("reproducible from the seed", "yes" if rec["reproducible"] else
                          "no: the mechanism draws its own randomness (the bound stays valid; a "
                          "replay gives other numbers)"))
        family = rec.get("family")
        if isinstance(family, Mapping) and family.get("targets"):
            facts.append(("family-wise over", f"{family['targets']} targets at "
                          f"{fmt(100 * (num(family.get('confidence')) or 0), 4)}% (Bonferroni)"))
        return facts

    def confidence_text(self) -> str:
        conf = num(self.rec.get("confidence"))
        return f"{fmt(100 * conf, 4)}% (family-wise)" if conf is not None else "—"


class ExactAudit(PrivacyAudit):
    """A white-box audit on the mechanism's declared exact output law: exact losses and δ."""

    __slots__ = ()
    kind = "exact"
    description = "exact privacy audit (white box, exact output law)"
    rule = SarifRule("DPA002", "PrivacyClaimRefutedExactly",
                     "A differential-privacy claim is refuted by the exact output law.",
                     "A white-box audit computed the exact privacy loss sup_y |ln p_D(y) - ln p_D'(y)| "
                     "(or the hockey-stick delta) of the mechanism's declared output law on a neighbouring "
                     "pair, and it exceeds the claim.")
    DETAIL_FACTS = (("exact_loss", "exact privacy loss sup |ln p − ln q|"),
                    ("delta_at_claim", "exact δ at the claimed ε (hockey stick)"),
                    ("pairs_evaluated", "neighbouring pairs evaluated"), ("pair_label", "worst pair"))

    def where(self) -> str:
        return "exactly"

    def confidence_text(self) -> str:
        return "exact (1)"

    def detail_text(self, value: Any) -> str:
        return number_text(value)
