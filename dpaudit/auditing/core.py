"""The sampled core: the state of one look of a sampled audit and its pair search, whatever the
objective the look bounds.

Two objectives run on it: the point ε of the sampled audit (:class:`dpaudit.auditing.sampled._Audit`:
a pair's projected ε_LB, the race, Clopper-Pearson on the validated counts) and the curve gap of the
curve audit (:class:`dpaudit.curves.audit._Run`: a pair's projected max_ε δ_LB(ε)/δ_claim(ε), a
simultaneous band on the validated counts). An objective is a :class:`Core` subclass that says what
a pair scores on its scoring sample (:meth:`Core.score`), how far a searched pair must beat the best
(:meth:`Core.beyond`), and how many samples it scores a pair on; it brings its own selection and
validation. The core gives every look the same discipline:

* one seed per phase: ``root_sequence(seed).spawn(5)`` → scoring (common random numbers: the
  same seeds for every pair, so the score is a deterministic function of the pair and differences
  between pairs are estimated with little noise), hypothesis, refinement, selection, validation;
* the budget split: :data:`SEARCH_SHARE` of at most :data:`~dpaudit.auditing.sampler.SELECTION_BASE`
  samples to the search, the objective's ``select_share`` to its selection, the rest to
  validation (counts only), so no sample that chooses the pair or the event is validated on;
* the pair search (:func:`search_pairs`, :mod:`dpaudit.search.pipeline`): patterns (drawn a chunk
  at a time, :func:`_draw_ahead`), levels for ``linf`` / ``l1``, hypothesis-targeted search and
  refinement, on :data:`LEVEL_SHARE` and the rest of the search budget, then the float-rounding
  patterns and the numeric corners (:func:`corner_pairs`: :func:`dpaudit.search.pairs.candidates`
  without the structured patterns; sums crossing 2^50 and 2^53, overflow of float32 and float64,
  subnormals, ties) on :data:`CORNER_SHARE` of the search budget beside it (their samples come
  from validation's; the patterns and the phases after them keep their budgets, samples per pair
  and pairs), all stopping at 35% of any time limit (StatDP, Ding et al. 2018 §5, for the
  patterns; Löscher and Sagonas 2017 for the targeted search; Casacuberta et al. 2022 for the
  rounding patterns). A corner pair enters the race only where it beats the best pair before it
  by the search's margin (:meth:`Core.goal`, as the level search's pairs do), and refutes only
  on the race's fresh samples and validation's.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from dpaudit.auditing.race import MIN_SCORE_SAMPLES
from dpaudit.auditing.sampler import Exhausted, Sampler
from dpaudit.claims import Neighbours
from dpaudit.neighbours.pair import Pair
from dpaudit.rng import generator, root_sequence
from dpaudit.search.levels import LEVEL_RELATIONS
from dpaudit.search.pairs import candidates, in_turn, typical_pairs
from dpaudit.search.pipeline import PairSearch
from dpaudit.spec import MechanismSpec

__all__ = ["Core", "search_pairs", "corner_pairs", "SEARCH_SHARE", "MIN_SEARCH_SAMPLES",
           "MAX_SCORE_SAMPLES", "SCORE_BYTES", "DRAW_AHEAD_BYTES", "LEVEL_SHARE", "CORNER_SHARE"]

#: the search's share of the selection base (the budget, at most SELECTION_BASE)
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
#: the numeric corners' share, beside the search budget (not out of it: the patterns and the
#: phases after them keep theirs; the corners' samples are taken from what validation gets)
CORNER_SHARE = 0.25


class Core:
    """State shared by the phases of one look (module docstring). Subclasses set the objective:
    :meth:`score`, and optionally :meth:`beyond`, :meth:`also`, :attr:`min_score` and
    :attr:`max_score` (the per-pair scoring samples, per dataset)."""

    min_score = MIN_SCORE_SAMPLES
    max_score = MAX_SCORE_SAMPLES

    def __init__(self, spec: MechanismSpec, sampler: Sampler, seed: int, *, select_share: float,
                 deadline: Optional[float] = None, progress: Optional[Callable] = None) -> None:
        self.spec = spec
        self.sampler = sampler
        self.root = root_sequence(seed)
        self.s_score, self.s_hyp, self.s_refine, self.s_select, self.s_val = self.root.spawn(5)
        self.seed = seed
        self.deadline = deadline
        self.t0 = time.monotonic()
        self.progress = progress
        self.cache: dict = {}
        self.drawn: dict = {}  # scoring samples drawn ahead (pattern scoring), by pair key
        self.n_score = self.min_score
        base = sampler.selection_base  # the budget, capped: the rest goes to validation (counts only)
        self.search_budget = int(SEARCH_SHARE * base)
        self.corner_budget = int(CORNER_SHARE * self.search_budget)
        self.select_budget = int(select_share * base)
        self.best_estimate = -math.inf
        self.search = PairSearch(self.evaluate, spec.neighbours, spec.domain, spec.size)
        self.phases = self.search.phases

    # -------------------------------------------------------------- the objective
    def score(self, yd: np.ndarray, yp: np.ndarray) -> float:
        """The objective's projected value of the pair's best event on its scoring sample
        (higher: the claim looks easier to refute on this pair)."""
        raise NotImplementedError

    def also(self, yd: np.ndarray, yp: np.ndarray, pair: Pair) -> None:
        """Score other questions on a structured pattern's sample (none by default)."""

    def beyond(self, best: float) -> float:
        """What a searched pair must score to count as a find when the best so far is ``best``
        (finite): the best plus a margin on the objective's own scale."""
        return best + 0.02 + 0.05 * abs(best)

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

    def evaluate(self, pair: Pair, deadline: Optional[float] = None, others: bool = False) -> float:
        """:meth:`score` of the pair on its scoring sample (common seeds; cached, so
        deterministic). With ``others`` (the structured patterns), :meth:`also` sees the sample."""
        hit = self.cache.get(pair.key)
        if hit is not None:
            return hit
        drawn = self.drawn.pop(pair.key, None)
        yd, yp = drawn if drawn is not None else self.sampler.draw_pair(pair, self.s_score, self.n_score, deadline)
        v = self.score(yd, yp)
        if others:
            self.also(yd, yp, pair)
        self.cache[pair.key] = v
        if v > self.best_estimate:
            self.best_estimate = v
        return v

    def ranked(self) -> list[tuple[Pair, float]]:
        return self.search.ranked()

    def goal(self) -> float:
        """What a searched pair must score to count as a find: :meth:`beyond` the best so far."""
        ranked = self.ranked()
        best = ranked[0][1] if ranked else -math.inf
        return self.beyond(best) if np.isfinite(best) else 0.0

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

