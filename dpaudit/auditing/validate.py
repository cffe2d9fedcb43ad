"""The sampled audit's last phase: validate the race's candidates (:mod:`dpaudit.auditing.race`) on
samples that played no part in choosing anything.

**validate** (:func:`validate`): the best k candidates are counted on fresh samples drawn with
Poisson sample sizes (paired on common random numbers when the chosen method is ``paired``), and
each is bounded at level α/k (Bonferroni over the k candidates validated), so the reported bound,
the largest of them, holds with probability ≥ confidence (docs/ARCHITECTURE.md#statistical-soundness).

The ``sampler`` is :class:`dpaudit.auditing.sampler.Sampler` (``count``, ``remaining``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dpaudit.auditing.race import Candidate
from dpaudit.estimators.bounds import Bound, Counts, method as bound_method
from dpaudit.rng import generator

__all__ = ["Validated", "validate"]


def _count(sampler: Any, cand: Candidate, lam: float, seeds: tuple, deadline: Optional[float],
           kept: Optional[list], report: Callable[..., None]) -> Counts:
    """Count the candidate's event on fresh samples with Poisson sizes (module docstring)."""
    c = cand.choice
    paired = c.method == "paired"
    rng = generator(seeds[2])
    n_num = int(rng.poisson(lam))
    n_den = n_num if paired else int(rng.poisson(lam))

    def progress(counts: Counts) -> None:
        report("validate", candidate=cand.pair.label, epsilon_lb=None, validated=counts.n_num)

    return sampler.count(cand.pair, c.event, paired=paired, n_num=n_num, n_den=n_den,
                         seeds=(seeds[0], seeds[1]), numerator=c.numerator, deadline=deadline,
                         lam=None if paired else lam, progress=progress, keep=kept)


def _bound(cand: Candidate, counts: Counts, alpha: float, delta: float, epsilon: float) -> Bound:
    c = cand.choice
    m, split = bound_method(c.method), c.split
    if not m.usable(counts):
        m, split = bound_method("marginal"), (0.5, 0.5)
    return m.validated(counts, alpha, split, delta, epsilon)


@dataclass(slots=True)
class Validated:
    """The best validated candidate (or None), and whether a time limit left a candidate uncounted."""

    bound: Optional[Bound] = None
    candidate: Optional[Candidate] = None
    counts: Optional[Counts] = None
    kept: Optional[list] = None
    timed_out: bool = False
    #: the largest validation size (of D or D′) of the candidates counted: what their counts could
    #: show at most (:func:`dpaudit.estimators.limits.best_ceiling`)
    largest_n: int = 0


def validate(sampler: Any, cands: list[Candidate], seeds: Any, *, alpha: float, delta: float,
             epsilon: float, deadline: Optional[float], report: Callable[..., None],
             share: float = 1.0) -> Validated:
    """Count and bound every candidate on fresh samples (module docstring); the best bound wins.
    ``share`` of the samples left is spent (the rest goes to another question's candidate)."""
    out = Validated()
    # what is left, less room for the Poisson draws to exceed their mean (by > 5 sd: < 1e-6)
    left = share * sampler.remaining
    lam = max(1.0, (left - 5.0 * math.sqrt(2.0 * left) - 2.0) / (2.0 * max(1, len(cands))))
    best: Optional[tuple] = None
    for cand, s in zip(cands, seeds.spawn(max(1, len(cands)))):
        kept: list = [[], []]
        counts = _count(sampler, cand, lam, tuple(s.spawn(3)), deadline, kept, report)
        if counts.n_num == 0 or counts.n_den == 0:
            out.timed_out = True
            continue
        b = _bound(cand, counts, alpha, delta, epsilon)
        out.largest_n = max(out.largest_n, counts.n_num, counts.n_den)
        if best is None or b.epsilon_lb > best[0].epsilon_lb:
            best = (b, cand, counts, kept)
        report("validate", candidate=cand.pair.label, epsilon_lb=b.epsilon_lb)
    if best is not None:
        out.bound, out.candidate, out.counts, out.kept = best
    elif cands:
        out.candidate = cands[0]
    return out
