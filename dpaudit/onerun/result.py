"""The one-run audit's frozen result and its record (kind ``"one-run"``).

:class:`OneRunResult` is built once, whole, by :func:`dpaudit.onerun.run`. Its record has the
common keys of every dpaudit record (``kind``, ``target``, ``verdict``, ``elapsed_s``,
``reproduce``, ``error``: :mod:`dpaudit.results`) and its own:

``claim``                 ``{"epsilon", "delta", "neighbours": "add-remove", "source"}``: the
                          (ε, δ) claimed for one canary's inclusion, and where it came from (an
                          accountant's parameters, in words)
``confidence``            the family-wise confidence of the verdict (both tests, every guesser)
``canaries``              m; ``included``: how many the run included (each with probability ½)
``epsilon_lower_bound``   the larger of the two tests' ε_LB (each holds at its share of α)
``bounds``                ``{"steinke": …, "fdp": …}``: per test its ε_LB, its level (α share,
                          per guesser), the guesser that gave it with its guesses and correct
                          guesses, and the ``ceiling`` (every guess right); ``fdp`` also has
                          ``mu_lower_bound`` (μ-GDP refuted below it, at the same level), its
                          ``gdp_epsilon`` (that μ's ε at the claimed δ) and their ceilings
``peer``                  another auditor's bounds on the same scores, when given (jax_privacy's
                          ``CanaryScoreAuditor``), as it reported them
``details``               :class:`OneRunDetails`
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dpaudit.results import Details, Verdict, jsonable

__all__ = ["OneRunBound", "OneRunDetails", "OneRunResult", "KIND", "ENGINE"]

#: the record kind and the engine name (``ENGINES["one-run"]`` in dpaudit.results)
KIND = "one-run"
ENGINE = "one-run"


@dataclass(frozen=True, slots=True, eq=False)
class OneRunBound(Details):
    """One test's outcome (fields in record order)."""

    #: ``"Steinke, Nasr & Jagielski 2023, Theorem 3"`` or the f-DP test's source
    source: str
    epsilon_lower_bound: float
    #: the test's share of α, and each guesser's level (share / K)
    alpha: float
    level: float
    #: whether the claim is refuted by this test (its p-value or recursion at the claim)
    refutes_claim: bool
    #: the guesser that gave the bound (``None``: no guesser refuted even ε = 0), its guesses
    #: and correct guesses
    guesser: Optional[Mapping[str, Any]]
    guesses: Optional[int]
    correct: Optional[int]
    #: every guess right: the most this family could show with these m canaries
    ceiling: float
    mu_lower_bound: Optional[float] = field(default=None, metadata={"omit_none": True})
    gdp_epsilon: Optional[float] = field(default=None, metadata={"omit_none": True})
    ceiling_mu: Optional[float] = field(default=None, metadata={"omit_none": True})
    ceiling_gdp_epsilon: Optional[float] = field(default=None, metadata={"omit_none": True})


@dataclass(frozen=True, slots=True, eq=False)
class OneRunDetails(Details):
    """What a one-run audit did and saw (fields in record order)."""

    #: the guessers tried (K), and how: ``"family"`` (every guesser, Bonferroni) or
    #: ``"pre-registered"`` (the one given)
    guessers: int
    guess_family: str
    #: the scores read, by name, and per score the mean of the included and excluded canaries
    scores: Mapping[str, Any]
    #: seconds spent training (the rest of ``elapsed_s`` is scoring and bounds)
    train_s: Optional[float]
    #: the trainer's own description (its noise, sampling rate, steps, any known bug)
    trainer: Optional[Mapping[str, Any]] = field(default=None, metadata={"omit_none": True})
    #: where training or scoring failed (an ERROR)
    failure: Optional[str] = field(default=None, metadata={"omit_none": True})


@dataclass(frozen=True, slots=True)
class OneRunResult:
    """The outcome of one one-run audit (module docstring). ``verdict`` is REFUTED when either
    test refutes the (ε, δ) claim at its share of α (so at most 1 − ``confidence`` for a claim
    that holds), NOT REFUTED otherwise, ERROR when training or scoring failed."""

    target: str
    epsilon: float
    delta: float
    verdict: Verdict
    confidence: float
    canaries: int
    included: int
    epsilon_lower_bound: Optional[float]
    steinke: Optional[OneRunBound]
    fdp: Optional[OneRunBound]
    reproduce: str
    elapsed_s: float
    error: Optional[str] = None
    seed: Optional[int] = None
    source: Optional[str] = None
    peer: Optional[Mapping[str, Any]] = None
    details: Any = field(default_factory=dict)
    method: str = ENGINE

    @property
    def kind(self) -> str:
        return KIND

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    @property
    def ceiling(self) -> Optional[float]:
        """The larger ceiling of the two tests (every guess right)."""
        c = [b.ceiling for b in (self.steinke, self.fdp) if b is not None]
        return max(c) if c else None

    def to_record(self) -> dict:
        claim = {"epsilon": jsonable(self.epsilon), "delta": jsonable(self.delta), "neighbours": "add-remove"}
        if self.source:
            claim["source"] = self.source
        return {
            "kind": KIND,
            "target": self.target,
            "claim": claim,
            "verdict": self.verdict.value,
            "method": self.method,
            "confidence": jsonable(self.confidence),
            "canaries": int(self.canaries),
            "included": int(self.included),
            "epsilon_lower_bound": jsonable(self.epsilon_lower_bound),
            "ceiling": jsonable(self.ceiling),
            "bounds": {name: None if b is None else b.to_record()
                       for name, b in (("steinke", self.steinke), ("fdp", self.fdp))},
            "peer": jsonable(self.peer),
            "reproduce": self.reproduce,
            "elapsed_s": jsonable(self.elapsed_s),
            "error": self.error,
            "seed": self.seed,
            "details": jsonable(self.details),
        }
