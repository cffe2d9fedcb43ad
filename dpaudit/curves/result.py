"""The curve audit's frozen result and its record (kind ``"curve"``).

:class:`CurveResult` is built once, whole, by :func:`dpaudit.curves.curve_audit`. Its record has
the common keys of every dpaudit record (``kind``, ``target``, ``verdict``, ``elapsed_s``,
``reproduce``, ``error``: :mod:`dpaudit.results`) and its own:

``claim``            the curve claim (``type``, its parameter, ``text``, ``curve``: which curve the
                     claim means), with ``neighbours``, ``domain``, ``size``
``confidence``       the family-wise confidence of every bound in the record
``samples``, ``seed``
``grid``             ``{"epsilon", "delta_claim", "delta_lower_bound", "margin"}``: lists over the
                     ε grid; δ_LB holds at every ε at once
``point``            REFUTED: the ε of the largest gap δ_LB(ε) − δ_claim(ε) (on the grid, or
                     refined between its points); NOT REFUTED: the closest approach, the largest
                     δ_LB(ε)/δ_claim(ε); with its counterexample: the pair (numerator dataset
                     first), the event and its frequencies with their one-sided bounds
``refuting_point``   ``point`` when the verdict is REFUTED, else None
``mu_lower_bound``   μ_LB: no μ-GDP claim below it holds (Nasr et al. 2023's method)
``rho_lower_bound``  ρ_LB: no ρ-zCDP claim below it holds (through the zCDP → (ε, δ) conversion)
``refutable``        what this run could have refuted: the claimed curve scaled by less than
                     ``scale``, μ-GDP below ``mu``, ρ-zCDP below ``rho``, in words in ``text``
``details``          :class:`CurveDetails`
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dpaudit.claims import Domain, Neighbours
from dpaudit.results import Counterexample, Details, Verdict, jsonable

__all__ = ["CurvePoint", "CurveDetails", "CurveResult", "KIND", "ENGINE"]

#: the record kind and the engine name (``ENGINES["curve"] = ("curve", False)`` in dpaudit.results)
KIND = "curve"
ENGINE = "curve"


@dataclass(frozen=True, slots=True, eq=False)
class CurvePoint:
    """One ε of the curve: the claimed δ, the lower bound δ_LB and, when an event gives it, the
    counterexample (pair, event, frequencies and their one-sided simultaneous bounds)."""

    epsilon: float
    delta_claim: float
    delta_lower_bound: float
    counterexample: Optional[Counterexample] = None
    #: whether ε is a point of the grid (False: refined between grid points)
    on_grid: bool = True

    @property
    def gap(self) -> float:
        return self.delta_lower_bound - self.delta_claim

    def to_record(self) -> dict:
        return {"epsilon": jsonable(self.epsilon), "delta_claim": jsonable(self.delta_claim),
                "delta_lower_bound": jsonable(self.delta_lower_bound), "gap": jsonable(self.gap),
                "on_grid": self.on_grid,
                "counterexample": None if self.counterexample is None else self.counterexample.to_record()}


@dataclass(frozen=True, slots=True, eq=False)
class CurveDetails(Details):
    """What a curve audit did and saw (fields in record order)."""

    #: ``"cp"`` (Clopper-Pearson at α/(2K), Bonferroni) | ``"dkw"`` (a DKW band per dataset)
    band: str
    #: the error level of each one-sided bound (α/(2K) for ``cp``, α/2 per band for ``dkw``)
    level: float
    #: (threshold, orientation) pairs validated (``cp``), or thresholds read off the band (``dkw``)
    thresholds: int
    #: how the pair was found (``"one above"``, ``"hypothesis search"``, …)
    pair_label: str
    #: the score the events threshold, in words, and as a record that recomputes it
    score: str
    score_record: Mapping[str, Any]
    #: validation samples per dataset (D, D')
    validation: Mapping[str, int]
    #: the selection's projected largest ratio δ_LB/δ_claim of the chosen pair and score
    projected_ratio: Optional[float]
    #: what each phase did (pairs scored, hypothesis examples, pairs and scores compared)
    phases: Mapping[str, Any]
    #: the group-sequential looks (:mod:`dpaudit.auditing.schedule`): each look's budget, α,
    #: events validated and whether it refuted; None when the run had one look
    sequential: Optional[Mapping[str, Any]] = field(default=None, metadata={"omit_none": True})
    #: where the selection split of the reported look saw the claimed and the observed curves
    #: easiest to separate: ``{"epsilon", "projected_ratio", "basis"}`` and, for a zCDP or RDP
    #: claim, ``renyi_order`` (the order whose bound gives the claimed δ there)
    focus: Optional[Mapping[str, Any]] = field(default=None, metadata={"omit_none": True})
    #: the validated events with their frequencies and simultaneous bounds (``cp`` only)
    events: Optional[list] = field(default=None, metadata={"omit_none": True})
    #: the detected output kind, e.g. ``"real scalar"``
    output_kind: Optional[str] = field(default=None, metadata={"omit_none": True})
    #: where the mechanism failed (an ERROR)
    error_dataset: Optional[list] = field(default=None, metadata={"omit_none": True})
    #: True when the time limit cut the run short, with ``note`` saying what it had drawn by then
    timed_out: Optional[bool] = field(default=None, metadata={"omit_none": True})
    note: Optional[str] = field(default=None, metadata={"omit_none": True})
    #: why an INCONCLUSIVE run could not have refuted the claim whatever the outputs
    #: (:func:`dpaudit.estimators.limits.curve_reach`), with about the budget that would reach it
    out_of_reach: Optional[str] = field(default=None, metadata={"omit_none": True})


@dataclass(frozen=True, slots=True)
class CurveResult:
    """The outcome of a curve audit (module docstring). ``epsilons``, ``delta_claim`` and
    ``delta_lower_bound`` are the grid; ``point`` the ε of the largest gap (of the largest
    ratio δ_LB/δ_claim when not refuted); ``verdict`` is
    REFUTED when δ_LB(ε) > δ_claim(ε) at some ε evaluated (the grid and the refined points)."""

    target: str
    claim: Any
    neighbours: Neighbours
    verdict: Verdict
    confidence: float
    samples: int
    epsilons: tuple
    delta_claim: tuple
    delta_lower_bound: tuple
    point: Optional[CurvePoint]
    mu_lower_bound: Optional[float]
    rho_lower_bound: Optional[float]
    reproduce: str
    elapsed_s: float
    error: Optional[str] = None
    seed: Optional[int] = None
    margin: tuple = ()
    details: Any = field(default_factory=dict)
    domain: Optional[Domain] = None
    size: Optional[int] = None
    method: str = ENGINE
    #: the ε ceiling and δ floor of the reported look's band
    #: (:func:`dpaudit.estimators.limits.curve_limits`), None where nothing was validated
    limits: Any = None
    #: where the audited function lives and how it was confined, as the check pipeline knows
    #: them (``isolation``, ``location``); None from a plain :func:`dpaudit.curve_audit`
    isolation: Optional[str] = None
    location: Optional[dict] = None

    @property
    def kind(self) -> str:
        return KIND

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    @property
    def refuting_point(self) -> Optional[CurvePoint]:
        return self.point if self.refuted else None

    def scale(self) -> Optional[float]:
        """The largest δ_LB(ε)/δ_claim(ε) over the grid where δ_claim > 0 (None: none): the
        claimed curve scaled by any factor below it is refuted by this run's lower curve."""
        ratios = [lb / c for lb, c in zip(self.delta_lower_bound, self.delta_claim) if c > 0]
        return max(ratios) if ratios else None

    def refutable(self) -> dict:
        """What this run could have refuted (``scale``, ``mu``, ``rho``), in words in ``text``."""
        scale, mu, rho = self.scale(), self.mu_lower_bound, self.rho_lower_bound
        parts = []
        if scale is not None and scale > 0:
            parts.append(f"the claimed curve scaled by less than {scale:.3g}")
        if mu:
            parts.append(f"μ-GDP with μ < {mu:.4g}")
        if rho:
            parts.append(f"ρ-zCDP with ρ < {rho:.4g}")
        if not parts:
            text = "this run's lower curve is 0 everywhere: it could refute no curve"
        elif self.refuted:
            text = "refuted; the same lower curve also refutes " + ", ".join(parts)
        else:
            text = ("not refuted: the lower curve stays below the claimed one; at this budget the "
                    "run would have refuted " + ", ".join(parts))
        if not self.refuted and self.limits is not None:
            text += f"; {self.limits.text()}"
        return {"scale": scale, "mu": mu, "rho": rho, "text": text}

    def to_record(self) -> dict:
        claim = dict(self.claim.to_record()) if self.claim is not None else None
        if claim is not None:
            claim["neighbours"] = self.neighbours.value
            if self.domain is not None:
                claim["domain"] = [jsonable(self.domain.lo), jsonable(self.domain.hi)]
            if self.size is not None:
                claim["size"] = int(self.size)
        point = None if self.point is None else self.point.to_record()
        return {
            "kind": KIND,
            "target": self.target,
            "claim": claim,
            "verdict": self.verdict.value,
            "method": self.method,
            "confidence": jsonable(self.confidence),
            "samples": int(self.samples),
            "limits": None if self.limits is None else jsonable(self.limits.to_record()),
            "seed": self.seed,
            "grid": {"epsilon": jsonable(list(self.epsilons)),
                     "delta_claim": jsonable(list(self.delta_claim)),
                     "delta_lower_bound": jsonable(list(self.delta_lower_bound)),
                     "margin": jsonable([None if m is None or math.isnan(m) else m for m in self.margin])},
            "point": point,
            "refuting_point": point if self.refuted else None,
            "mu_lower_bound": jsonable(self.mu_lower_bound),
            "rho_lower_bound": jsonable(self.rho_lower_bound),
            "refutable": jsonable(self.refutable()),
            "reproduce": self.reproduce,
            "elapsed_s": jsonable(self.elapsed_s),
            "error": self.error,
            "details": jsonable(self.details),
            **({} if self.isolation is None else {"isolation": self.isolation}),
            **({} if self.location is None else {"location": dict(self.location)}),
        }
