"""The sampled audit, phase by phase: search pairs, select events, validate on fresh samples.

1. **patterns**: score every structured pair (:mod:`dpaudit.neighbours.patterns`);
2. **search**: hypothesis-targeted search from the relation's strategy (:mod:`.targeted`);
3. **refine**: hill-climb from the best pairs (:mod:`.refine`);
4. **select**: successive halving over the best pairs: fresh, larger samples rank them by an
   honest (cross-fitted) projection of their validated bound; the event, direction and bound
   method come with it (:func:`dpaudit.estimators.selection.choose_event`);
5. **validate**: the best ``validate`` candidates are counted on fresh samples drawn with Poisson
   sample sizes (paired on common random numbers when the chosen method is ``paired``), and each is
   bounded at level α/k (Bonferroni over the k candidates validated), so the reported bound, the
   largest of them, holds with probability ≥ confidence (SPEC-level rule: DESIGN.md, "Statistical
   soundness"). No validation sample is ever used to choose anything.

Phases 1-3 score a pair by the projected ε_LB of its best event on a small sample, drawn for every
pair on the *same* seeds (common random numbers across pairs: differences between pairs are
estimated with far less noise, and the score is a deterministic function of the pair, which
hypothesis needs to shrink). Budget: phases 1-3 share :data:`SEARCH_SHARE` of the samples,
phase 4 gets the shares of :data:`RACE`, validation the rest. With a time limit, phases 1-3 stop
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

from dpaudit.errors import MechanismError
from dpaudit.estimators.bounds import Bound, Counts, bonferroni, validated_bound
from dpaudit.estimators.selection import Choice, choose_event
from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.neighbours.relations import Pair
from dpaudit.outputs import OutputEncoder
from dpaudit.rng import generator, root_sequence
from dpaudit.search.refine import refine
from dpaudit.search.sampler import Exhausted, Sampler
from dpaudit.search.targeted import default_strategy, targeted_search
from dpaudit.spec import MechanismSpec

__all__ = ["Candidate", "Outcome", "run", "SEARCH_SHARE", "RACE"]

SEARCH_SHARE = 0.125
#: successive halving: (pairs, share of the budget) per stage. With one candidate validated, the
#: last stage holds one pair: its job is to choose that pair's event, and rare strong events
#: (SVT3's, p ~ 1e-3) are found only on a large sample (0.21 instead of 0.125 on SVT3, other rows
#: of the violation suite unchanged within noise)
RACE = ((12, 0.10), (4, 0.10), (1, 0.15))
#: pairs in the two racing stages, and the smallest per-pair scoring sample
#: a race stage runs only when each of its pairs gets at least this many samples
MIN_RACE_SAMPLES = 2_000
#: structured patterns always in the first race stage (the best ones by their scores)
RACE_PATTERNS = 6
MIN_SCORE_SAMPLES = 50
#: the targeted search and refinement run only when each pair's score uses at least this many
#: samples (below it, climbing would chase the noise of the scores)
MIN_SEARCH_SAMPLES = 400
MAX_SCORE_SAMPLES = 50_000


@dataclass(slots=True, eq=False)
class Candidate:
    """A (pair, chosen event) ready for validation, with its selection samples."""

    pair: Pair
    choice: Choice
    selection: tuple  # (yd, yp) selection samples (paired rows)


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
        self.search_budget = int(SEARCH_SHARE * budget)
        self.select_budget = int(sum(share for _, share in RACE) * budget)
        self.lam = max(1.0, (budget - self.search_budget - self.select_budget) / (2.0 * k))
        self.best_estimate = -math.inf
        self.pairs: dict = {}
        self.pattern_keys: set = set()
        self.phases: dict = {}

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
                              delta=self.spec.delta, paired=True, quick=True, honest=True)
        v = -math.inf if choice is None else float(choice.projected)
        self.cache[pair.key] = v
        if v > self.best_estimate:
            self.best_estimate = v
        return v

    def ranked(self) -> list[tuple[Pair, float]]:
        return sorted(self.pairs.values(), key=lambda pv: -pv[1])

    def climber(self, phase: str, label: Callable[[Pair], str]) -> tuple[Callable, Callable]:
        """``(budget_left, evaluate)`` for a search phase: a quarter of the search budget, stopping
        at 35% of any time limit; ``evaluate`` scores a pair (−∞ once samples run out)."""
        deadline = self.phase_deadline(0.35)
        per = 2 * self.n_score
        limit = self.sampler.used + self.search_budget // 4

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

    def note(self, pair: Pair, v: float) -> None:
        """Remember the first label of each distinct (unordered) pair and its score."""
        key = pair.key if pair.key in self.pairs else (pair.neighbour, pair.dataset)
        if key not in self.pairs:
            self.pairs[pair.key] = (pair, v)


# ----------------------------------------------------------------------------------- phases

def _score_patterns(a: _Audit, patterns: list[Pair]) -> None:
    # half the search budget, but enough to score every pattern once on a small budget
    budget = int(max(a.search_budget // 2,
                     min(0.3 * a.sampler.budget, 2 * len(patterns) * MIN_SCORE_SAMPLES)))
    a.n_score = int(np.clip(budget / (2 * max(1, len(patterns))), MIN_SCORE_SAMPLES, MAX_SCORE_SAMPLES))
    deadline = a.phase_deadline(0.35)
    # as many patterns as the budget scores at 2·n_score samples each (at least one)
    todo = patterns[: max(budget, 2 * a.n_score) // (2 * a.n_score)]
    _draw_ahead(a, todo, deadline)
    for p in todo:
        try:
            v = a.evaluate(p, deadline)
        except Exhausted:
            break
        a.note(p, v)
        a.pattern_keys.add(p.key)
        a.report("patterns", candidate=p.label)
    a.phases["patterns"] = {"pairs": len(a.pairs), "samples_per_pair": a.n_score}


def _draw_ahead(a: _Audit, pairs: list[Pair], deadline: Optional[float]) -> None:
    """Draw the scoring samples of ``pairs`` a chunk at a time, one executor call per chunk (a
    sandboxed mechanism pays one round trip per call: 89 of an audit's 144 went to scoring the
    patterns one by one). A chunk holds about one batch of samples, so a time limit is checked as
    often as in the other phases. The outputs are the ones :meth:`evaluate` would draw pair by
    pair (same seeds, same order); a chunk that would overrun the budget or the time limit is left
    to the pair-by-pair path, which stops where it always did."""
    chunk = max(1, a.sampler.batch_size // (2 * a.n_score))
    for i in range(0, len(pairs), chunk):
        part = [p for p in pairs[i:i + chunk] if p.key not in a.cache and p.key not in a.drawn]
        try:
            drawn = a.sampler.draw_pairs(part, a.s_score, a.n_score, deadline) if part else []
        except Exhausted:
            return
        a.drawn.update((p.key, d) for p, d in zip(part, drawn))


def _search(a: _Audit, strategy: Any) -> None:
    examples = int(min(100, (a.search_budget // 4) // (2 * a.n_score)))
    ranked = a.ranked()
    best = ranked[0][1] if ranked else -math.inf
    goal = best + 0.02 + 0.05 * abs(best) if np.isfinite(best) else 0.0
    budget_left, evaluate = a.climber("search", lambda pair: "hypothesis")

    if strategy is None:
        try:
            strategy = default_strategy(a.spec.neighbours, a.spec.domain, a.spec.size)
        except ImportError:  # hypothesis (the neighbour strategies) is not installed
            strategy = None
    out = targeted_search(evaluate, strategy, goal=goal, max_examples=examples,
                          seed=int(a.s_hyp.generate_state(1)[0]), budget_left=budget_left)
    for p, v in out.evaluated:
        if np.isfinite(v):
            a.note(Pair(p.dataset, p.neighbour, "hypothesis search"), v)
    if out.shrunk is not None:
        p, v = out.shrunk
        a.pairs.pop(p.key, None)
        a.note(p, v)
    a.phases["search"] = {"examples": len(out.evaluated), "goal": goal if np.isfinite(goal) else None,
                          "shrunk": out.shrunk is not None, "skipped": out.skipped}


def _refine(a: _Audit) -> None:
    evals = int((a.search_budget // 4) // (2 * a.n_score))
    starts = [pv for pv in a.ranked()[:3] if np.isfinite(pv[1])]
    budget_left, evaluate = a.climber("refine", lambda pair: pair.label)

    seen = refine(evaluate, a.spec.neighbours, a.spec.domain, a.spec.size, starts,
                  max_evals=evals, rng=generator(a.s_refine), budget_left=budget_left)
    for p, v in seen:
        if np.isfinite(v):
            a.note(p, v)
    a.phases["refine"] = {"evaluated": len(seen)}


def _race(a: _Audit) -> list[Candidate]:
    """Successive halving (Jamieson and Talwalkar 2016) over the pairs found: the best
    pairs of each stage of :data:`RACE` get a fresh sample each and are ranked by the honest
    (split-sample) projection; the best of them go on to the next, smaller stage with larger
    samples.
    The stage-1 scores are biased upward by the search that maximised them, so only fresh samples
    rank the finalists. Each finalist's event is chosen by two-fold cross-fitting on its sample
    (chosen on one half, confirmed on the other), and the winner's event is the one validated:
    re-choosing it on the whole sample would pick the luckiest of thousands of events again."""
    ranked = [p for p, _ in a.ranked()]
    if not ranked:
        return []
    # the best pairs overall, and the best structured patterns among them: a search that chased
    # lucky scores cannot crowd the patterns out of the race
    patterns = [p for p in ranked if p.key in a.pattern_keys][: RACE_PATTERNS]
    survivors = patterns + [p for p in ranked if p.key not in {q.key for q in patterns}]
    survivors = sorted(survivors[: max(RACE[0][0], a.k)], key=lambda p: ranked.index(p))
    survivors += [p for p in ranked if p not in survivors]
    deadline = a.phase_deadline(0.5)
    stages = tuple((max(width, a.k), share) for width, share in RACE)
    cands: list[Candidate] = []
    record = []
    carry = 0
    for i, ((width, share), seed) in enumerate(zip(stages, a.s_select.spawn(len(stages)))):
        budget = int(share * a.sampler.budget) + carry
        last = i == len(stages) - 1
        if budget < 2 * width * MIN_RACE_SAMPLES:
            if not last:  # too small to rank this many pairs: leave the samples to the next stage
                carry = budget
                continue
            width = max(a.k, budget // (2 * MIN_RACE_SAMPLES))
        carry = 0
        pool = survivors[:width]
        n = max(MIN_SCORE_SAMPLES, budget // (2 * len(pool)))
        cands = []
        for p, s in zip(pool, seed.spawn(len(pool))):
            try:
                yd, yp = a.sampler.draw_pair(p, s, n, deadline)
            except Exhausted:
                break
            ranking = choose_event(yd, yp, a.sampler.encoder.schema, n_val=a.lam, alpha=a.alpha,
                                   delta=a.spec.delta, paired=True, honest=True, folds=2)
            a.report("select", candidate=p.label)
            if ranking is not None:
                cands.append(Candidate(p, ranking, (yd, yp)))
        if not cands:
            break
        cands.sort(key=lambda c: -c.choice.projected)
        survivors = [c.pair for c in cands]
        record.append({"pairs": len(pool), "samples_per_pair": n,
                       "honest_projection": [(c.pair.label, c.choice.projected) for c in cands]})
    out = cands[: a.k]
    a.phases["select"] = record
    return out


def _validate(a: _Audit, cand: Candidate, lam: float, seeds: tuple, deadline: Optional[float],
              kept: Optional[list]) -> Counts:
    """Count the candidate's event on fresh samples with Poisson sizes (module docstring)."""
    c = cand.choice
    paired = c.method == "paired"
    rng = generator(seeds[2])
    n_num = int(rng.poisson(lam))
    n_den = n_num if paired else int(rng.poisson(lam))

    def progress(counts: Counts) -> None:
        a.report("validate", candidate=cand.pair.label, epsilon_lb=None, validated=counts.n_num)

    return a.sampler.count(cand.pair, c.event, paired=paired, n_num=n_num, n_den=n_den,
                           seeds=(seeds[0], seeds[1]), numerator=c.numerator, deadline=deadline,
                           lam=None if paired else lam, progress=progress, keep=kept)