def search_pairs(c: Core, patterns: list[Pair], strategy: Any = None, *, searching: bool = True,
                 level_share: float = LEVEL_SHARE, corners: Sequence[Pair] = ()) -> None:
    """Phases 1-4 (module docstring): score ``patterns``, then, when ``searching`` and each
    pair's score uses at least :data:`MIN_SEARCH_SAMPLES`, the level search (``linf`` / ``l1``,
    on ``level_share`` of the search budget), the targeted search and the refinement (a quarter
    each of the search budget, or what the level search left of half of it); then, when
    ``searching``, the numeric corners (:func:`_score_corners`, on :attr:`Core.corner_budget`).
    The corners come last so that every phase before them scores the pairs it scored without
    them, on the same samples (common seeds) and with the same goal."""
    _score_patterns(c, patterns)
    if searching and c.sampler.remaining and c.ranked() and c.n_score >= MIN_SEARCH_SAMPLES:
        share = 0.25  # of the search budget, to each of the phases after the patterns
        if Neighbours.parse(c.spec.neighbours) in LEVEL_RELATIONS:
            _levels(c, level_share)
            share = (0.5 - level_share) / 2
        _search(c, strategy, share)
        _refine(c, share)
    elif searching and c.ranked():
        c.phases["search"] = {"skipped": f"scoring samples below {MIN_SEARCH_SAMPLES} per pair"}
    if searching and corners and c.ranked():
        _score_corners(c, list(corners))


def corner_pairs(spec: MechanismSpec, seed: int) -> list[Pair]:
    """The float-rounding patterns and the numeric corners of ``spec``'s relation, domain and size
    (:func:`dpaudit.search.pairs.candidates` without the structured patterns, which the audit
    scores on their own budget), in that order: the corners' first kind of pair at the largest
    size for every corner value, then the next kinds and sizes, then the mixed values in an
    order drawn from ``seed``. A spec states real records in its domain, so the corners are the
    float64 ones (``integers=False``; :func:`~dpaudit.search.pairs.corner_values` keeps only
    values inside the domain). The pairs of datasets as a mechanism mostly meets them, which no
    pattern or corner visits (:func:`~dpaudit.search.pairs.typical_pairs`: sizes between the
    ends, records at grid values, drawn datasets), come in turn with them, so that a look that
    scores a few corners scores both kinds. Fixed by the claim and the seed, before any output
    is seen."""
    return in_turn(typical_pairs(spec.neighbours, spec.domain, spec.size, int(seed)),
                   list(candidates(spec.neighbours, spec.domain, spec.size, int(seed), structured=False)))


