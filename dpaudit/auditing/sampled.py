"""The sampled audit, phase by phase: search pairs, select events, validate on fresh samples.

1. **patterns**: score every structured pair (:mod:`dpaudit.neighbours.patterns`);
2. **levels** (``linf`` / ``l1``): pattern search over the blocks' base levels and steps
   (:mod:`dpaudit.search.levels`);
3. **search**: hypothesis-targeted search from the relation's strategy (:mod:`dpaudit.search.targeted`);
4. **refine**: hill-climb from the best pairs (:mod:`dpaudit.search.refine`);
5. **select**: successive halving over the best pairs: fresh, larger samples rank them by an
   honest (cross-fitted) projection of their validated bound; the event, direction and bound
   method come with it (:func:`dpaudit.auditing.race.select`);
6. **validate**: the best ``validate`` candidates are counted on fresh samples and bounded at a
   family-wise level (:func:`dpaudit.auditing.validate.validate`). No validation sample is
   ever used to choose anything.

Phases 1-4 are the pair-search pipeline shared with the exact audit (:mod:`dpaudit.search.pipeline`).

Phases 1-4 score a pair by the projected ε_LB of its best event on a small sample, drawn for every
pair on the *same* seeds (common random numbers across pairs: differences between pairs are
estimated with far less noise, and the score is a deterministic function of the pair, which
hypothesis needs to shrink). Budget: phases 1-4 share :data:`SEARCH_SHARE` of the samples,
phase 5 gets the shares of :data:`RACE`, validation the rest. With a time limit, phases 1-4 stop
at 35% of it and phase 4 at 50%, and validation keeps every batch completed before the limit
(a bound from a validation cut short assumes, as any time limit must, that how long the
mechanism takes does not depend on which outputs it returns).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.auditing.race import (MIN_RACE_SAMPLES, MIN_SCORE_SAMPLES, RACE, RACE_PATTERNS,
                                  Candidate, select)
from dpaudit.auditing.sampler import Exhausted, Sampler
from dpaudit.auditing.validate import validate as validate_candidates
from dpaudit.claims import Neighbours
from dpaudit.errors import MechanismError
from dpaudit.estimators.bounds import Bound, Counts, bonferroni
from dpaudit.estimators.selection import choose_event
from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.neighbours.relations import Pair
from dpaudit.outputs import OutputEncoder
from dpaudit.rng import generator, root_sequence
from dpaudit.search.levels import LEVEL_RELATIONS
from dpaudit.search.pipeline import PairSearch
from dpaudit.spec import MechanismSpec

__all__ = ["Candidate", "Outcome", "run", "SEARCH_SHARE", "RACE", "MIN_RACE_SAMPLES", "RACE_PATTERNS",
           "MIN_SCORE_SAMPLES"]

SEARCH_SHARE = 0.125
#: the targeted search and refinement run only when each pair's score uses at least this many
#: samples (below it, climbing would chase the noise of the scores)
MIN_SEARCH_SAMPLES = 400
MAX_SCORE_SAMPLES = 50_000
#: ... and at most this many bytes of encoded outputs per dataset (wide outputs score on fewer)
SCORE_BYTES = 64 << 20
#: the pattern scoring samples drawn ahead (one executor call for many pairs) hold at most about
#: this many bytes; later pairs are drawn when they are scored (the same outputs)
DRAW_AHEAD_BYTES = 128 << 20
#: the level search's share of the search budget (``linf`` / ``l1``; the hypothesis search and
#: the refinement share what the patterns leave)
LEVEL_SHARE = 0.25


@dataclass(slots=True)
class Outcome:
    """Everything the public result is built from (mutable while the audit runs)."""

    bound: Optional[Bound] = None
    candidate: Optional[Candidate] = None
    counts: Optional[Counts] = None
    samples: int = 0
    validated: int = 0
    timed_out: bool = False
    error: Optional[MechanismError] = None
    phases: dict = field(default_factory=dict)
    kept: Optional[list] = None
    schema: Any = None
    encoder: Optional[OutputEncoder] = None


class _Audit:
    """State shared by the phases of one audit."""

    def __init__(self, spec: MechanismSpec, sampler: Sampler, confidence: float, k: int,
                 seed: int, deadline: Optional[float], progress: Optional[Callable]) -> None:
        self.spec = spec
        self.sampler = sampler
        self.root = root_sequence(seed)
        self.s_score, self.s_hyp, self.s_refine, self.s_select, self.s_val = self.root.spawn(5)
        self.seed = seed
        self.k = k
        self.alpha = bonferroni(confidence, k)
        self.deadline = deadline
        self.t0 = time.monotonic()
        self.progress = progress
        self.cache: dict = {}
        self.drawn: dict = {}  # scoring samples drawn ahead (pattern scoring), by pair key
        self.n_score = MIN_SCORE_SAMPLES
        budget = sampler.budget
        base = sampler.selection_base  # the budget, capped: the rest goes to validation (counts only)
        self.search_budget = int(SEARCH_SHARE * base)
        self.select_budget = int(sum(share for _, share in RACE) * base)
        self.lam = max(1.0, (budget - self.search_budget - self.select_budget) / (2.0 * k))
        self.best_estimate = -math.inf
        self.search = PairSearch(self.evaluate, spec.neighbours, spec.domain, spec.size)
        self.phases = self.search.phases

    # -------------------------------------------------------------- helpers
    def phase_deadline(self, share: float) -> Optional[float]:
        if self.deadline is None:
            return None
        return self.t0 + share * (self.deadline - self.t0)

    def report(self, phase: str, **kw: Any) -> None:
        if self.progress is not None:
            info = {"phase": phase, "samples": self.sampler.used, "budget": self.sampler.budget,
                    "estimate": None if not np.isfinite(self.best_estimate) else self.best_estimate}
            info.update(kw)
            self.progress(info)

    def evaluate(self, pair: Pair, deadline: Optional[float] = None) -> float:
        """Projected ε_LB of the pair's best event on the scoring sample (cached; deterministic)."""
        hit = self.cache.get(pair.key)
        if hit is not None:
            return hit
        drawn = self.drawn.pop(pair.key, None)
        yd, yp = drawn if drawn is not None else self.sampler.draw_pair(pair, self.s_score, self.n_score, deadline)
        choice = choose_event(yd, yp, self.sampler.encoder.schema, n_val=self.lam, alpha=self.alpha,
                              delta=self.spec.delta, paired=True, quick=True, honest=True,
                              floats=self.spec.float_events)
        v = -math.inf if choice is None else float(choice.projected)
        self.cache[pair.key] = v
        if v > self.best_estimate:
            self.best_estimate = v
        return v

    def ranked(self) -> list[tuple[Pair, float]]:
        return self.search.ranked()

    def climber(self, phase: str, label: Callable[[Pair], str],
                share: float = 0.25) -> tuple[Callable, Callable]:
        """``(budget_left, evaluate)`` for a search phase: ``share`` of the search budget, stopping
        at 35% of any time limit; ``evaluate`` scores a pair (−∞ once samples run out)."""
        deadline = self.phase_deadline(0.35)
        per = 2 * self.n_score
        limit = self.sampler.used + int(share * self.search_budget)

        def budget_left() -> bool:
            return (self.sampler.used + per <= limit and self.sampler.remaining >= per
                    and (deadline is None or time.monotonic() < deadline))

        def evaluate(pair: Pair) -> float:
            try:
                v = self.evaluate(pair, deadline)
            except Exhausted:
                return -math.inf
            self.report(phase, candidate=label(pair))
            return v

        return budget_left, evaluate


