"""The sampled audit's last two phases: select a (pair, event) on fresh samples, then validate it
on samples that played no part in choosing anything.

**select** (:func:`select`): successive halving (Jamieson and Talwalkar 2016) over the pairs the
search found. The best pairs of each stage of :data:`RACE` get a fresh sample each and are ranked
by the honest (split-sample) projection of their validated bound; the best go on to the next,
smaller stage with larger samples. The search's scores are biased upward by the search that
maximised them, so only fresh samples rank the finalists. Each finalist's event is chosen by
two-fold cross-fitting on its sample (:func:`dpaudit.estimators.selection.choose_event`), and the
winner's event is the one validated: re-choosing it on the whole sample would pick the luckiest of
thousands of events again.

**validate** (:func:`validate`): the best k candidates are counted on fresh samples drawn with
Poisson sample sizes (paired on common random numbers when the chosen method is ``paired``), and
each is bounded at level α/k (Bonferroni over the k candidates validated), so the reported bound,
the largest of them, holds with probability ≥ confidence (docs/ARCHITECTURE.md#statistical-soundness).

The ``sampler`` is :class:`dpaudit.search.sampler.Sampler` (``halves``, ``count``, ``budget``, ``rows_within``,
``selection_base``, ``remaining``, ``encoder``); it raises :class:`Exhausted` when a budget or
time limit runs out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dpaudit.estimators.bounds import Bound, Counts, method as bound_method
from dpaudit.estimators.selection import Choice, choose_event_halves
from dpaudit.neighbours.pair import Pair
from dpaudit.rng import generator

__all__ = ["Candidate", "Exhausted", "select", "validate", "RACE", "MIN_RACE_SAMPLES",
           "RACE_PATTERNS", "MIN_SCORE_SAMPLES"]

#: successive halving: (pairs, share of the budget) per stage. With one candidate validated, the
#: last stage holds one pair: its job is to choose that pair's event, and rare strong events
#: (SVT3's, p ~ 1e-3) are found only on a large sample (0.21 instead of 0.125 on SVT3, other rows
#: of the violation suite unchanged within noise)
RACE = ((12, 0.10), (4, 0.10), (1, 0.15))
#: a race stage runs only when each of its pairs gets at least this many samples
MIN_RACE_SAMPLES = 2_000
#: a race stage's sample of one dataset holds at most this many bytes of encoded outputs (the
#: rest of the stage's share goes to validation): 1.5 million rows of 20 doubles fit, 32,000 rows
#: of a 1,000-bin histogram
RACE_BYTES = 256 << 20
#: structured patterns always in the first race stage (the best ones by their scores)
RACE_PATTERNS = 6
#: the smallest per-pair scoring sample
MIN_SCORE_SAMPLES = 50


class Exhausted(Exception):
    """The sample budget or the time limit of a phase ran out (internal control flow)."""


@dataclass(slots=True, eq=False)
class Candidate:
    """A (pair, chosen event) ready for validation (its selection samples are not kept: a race
    stage would otherwise hold every pair's outputs at once)."""

    pair: Pair
    choice: Choice


def select(sampler: Any, ranked: list[Pair], pattern_keys: set, seeds: Any, *, k: int,
           lam: float, alpha: float, delta: float, deadline: Optional[float],
           report: Callable[..., None], floats: bool = True) -> tuple[list[Candidate], list]:
    """The ``k`` best candidates by successive halving over ``ranked`` (module docstring), and a
    record of each stage. ``seeds`` is the phase's SeedSequence."""
    if not ranked:
        return [], []
    # the best pairs overall, and the best structured patterns among them: a search that chased
    # lucky scores cannot crowd the patterns out of the race
    patterns = [p for p in ranked if p.key in pattern_keys][: RACE_PATTERNS]
    survivors = patterns + [p for p in ranked if p.key not in {q.key for q in patterns}]
    survivors = sorted(survivors[: max(RACE[0][0], k)], key=lambda p: ranked.index(p))
    survivors += [p for p in ranked if p not in survivors]
    stages = tuple((max(width, k), share) for width, share in RACE)
    cands: list[Candidate] = []
    record = []
    carry = 0
    for i, ((width, share), seed) in enumerate(zip(stages, seeds.spawn(len(stages)))):
        budget = int(share * sampler.selection_base) + carry
        last = i == len(stages) - 1
        if budget < 2 * width * MIN_RACE_SAMPLES:
            if not last:  # too small to rank this many pairs: leave the samples to the next stage
                carry = budget
                continue
            width = max(k, budget // (2 * MIN_RACE_SAMPLES))
        carry = 0
        pool = survivors[:width]
        n = max(MIN_SCORE_SAMPLES, min(budget // (2 * len(pool)), sampler.rows_within(RACE_BYTES)))
        cands = []
        for p, s in zip(pool, seed.spawn(len(pool))):
            try:  # one half of the pair's sample in memory at a time (Sampler.halves)
                ranking = choose_event_halves(sampler.halves(p, s, n, deadline), sampler.encoder.schema,
                                              n_val=lam, alpha=alpha, delta=delta, paired=True,
                                              folds=2, floats=floats)
            except Exhausted:
                break
            report("select", candidate=p.label)
            if ranking is not None:
                cands.append(Candidate(p, ranking))
        if not cands:
            break
        cands.sort(key=lambda c: -c.choice.projected)
        survivors = [c.pair for c in cands]
        record.append({"pairs": len(pool), "samples_per_pair": n,
                       "honest_projection": [(c.pair.label, c.choice.projected) for c in cands]})
    return cands[:k], record


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


def validate(sampler: Any, cands: list[Candidate], seeds: Any, *, alpha: float, delta: float,
             epsilon: float, deadline: Optional[float], report: Callable[..., None]) -> Validated:
    """Count and bound every candidate on fresh samples (module docstring); the best bound wins."""
    out = Validated()
    # what is left, less room for the Poisson draws to exceed their mean (by > 5 sd: < 1e-6)
    left = sampler.remaining
    lam = max(1.0, (left - 5.0 * math.sqrt(2.0 * left) - 2.0) / (2.0 * max(1, len(cands))))
    best: Optional[tuple] = None
    for cand, s in zip(cands, seeds.spawn(max(1, len(cands)))):
        kept: list = [[], []]
        counts = _count(sampler, cand, lam, tuple(s.spawn(3)), deadline, kept, report)
        if counts.n_num == 0 or counts.n_den == 0:
            out.timed_out = True
            continue
        b = _bound(cand, counts, alpha, delta, epsilon)
        if best is None or b.epsilon_lb > best[0].epsilon_lb:
            best = (b, cand, counts, kept)
        report("validate", candidate=cand.pair.label, epsilon_lb=b.epsilon_lb)
    if best is not None:
        out.bound, out.candidate, out.counts, out.kept = best
    elif cands:
        out.candidate = cands[0]
    return out