def _bound(a: _Audit, cand: Candidate, counts: Counts) -> Bound:
    c = cand.choice
    method, split = c.method, c.split
    if not counts.usable(method):
        method, split = "marginal", (0.5, 0.5)
    return validated_bound(method, counts, a.alpha, split, a.spec.delta, a.spec.epsilon)


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
        _score_patterns(a, patterns)
        if sampler.remaining and a.ranked() and a.n_score >= MIN_SEARCH_SAMPLES:
            _search(a, strategy)
            _refine(a)
        elif a.ranked():
            a.phases["search"] = {"skipped": f"scoring samples below {MIN_SEARCH_SAMPLES} per pair"}
        cands = _race(a)[: validate]
        out.validated = len(cands)
        best: Optional[tuple] = None
        # what is left, less room for the Poisson draws to exceed their mean (by > 5 sd: < 1e-6)
        left = sampler.remaining
        lam = max(1.0, (left - 5.0 * math.sqrt(2.0 * left) - 2.0) / (2.0 * max(1, len(cands))))
        seeds = a.s_val.spawn(max(1, len(cands)))
        for cand, s in zip(cands, seeds):
            kept: list = [[], []]
            counts = _validate(a, cand, lam, tuple(s.spawn(3)), deadline, kept)
            if counts.n_num == 0 or counts.n_den == 0:
                out.timed_out = True
                continue
            b = _bound(a, cand, counts)
            if best is None or b.epsilon_lb > best[0].epsilon_lb:
                best = (b, cand, counts, kept)
            a.report("validate", candidate=cand.pair.label, epsilon_lb=b.epsilon_lb)
        if best is not None:
            out.bound, out.candidate, out.counts, out.kept = best
        elif cands:
            out.candidate = cands[0]
    except MechanismError as exc:
        out.error = exc
    out.samples = sampler.used
    out.schema = encoder.schema
    out.encoder = encoder
    out.timed_out = out.timed_out or sampler.time_cut
    out.phases = a.phases
    a.report("done", epsilon_lb=None if out.bound is None else out.bound.epsilon_lb)
    return out