# ----------------------------------------------------------------------------------- phases

def _score_patterns(a: _Audit, patterns: list[Pair]) -> None:
    # half the search budget, but enough to score every pattern once on a small budget
    budget = int(max(a.search_budget // 2,
                     min(0.3 * a.sampler.selection_base, 2 * len(patterns) * MIN_SCORE_SAMPLES)))
    most = min(MAX_SCORE_SAMPLES, max(MIN_SCORE_SAMPLES, a.sampler.rows_within(SCORE_BYTES)))
    a.n_score = int(np.clip(budget / (2 * max(1, len(patterns))), MIN_SCORE_SAMPLES, most))
    deadline = a.phase_deadline(0.35)
    # as many patterns as the budget scores at 2·n_score samples each (at least one)
    todo = patterns[: max(budget, 2 * a.n_score) // (2 * a.n_score)]
    _draw_ahead(a, todo, deadline)
    a.search.patterns(todo, lambda p: a.evaluate(p, deadline), stop=(Exhausted,),
                      each=lambda p: a.report("patterns", candidate=p.label))
    a.phases["patterns"] = {"pairs": len(a.search.pairs), "samples_per_pair": a.n_score}


def _draw_ahead(a: _Audit, pairs: list[Pair], deadline: Optional[float]) -> None:
    """Draw the scoring samples of ``pairs`` a chunk at a time, one executor call per chunk (a
    sandboxed mechanism pays one round trip per call: 89 of an audit's 144 went to scoring the
    patterns one by one). A chunk holds about one batch of samples, so a time limit is checked as
    often as in the other phases. The outputs are the ones :meth:`evaluate` would draw pair by
    pair (same seeds, same order); a chunk that would overrun the budget or the time limit is left
    to the pair-by-pair path, which stops where it always did, and so are the pairs after the
    first :data:`DRAW_AHEAD_BYTES` drawn (wide outputs: 60 patterns of a 2,000-coordinate vector
    held at once were 900 MB)."""
    chunk = max(1, a.sampler.batch_size // (2 * a.n_score))
    held = 0
    for i in range(0, len(pairs), chunk):
        part = [p for p in pairs[i:i + chunk] if p.key not in a.cache and p.key not in a.drawn]
        if held >= DRAW_AHEAD_BYTES:
            return
        try:
            drawn = a.sampler.draw_pairs(part, a.s_score, a.n_score, deadline) if part else []
        except Exhausted:
            return
        a.drawn.update((p.key, d) for p, d in zip(part, drawn))
        held += sum(y.nbytes for d in drawn for y in d)


def _goal(a: _Audit) -> float:
    """What a searched pair must score to count as a find: the best so far plus a margin."""
    ranked = a.ranked()
    best = ranked[0][1] if ranked else -math.inf
    return best + 0.02 + 0.05 * abs(best) if np.isfinite(best) else 0.0


def _levels(a: _Audit) -> None:
    """The level search from the best pairs, on :data:`LEVEL_SHARE` of the search budget; only
    pairs that beat the patterns by the search's margin (:func:`_goal`) enter the race."""
    evals = int(LEVEL_SHARE * a.search_budget) // (2 * a.n_score)
    starts = [pv for pv in a.ranked() if np.isfinite(pv[1])]
    budget_left, evaluate = a.climber("levels", lambda pair: pair.label, share=LEVEL_SHARE)
    a.search.levels(evaluate, starts, evals=evals, budget_left=budget_left, goal=_goal(a))


def _search(a: _Audit, strategy: Any, share: float = 0.25) -> None:
    examples = int(min(100, int(share * a.search_budget) // (2 * a.n_score)))
    goal = _goal(a)
    budget_left, evaluate = a.climber("search", lambda pair: "hypothesis", share=share)
    a.search.targeted(evaluate, strategy, goal=goal, examples=examples,
                      seed=int(a.s_hyp.generate_state(1)[0]), budget_left=budget_left,
                      label="hypothesis search")


def _refine(a: _Audit, share: float = 0.25) -> None:
    evals = int(share * a.search_budget) // (2 * a.n_score)
    starts = [pv for pv in a.ranked()[:3] if np.isfinite(pv[1])]
    budget_left, evaluate = a.climber("refine", lambda pair: pair.label, share=share)
    a.search.refine(evaluate, starts, evals=evals, rng=generator(a.s_refine), budget_left=budget_left)


# ----------------------------------------------------------------------------------- run

def run(spec: MechanismSpec, executor: Any, *, budget: int, confidence: float, seed: int,
        timeout: Optional[float] = None, progress: Optional[Callable] = None, validate: int = 1,
        strategy: Any = None) -> Outcome:
    """Run a sampled audit of ``spec`` (module docstring); never raises for a misbehaving
    mechanism (the error is in ``Outcome.error``)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    encoder = OutputEncoder(spec.output)
    sampler = Sampler(spec, executor, encoder, budget)
    a = _Audit(spec, sampler, confidence, validate, seed, deadline, progress)
    out = Outcome()
    try:
        patterns = structured_pairs(spec.neighbours, spec.domain, spec.size, both_orders=False)
        if patterns:  # how wide the outputs are sizes the batches and the selection samples
            sampler.probe_width(patterns[0].dataset, seed)
        _score_patterns(a, patterns)
        if sampler.remaining and a.ranked() and a.n_score >= MIN_SEARCH_SAMPLES:
            share = 0.25  # of the search budget, to each of the phases after the patterns
            if Neighbours.parse(spec.neighbours) in LEVEL_RELATIONS:
                _levels(a)
                share = (0.5 - LEVEL_SHARE) / 2
            _search(a, strategy, share)
            _refine(a, share)
        elif a.ranked():
            a.phases["search"] = {"skipped": f"scoring samples below {MIN_SEARCH_SAMPLES} per pair"}
        cands, record = select(sampler, [p for p, _ in a.ranked()], a.search.pattern_keys,
                               a.s_select, k=a.k, lam=a.lam, alpha=a.alpha, delta=spec.delta,
                               floats=spec.float_events,
                               deadline=a.phase_deadline(0.5), report=a.report)
        if record or a.ranked():
            a.phases["select"] = record
        cands = cands[: validate]
        out.validated = len(cands)
        v = validate_candidates(sampler, cands, a.s_val, alpha=a.alpha, delta=spec.delta,
                                epsilon=spec.epsilon, deadline=deadline, report=a.report)
        out.bound, out.candidate, out.counts, out.kept = v.bound, v.candidate, v.counts, v.kept
        out.timed_out = v.timed_out
    except MechanismError as exc:
        out.error = exc
    out.samples = sampler.used
    out.schema = encoder.schema
    out.encoder = encoder
    out.timed_out = out.timed_out or sampler.time_cut
    out.phases = a.phases
    a.report("done", epsilon_lb=None if out.bound is None else out.bound.epsilon_lb)
    return out

