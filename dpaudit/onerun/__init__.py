"""The one-run (canary) audit of DP training (docs/training.md).

``run(spec, settings) -> OneRunResult``: m canaries, each included with probability ½, one
training run, every canary scored, and two lower bounds on ε from the correct guesses (Steinke,
Nasr & Jagielski 2023; Mahloujifar, Melis & Chaudhuri 2025) at a stated confidence, each beside
its ceiling (every guess right). :func:`one_run_audit` is the keyword form behind
``dpaudit.one_run_audit``; :func:`audit_scores` audits scores already computed.
"""

from typing import Any, Optional

from dpaudit.onerun.accountant import dpsgd_epsilon, subsampled_gaussian_rdp
from dpaudit.onerun.canaries import (BLACK_BOX_SCORES, DIRAC_MAGNITUDE, WHITE_BOX_SCORES, DiracCanary,
                                     InputCanary, dirac_canaries, dirac_spread, dirac_sum, input_canaries,
                                     loss_score)
from dpaudit.onerun.engine import OneRunSettings, OneRunSpec, audit_scores, run
from dpaudit.onerun.guesses import Guesser
from dpaudit.onerun.result import OneRunBound, OneRunDetails, OneRunResult

__all__ = ["run", "one_run_audit", "audit_scores", "OneRunSpec", "OneRunSettings", "OneRunResult", "OneRunBound",
           "OneRunDetails", "Guesser", "DiracCanary", "InputCanary", "dirac_canaries", "input_canaries",
           "dirac_sum", "dirac_spread", "loss_score", "WHITE_BOX_SCORES", "BLACK_BOX_SCORES", "DIRAC_MAGNITUDE",
           "dpsgd_epsilon", "subsampled_gaussian_rdp"]


def one_run_audit(train: Any, *, data: Any, canaries: Any, score: Any, epsilon: float, delta: float = 0.0,
                  confidence: float = 0.95, seed: Optional[int] = None, guesser: Optional[Guesser] = None,
                  name: str = "train", source: Optional[str] = None, peer: Any = None) -> OneRunResult:
    """Audit ``train(dataset, rng) -> model``'s (``epsilon``, ``delta``) claim in one run: the
    ``canaries`` (a sequence; :func:`dirac_canaries` for white-box gradient canaries,
    :func:`input_canaries` for black-box ones) are each added to ``data`` with probability ½, the
    model is trained once and every canary scored by ``score(model, canary)`` (or a mapping of
    such functions by name). The verdict holds at ``confidence`` over both tests and every
    guesser (``guesser``: one fixed in advance instead of the family); ``seed`` is recorded."""
    spec = OneRunSpec(train=train, data=data, canaries=canaries, score=score, epsilon=epsilon, delta=delta,
                      name=name, source=source)
    return run(spec, OneRunSettings(confidence=confidence, seed=seed, guesser=guesser, peer=peer))
