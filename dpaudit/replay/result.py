"""The frozen outcome of a replay audit and its canonical JSON record (kind ``"replay"``).

A replay audit reports what each piece of evidence says and nothing more
(docs/replay.md). Its findings have a *severity*:

``violation``
    a declared sensitivity exceeded at a call site (a ``@dpaudit.primitive``, a diffprivlib
    mechanism): the pair and the two inputs prove that the primitive's contract is broken. The
    verdict is REFUTED.
``finding``
    data-dependent control flow, a data-dependent noise scale, data outside the noise, an
    unnoised release, noise reused: each a finding of its own, named by its call site. They are
    not an ε lower bound (a sparse vector has data-dependent control flow and is private); the
    verdict is INCONCLUSIVE (this check could not decide; not a pass) unless a violation
    refutes the claim.
``limit``
    what the replay could not see (no noise intercepted; the time limit reached before the
    search was done): INCONCLUSIVE.
``note``
    an accounting excess by composition alone, noise calibrated above what the search saw,
    per-record randomness, draws composition does not cover, inputs not observed, randomness
    outside the recording generator: said, never a refutation.

With no violation, finding or limit the verdict is NOT REFUTED, which is never "proved": the
search tried a few hundred calls' worth of pairs.

The record has the common keys of every dpaudit record (``kind``, ``target``, ``verdict``,
``elapsed_s``, ``reproduce``, ``error``; :mod:`dpaudit.results`) plus ``claim``, ``findings``,
``accounting`` (the per-call rows and the composition on the pair that supports the most ε),
``calls`` (mechanism calls spent), ``pairs``, ``phases``, ``seed``, ``noise_intercepted``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dpaudit.claims import Domain, Neighbours
from dpaudit.replay.sites import Site
from dpaudit.results import Verdict, jsonable

__all__ = ["KINDS", "SEVERITIES", "VIOLATIONS", "RECORD_KIND", "ReplayFinding", "ReplayResult"]

#: the record kind of a replay audit (its row of ``dpaudit.results.ENGINES``: ("replay", False))
RECORD_KIND = "replay"

#: each finding kind: (severity, title)
KINDS: dict[str, tuple[str, str]] = {
    "sensitivity_exceeded": ("violation", "declared sensitivity exceeded"),
    "exact_loss_exceeded": ("violation", "privacy loss above the claim (exact)"),
    "data_dependent_control_flow": ("finding", "data-dependent control flow"),
    "data_dependent_noise_scale": ("finding", "data-dependent noise scale"),
    "data_outside_noise": ("finding", "data outside the noise"),
    "unnoised_release": ("finding", "data released without noise"),
    "noise_reuse": ("finding", "noise reused"),
    "no_noise_intercepted": ("limit", "no noise intercepted"),
    "time_limit": ("limit", "time limit reached"),
    "composition_excess": ("note", "accounting excess by composition"),
    "calibration_slack": ("note", "noise calibrated above the sensitivity seen"),
    "per_record_draws": ("note", "per-record randomness"),
    "unaccounted_noise": ("note", "noise without per-call accounting"),
    "input_not_observed": ("note", "input not observed"),
    "outside_randomness": ("note", "randomness outside the recording generator"),
}
SEVERITIES = ("violation", "finding", "limit", "note")
#: the kinds that refute the claim
VIOLATIONS = tuple(k for k, (severity, _) in KINDS.items() if severity == "violation")


@dataclass(frozen=True)
class ReplayFinding:
    """One finding: its ``kind`` (:data:`KINDS`), the call ``site`` (None when it names none),
    the one-line ``message``, the neighbouring pair it was seen on (``dataset``, ``neighbour``,
    how the pair was found: ``pair_label``), its ``values`` and a Python ``reproduce`` line that
    replays that pair."""

    kind: str
    site: Optional[Site]
    message: str
    dataset: Optional[tuple] = None
    neighbour: Optional[tuple] = None
    pair_label: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    reproduce: str = ""

    @property
    def severity(self) -> str:
        return KINDS[self.kind][0]

    @property
    def title(self) -> str:
        return KINDS[self.kind][1]

    def to_record(self) -> dict:
        return {"kind": self.kind, "severity": self.severity, "title": self.title,
                "message": self.message,
                "site": None if self.site is None else self.site.to_record(),
                "dataset": jsonable(self.dataset), "neighbour": jsonable(self.neighbour),
                "pair_label": self.pair_label, "values": jsonable(dict(self.values)),
                "reproduce": self.reproduce}


@dataclass(frozen=True)
class ReplayResult:
    """The outcome of :func:`dpaudit.replay_audit`.

    ``verdict``: REFUTED (a declared sensitivity exceeded), INCONCLUSIVE (a finding or a limit,
    and no violation), NOT REFUTED (neither; not a proof) or ERROR (the mechanism failed:
    ``error``, on ``failed_on``). ``findings`` in severity order; ``accounting`` the per-call
    rows and composition of the pair that supports the most ε; ``calls`` the mechanism calls
    spent (at most the budget), ``pairs`` the neighbouring pairs compared."""

    target: str
    verdict: Verdict
    epsilon: float
    delta: float
    neighbours: Neighbours
    domain: Domain
    size: int
    findings: tuple
    accounting: Mapping[str, Any]
    calls: int
    pairs: int
    elapsed_s: float
    seed: int
    reproduce: str
    budget: int
    phases: Mapping[str, Any] = field(default_factory=dict)
    noise_intercepted: bool = True
    error: Optional[str] = None
    failed_on: Optional[tuple] = None
    libraries: tuple = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    #: how the target ran (``"none (in process)"``, the sandbox's name): where ``dpaudit check``
    #: ran it as the target's engine; None elsewhere (no key in the record)
    isolation: Optional[str] = None
    #: where a report (SARIF, HTML) points: ``{"path", "line"}`` of the strongest finding's call
    #: site, relative to the working folder; None when no finding names one (no key)
    location: Optional[Mapping[str, Any]] = None

    method = "replay"

    @classmethod
    def from_record(cls, rec: Mapping[str, Any], **fields: Any) -> "ReplayResult":
        """The frozen result of a replay record already checked (the sandbox child's, read by
        :func:`dpaudit.replay.command.record_from_child`), with ``fields`` given here
        (``reproduce``, ``isolation``, ``location``, ``details``, ...) instead of set on the
        record afterwards."""
        claim = rec.get("claim") or {}
        lo, hi = claim.get("domain") or (0.0, 1.0)

        def pair(x: Any) -> Optional[tuple]:
            return None if x is None else tuple(x)

        findings = tuple(
            ReplayFinding(kind=f["kind"], message=f.get("message") or KINDS[f["kind"]][1],
                          site=None if f.get("site") is None else Site(
                              str(f["site"].get("path")), int(f["site"].get("line") or 0),
                              str(f["site"].get("function") or ""), str(f["site"].get("code") or "")),
                          dataset=pair(f.get("dataset")), neighbour=pair(f.get("neighbour")),
                          pair_label=f.get("pair_label") or "", values=dict(f.get("values") or {}),
                          reproduce=f.get("reproduce") or "")
            for f in rec.get("findings") or ())
        values = dict(
            target=rec["target"], verdict=Verdict(rec["verdict"]),
            epsilon=float(claim.get("epsilon", math.nan)), delta=float(claim.get("delta", 0.0)),
            neighbours=Neighbours(claim.get("neighbours", Neighbours.ADD_REMOVE.value)),
            domain=Domain(lo, hi), size=int(claim.get("size", 0)), findings=findings,
            accounting=dict(rec.get("accounting") or {}), calls=int(rec.get("calls") or 0),
            pairs=int(rec.get("pairs") or 0), elapsed_s=rec.get("elapsed_s"),
            seed=rec.get("seed"), reproduce=rec.get("reproduce") or "",
            budget=int(rec.get("budget") or 0), phases=dict(rec.get("phases") or {}),
            noise_intercepted=bool(rec.get("noise_intercepted", True)), error=rec.get("error"),
            failed_on=pair(rec.get("failed_on")), libraries=tuple(rec.get("libraries") or ()),
            details=dict(rec.get("details") or {}))
        values.update(fields)
        return cls(**values)

    @property
    def kind(self) -> str:
        return RECORD_KIND

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    def of(self, kind: str) -> list:
        """The findings of one kind."""
        return [f for f in self.findings if f.kind == kind]

    def kinds(self) -> set:
        return {f.kind for f in self.findings}

    def candidates(self) -> list:
        """The neighbouring pairs worth sampling first, most telling first: the pair of each
        violation, finding and composition excess, as ``(dataset, neighbour, kind)`` (a sampled
        audit can confirm with an ε lower bound what the replay's evidence only points at)."""
        order = {"violation": 0, "finding": 1, "note": 2, "limit": 3}
        seen: set = set()
        out = []
        for f in sorted(self.findings, key=lambda f: order[f.severity]):
            if f.dataset is None or f.neighbour is None or f.severity == "limit":
                continue
            if f.severity == "note" and f.kind != "composition_excess":
                continue
            key = (f.dataset, f.neighbour)
            if key not in seen:
                seen.add(key)
                out.append((f.dataset, f.neighbour, f.kind))
        return out

    def __str__(self) -> str:
        head = (f"{self.target}: {self.verdict.label} (replay; ε = {self.epsilon:g}"
                f"{f', δ = {self.delta:g}' if self.delta else ''}, {self.neighbours.value})")
        if self.verdict is Verdict.ERROR:
            return f"{head}: {self.error}"
        lines = [head + f" after {self.pairs} pairs, {self.calls} calls"]
        for f in self.findings:
            where = "" if f.site is None else f" [{f.site}]"
            lines.append(f"  {f.severity}: {f.message}{where}")
        return "\n".join(lines)

    def to_record(self) -> dict:
        return {
            "kind": RECORD_KIND,
            "target": self.target,
            "verdict": self.verdict.value,
            "elapsed_s": jsonable(self.elapsed_s),
            "reproduce": self.reproduce,
            "error": self.error,
            "method": self.method,
            "claim": {"epsilon": jsonable(self.epsilon), "delta": jsonable(self.delta),
                      "neighbours": self.neighbours.value,
                      "domain": [jsonable(self.domain.lo), jsonable(self.domain.hi)],
                      "size": int(self.size)},
            "findings": [f.to_record() for f in self.findings],
            "accounting": jsonable(dict(self.accounting)),
            "calls": int(self.calls),
            "budget": int(self.budget),
            "pairs": int(self.pairs),
            "phases": jsonable(dict(self.phases)),
            "seed": self.seed,
            "noise_intercepted": self.noise_intercepted,
            "libraries": list(self.libraries),
            "failed_on": jsonable(self.failed_on),
            "details": jsonable(dict(self.details)),
            **({} if self.isolation is None else {"isolation": self.isolation}),
            **({} if self.location is None else {"location": dict(self.location)}),
        }