def _score_corners(c: Core, corners: list[Pair]) -> None:
    """The numeric-corner sub-phase: as many of ``corners`` (:func:`corner_pairs`, in order,
    less those already scored in either order) as :attr:`Core.corner_budget` scores at the
    patterns' ``n_score`` samples per dataset, stopping at 35% of any time limit. A corner enters
    the race only where it scores :meth:`Core.goal` (a clear gain over the best pair before the
    corners), as a level-search pair does: dozens of corners scored on small samples would
    otherwise bring their noise into the race (the best of many noisy scores is biased up) and
    take race samples from the pairs that earned them. It is noted as a searched pair (no
    reserved race slot): only the race's fresh samples and the validation decide whether it
    refutes. Recorded in ``phases["corners"]`` (``entered``: the corners that reached the goal)."""
    per = 2 * c.n_score
    goal = c.goal()
    scored_keys = c.search.pairs.keys()
    fresh = [p for p in corners
             if p.key not in scored_keys and (p.key[1], p.key[0]) not in scored_keys]
    todo = fresh[: c.corner_budget // per]
    deadline = c.phase_deadline(0.35)
    before = c.sampler.used
    _draw_ahead(c, todo, deadline)
    scored = entered = 0
    for p in todo:
        if deadline is not None and time.monotonic() >= deadline:
            break
        try:
            v = c.evaluate(p, deadline)
        except Exhausted:
            break
        scored += 1
        if np.isfinite(v) and v >= goal:
            c.search.note(p, v)
            entered += 1
        c.report("corners", candidate=p.label)
    c.phases["corners"] = {"pairs": scored, "of": len(fresh), "samples_per_pair": c.n_score,
                           "samples": c.sampler.used - before, "entered": entered,
                           "goal": goal if math.isfinite(goal) else None}


def _score_patterns(c: Core, patterns: list[Pair]) -> None:
    # half the search budget, but enough to score every pattern once on a small budget
    budget = int(max(c.search_budget // 2,
                     min(0.3 * c.sampler.selection_base, 2 * len(patterns) * c.min_score)))
    most = min(c.max_score, max(c.min_score, c.sampler.rows_within(SCORE_BYTES)))
    c.n_score = int(np.clip(budget / (2 * max(1, len(patterns))), c.min_score, most))
    deadline = c.phase_deadline(0.35)
    # as many patterns as the budget scores at 2·n_score samples each (at least one)
    todo = patterns[: max(budget, 2 * c.n_score) // (2 * c.n_score)]
    _draw_ahead(c, todo, deadline)
    c.search.patterns(todo, lambda p: c.evaluate(p, deadline, others=True), stop=(Exhausted,),
                      each=lambda p: c.report("patterns", candidate=p.label))
    c.phases["patterns"] = {"pairs": len(c.search.pairs), "samples_per_pair": c.n_score}


def _draw_ahead(c: Core, pairs: list[Pair], deadline: Optional[float]) -> None:
    """Draw the scoring samples of ``pairs`` a chunk at a time, one executor call per chunk (a
    sandboxed mechanism pays one round trip per call: 89 of an audit's 144 went to scoring the
    patterns one by one). A chunk holds about one batch of samples, so a time limit is checked as
    often as in the other phases. The outputs are the ones :meth:`Core.evaluate` would draw pair
    by pair (same seeds, same order); a chunk that would overrun the budget or the time limit is
    left to the pair-by-pair path, which stops where it always did, and so are the pairs after
    the first :data:`DRAW_AHEAD_BYTES` drawn (wide outputs: 60 patterns of a 2,000-coordinate
    vector held at once were 900 MB)."""
    chunk = max(1, c.sampler.batch_size // (2 * c.n_score))
    held = 0
    for i in range(0, len(pairs), chunk):
        part = [p for p in pairs[i:i + chunk] if p.key not in c.cache and p.key not in c.drawn]
        if held >= DRAW_AHEAD_BYTES:
            return
        try:
            drawn = c.sampler.draw_pairs(part, c.s_score, c.n_score, deadline) if part else []
        except Exhausted:
            return
        c.drawn.update((p.key, d) for p, d in zip(part, drawn))
        held += sum(y.nbytes for d in drawn for y in d)


def _levels(c: Core, level_share: float) -> None:
    """The level search from the best pairs, on ``level_share`` of the search budget; only
    pairs that beat the patterns by the search's margin (:meth:`Core.goal`) enter the race."""
    evals = int(level_share * c.search_budget) // (2 * c.n_score)
    starts = [pv for pv in c.ranked() if np.isfinite(pv[1])]
    budget_left, evaluate = c.climber("levels", lambda pair: pair.label, share=level_share)
    c.search.levels(evaluate, starts, evals=evals, budget_left=budget_left, goal=c.goal())


def _search(c: Core, strategy: Any, share: float = 0.25) -> None:
    examples = int(min(100, int(share * c.search_budget) // (2 * c.n_score)))
    goal = c.goal()
    budget_left, evaluate = c.climber("search", lambda pair: "hypothesis", share=share)
    c.search.targeted(evaluate, strategy, goal=goal, examples=examples,
                      seed=int(c.s_hyp.generate_state(1)[0]), budget_left=budget_left,
                      label="hypothesis search")


def _refine(c: Core, share: float = 0.25) -> None:
    evals = int(share * c.search_budget) // (2 * c.n_score)
    starts = [pv for pv in c.ranked()[:3] if np.isfinite(pv[1])]
    budget_left, evaluate = c.climber("refine", lambda pair: pair.label, share=share)
    c.search.refine(evaluate, starts, evals=evals, rng=generator(c.s_refine), budget_left=budget_left)
