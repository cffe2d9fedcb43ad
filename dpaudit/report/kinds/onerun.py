"""One-run (canary) audit records (:mod:`dpaudit.onerun`): a DP training run's (ε, δ) claim for one
record, against lower bounds on ε from how well m canaries' scores guess which were trained on.

The record's keys are those of :meth:`dpaudit.onerun.OneRunResult.to_record`: ``claim``
``{epsilon, delta, neighbours, source}``, ``canaries``, ``included``, ``epsilon_lower_bound``,
``ceiling``, ``bounds`` ``{steinke, fdp}`` (each: ``epsilon_lower_bound``, ``alpha``, ``level``,
``refutes_claim``, ``guesser``, ``guesses``, ``correct``, ``ceiling``; ``fdp`` also
``mu_lower_bound``, ``gdp_epsilon``, ``ceiling_mu``), ``peer``, ``confidence``.
"""

from __future__ import annotations

from typing import Any, Mapping

from dpaudit.report.formatting import fmt, num, percent
from dpaudit.report.kinds.base import RecordKind, SarifRule, TableView, privacy_claim_text

__all__ = ["OneRunRecord"]

_NAMES = {"steinke": "Steinke et al. 2023", "fdp": "f-DP (Mahloujifar et al. 2025)"}


class OneRunRecord(RecordKind):
    """A training run's (ε, δ) claim, refuted when m canaries' correct guesses are too many for it."""

    __slots__ = ()
    kind = "one-run"
    description = "one-run canary audit of DP training (sampling, one run)"
    rule = SarifRule("DPA030", "TrainingPrivacyClaimRefutedInOneRun",
                     "A DP training claim is refuted by a one-run canary audit.",
                     "Canaries were each included in training with probability 1/2; after one run, "
                     "their scores guessed which were included more often than the claimed (ε, δ) "
                     "allows, at the stated confidence over every guesser tried.")
    shown = frozenset({"canaries", "included", "epsilon_lower_bound", "ceiling", "bounds", "peer", "confidence"})
    legend = ("One-run audit: m canaries each included with probability ½, one training run; ε ≥ … is "
              "the largest ε the correct guesses refute (Steinke, Nasr & Jagielski 2023; Mahloujifar, "
              "Melis & Chaudhuri 2025); the ceiling is what every guess right would have shown.")

    def _bounds(self) -> Mapping[str, Any]:
        b = self.rec.get("bounds")
        return b if isinstance(b, Mapping) else {}

    def claim_text(self) -> str:
        claim = self.rec.get("claim")
        claim = claim if isinstance(claim, Mapping) else {}
        text = privacy_claim_text(claim) if "epsilon" in claim else "a training run's (ε, δ) claim"
        if self.rec.get("canaries") is not None:
            text += f", one run with {fmt(self.rec['canaries'])} canaries"
        if claim.get("source"):
            text += f" (claimed by {claim['source']})"
        return text

    def finding(self) -> str:
        rec = self.rec
        conf = num(rec.get("confidence"))
        at = f" at {percent(conf)}% confidence" if conf is not None else ""
        parts = []
        for key in ("steinke", "fdp"):
            b = self._bounds().get(key)
            if isinstance(b, Mapping) and num(b.get("epsilon_lower_bound")) is not None:
                parts.append(f"ε ≥ {fmt(b['epsilon_lower_bound'])} ({_NAMES[key]})")
        fdp = self._bounds().get("fdp")
        if isinstance(fdp, Mapping) and num(fdp.get("mu_lower_bound")):
            parts.append(f"μ ≥ {fmt(fdp['mu_lower_bound'])}")
        text = ("; ".join(parts) if parts else "the verdict at the claim") + at
        if num(rec.get("ceiling")) is not None:
            text += f"; the most these canaries could show: ε ≥ {fmt(rec['ceiling'])} (every guess right)"
        claim = rec.get("claim") if isinstance(rec.get("claim"), Mapping) else {}
        if rec.get("verdict") == "refuted":
            text += f", above the claimed ε = {fmt(claim.get('epsilon'))}"
        return text

    def figure(self) -> str:
        lb = num(self.rec.get("epsilon_lower_bound"))
        claim = self.rec.get("claim") if isinstance(self.rec.get("claim"), Mapping) else {}
        if lb is None:
            return ""
        return f"ε ≥ {fmt(lb)} (claimed {fmt(claim.get('epsilon'))}; ceiling {fmt(self.rec.get('ceiling'))})"

    def epsilon_bound(self) -> str:
        lb = num(self.rec.get("epsilon_lower_bound"))
        return "" if lb is None else fmt(lb)

    def own_facts(self) -> list[tuple[str, str]]:
        rec = self.rec
        facts = [("canaries", f"{fmt(rec.get('canaries'))} ({fmt(rec.get('included'))} included)")]
        for key in ("steinke", "fdp"):
            b = self._bounds().get(key)
            if isinstance(b, Mapping):
                facts.append((f"ε lower bound, {_NAMES[key]}",
                              f"{fmt(b.get('epsilon_lower_bound'))} (ceiling {fmt(b.get('ceiling'))})"))
        fdp = self._bounds().get("fdp")
        if isinstance(fdp, Mapping) and fdp.get("mu_lower_bound") is not None:
            facts.append(("μ-GDP lower bound", f"{fmt(fdp['mu_lower_bound'])} (ceiling {fmt(fdp.get('ceiling_mu'))})"))
        peer = rec.get("peer")
        if isinstance(peer, Mapping) and peer:
            facts.append(("peer auditor (same scores)",
                          ", ".join(f"{k} = {fmt(v) if num(v) is not None else v}" for k, v in peer.items())))
        return facts

    def stat_facts(self) -> list[tuple[str, str]]:
        out = []
        for key in ("steinke", "fdp"):
            b = self._bounds().get(key)
            if isinstance(b, Mapping):
                g = b.get("guesser") if isinstance(b.get("guesser"), Mapping) else {}
                out.append((f"{_NAMES[key]}: level per guesser",
                            f"{fmt(b.get('level'))} (share of α {fmt(b.get('alpha'))}); best guesser "
                            f"{g.get('score', '—')}, {g.get('direction', '—')}, k₊ = {g.get('k_plus', '—')}, "
                            f"k₋ = {g.get('k_minus', '—')}: {fmt(b.get('correct'))} of {fmt(b.get('guesses'))} right"))
        return out

    def facts(self) -> list[tuple[str, str]]:
        return self.head_facts() + self.own_facts() + self.stat_facts() + self.tail_facts()

    def tables(self) -> list[TableView]:
        rows = []
        for key in ("steinke", "fdp"):
            b = self._bounds().get(key)
            if isinstance(b, Mapping):
                rows.append((_NAMES[key], fmt(b.get("epsilon_lower_bound")), fmt(b.get("ceiling")),
                             "yes" if b.get("refutes_claim") else "no", fmt(b.get("level"))))
        if not rows:
            return []
        return [TableView("the two tests", ("test", "ε lower bound", "ceiling", "refutes the claim", "level per guesser"),
                          tuple(rows), numeric=(1, 2, 4))]
