"""The sampled audit's fifth phase: a race on fresh samples picks the (pair, event) candidates that
go to validation (:mod:`dpaudit.auditing.validate`).

**select** (:func:`select`): successive halving (Jamieson and Talwalkar 2016) over the pairs the
search found. The best pairs of each stage of :data:`RACE` get a fresh sample each and are ranked
by the honest (split-sample) projection of their validated bound; the best go on to the next,
smaller stage with larger samples. The search's scores are biased upward by the search that
maximised them, so only fresh samples rank the finalists. Each finalist's event is chosen by
two-fold cross-fitting on its sample (:func:`dpaudit.estimators.selection.choose_event`), and the
winner's event is the one validated: re-choosing it on the whole sample would pick the luckiest of
thousands of events again.

The ``sampler`` is :class:`dpaudit.auditing.sampler.Sampler` (``halves``, ``budget``, ``rows_within``,
``selection_base``, ``encoder``); it raises :class:`~dpaudit.auditing.sampler.Exhausted` when a
budget or time limit runs out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from dpaudit.auditing.sampler import Exhausted
from dpaudit.estimators.selection import Choice, choose_events_halves
from dpaudit.neighbours.pair import Pair

__all__ = ["Candidate", "select", "RACE", "MIN_RACE_SAMPLES", "CARRY", "RACE_BYTES", "RACE_PATTERNS",
           "MIN_SCORE_SAMPLES"]

#: successive halving: (pairs, share of the budget) per stage. With one candidate validated, the
#: last stage holds one pair: its job is to choose that pair's event, and rare strong events
#: (SVT3's, p ~ 1e-3) are found only on a large sample (0.21 instead of 0.125 on SVT3, other rows
#: of the violation suite unchanged within noise)
RACE = ((12, 0.10), (4, 0.10), (1, 0.15))
#: a race stage runs only when each of its pairs gets at least this many samples
MIN_RACE_SAMPLES = 2_000
#: the part of a stage too small to run that the next stage gets; the rest is left to validation.
#: A skipped stage would have ranked many pairs, which a small audit (an early look) cannot do
#: anyway: half its share sharpens the next stage's choice of event, half tightens the validated
#: bound (a Laplace 10% too narrow, ε 1.1 against 1, audited on 15,625 samples at 99.75%: 5,750
#: validation pairs instead of 4,300, and the claim refuted in 4 of 8 seeds instead of 1)
CARRY = 0.5
#: a race stage's sample of one dataset holds at most this many bytes of encoded outputs (the
#: rest of the stage's share goes to validation): 1.5 million rows of 20 doubles fit, 32,000 rows
#: of a 1,000-bin histogram
RACE_BYTES = 256 << 20
#: structured patterns always in the first race stage (the best ones by their scores)
RACE_PATTERNS = 6
#: the smallest per-pair scoring sample
MIN_SCORE_SAMPLES = 50


@dataclass(slots=True, eq=False)
class Candidate:
    """A (pair, chosen event) ready for validation (its selection samples are not kept: a race
    stage would otherwise hold every pair's outputs at once)."""

    pair: Pair
    choice: Choice


def select(sampler: Any, ranked: list[Pair], pattern_keys: set, seeds: Any, *, k: int,
           asks: Mapping[str, tuple[float, float]], delta: float, deadline: Optional[float],
           report: Callable[..., None], also: Sequence[Pair] = ()) -> tuple[list[Candidate], list, dict]:
    """The ``k`` best candidates by successive halving over ``ranked`` (module docstring), a
    record of each stage, and the best candidate of every other question.

    ``asks`` is ``{question: (alpha, n_val)}`` (:data:`~dpaudit.estimators.selection.LOGIC`,
    :data:`~dpaudit.estimators.selection.FLOAT`); the first question ranks the pairs, and each
    finalist's events of every question are chosen on its one sample
    (:func:`~dpaudit.estimators.selection.choose_events_halves`). The other questions' candidates
    are the best over every stage (``also``, the other questions' best patterns, join the first
    stage's pool): ``{question: Candidate or None}``. ``seeds`` is the phase's SeedSequence."""
    first = next(iter(asks))
    others: dict[str, Optional[Candidate]] = {q: None for q in asks if q != first}
    if not ranked:
        return [], [], others
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
                carry = int(CARRY * budget)
                continue
            width = max(k, budget // (2 * MIN_RACE_SAMPLES))
        carry = 0
        pool = survivors[:width]
        if also:  # the first stage that runs
            pool = pool + [p for p in also if p not in pool]
            also = ()
        n = max(MIN_SCORE_SAMPLES, min(budget // (2 * len(pool)), sampler.rows_within(RACE_BYTES)))
        cands = []
        for p, s in zip(pool, seed.spawn(len(pool))):
            try:  # one half of the pair's sample in memory at a time (Sampler.halves)
                chosen = choose_events_halves(sampler.halves(p, s, n, deadline),
                                              sampler.encoder.schema, asks, delta=delta,
                                              paired=True, folds=2)
            except Exhausted:
                break
            report("select", candidate=p.label)
            if chosen[first] is not None:
                cands.append(Candidate(p, chosen[first]))
            for q, held in others.items():  # the best of every stage
                c = chosen[q]
                if c is not None and (held is None or c.projected > held.choice.projected):
                    others[q] = Candidate(p, c)
        if not cands:
            break
        cands.sort(key=lambda c: -c.choice.projected)
        survivors = [c.pair for c in cands]
        record.append({"pairs": len(pool), "samples_per_pair": n,
                       "honest_projection": [(c.pair.label, c.choice.projected) for c in cands]})
    return cands[:k], record, others
