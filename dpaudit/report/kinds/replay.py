"""Record-and-replay records (:mod:`dpaudit.replay`): the mechanism run on D, then on a neighbour
D′ with every noise draw frozen, and what differed at the noise calls.

The record's keys are those of :meth:`dpaudit.replay.ReplayResult.to_record`: ``claim``,
``findings`` (a list: ``kind``, ``severity`` ``violation`` | ``finding`` | ``limit`` | ``note``,
``message``, ``site`` ``{path, line, function, code}``, ``dataset``, ``neighbour``, ``values``),
``accounting``, ``calls``, ``budget``, ``pairs``. Only a violation (a declared sensitivity
exceeded at a call site) refutes; the other findings are said as what they are.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from dpaudit.report.kinds.base import RecordKind, SarifRule, privacy_claim_text

__all__ = ["ReplayRecord"]

#: the order in which a record's findings are told: the strongest evidence first
_SEVERITY = ("violation", "finding", "limit", "note")


class ReplayRecord(RecordKind):
    """A replay audit: each finding names its call site (``file:line``)."""

    __slots__ = ()
    kind = "replay"
    description = "record and replay at the noise calls"
    rule = SarifRule("DPA006", "NoiseAccountingViolated",
                     "A declared sensitivity is exceeded at a noise call.",
                     "Replayed on a neighbouring dataset with its noise frozen, the input of a noise "
                     "primitive moved by more than the sensitivity that primitive declares.")
    shown = frozenset({"findings", "accounting", "calls", "budget", "pairs"})

    def claim_text(self) -> str:
        claim = self.rec.get("claim")
        if isinstance(claim, Mapping) and "epsilon" in claim:
            return privacy_claim_text(claim)
        return str(self.rec.get("target", ""))

    def findings(self) -> list[Mapping[str, Any]]:
        found = self.rec.get("findings")
        items = [f for f in found if isinstance(f, Mapping)] if isinstance(found, list) else []
        return sorted(items, key=lambda f: _SEVERITY.index(f.get("severity"))
                      if f.get("severity") in _SEVERITY else len(_SEVERITY))

    def finding(self) -> str:
        found = self.findings()
        calls = self.rec.get("calls")
        if not found:
            return (f"no finding at the noise calls ({calls} calls of the mechanism); "
                    f"this is not a proof")
        head = str(found[0].get("message") or found[0].get("title") or found[0].get("kind"))
        more = len(found) - 1
        return head + (f" (and {more} more finding{'s' if more > 1 else ''})" if more else "")

    def site(self) -> Optional[Mapping[str, Any]]:
        """The first finding's call site, for SARIF's location."""
        found = self.findings()
        site = found[0].get("site") if found else None
        return site if isinstance(site, Mapping) else None
