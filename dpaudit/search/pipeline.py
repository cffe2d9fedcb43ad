"""The one pair-search pipeline: structured patterns → levels → hypothesis-targeted search →
refinement.

Both audits search neighbouring pairs for the largest value of an objective: the sampled audit
(:mod:`dpaudit.auditing.sampled`, a projected ε_LB on a small sample drawn on common seeds) and the
exact audit (:mod:`dpaudit.auditing.exact_search`, the exact loss or δ(ε)). The objective must be a
deterministic function of the pair, so that hypothesis can shrink the winner.

1. **patterns**: every structured pair of the relation (:mod:`dpaudit.neighbours.patterns`;
   StatDP, Ding et al. 2018, §5.1);
2. **levels** (``linf`` / ``l1``): a pattern search over the base levels and steps of blocks of
   coordinates from the best pairs, then shrunk (:mod:`dpaudit.search.levels`);
3. **targeted**: hypothesis generates pairs from the relation's strategy and is steered toward
   large values with ``target()`` (Löscher and Sagonas 2017); a pair beating ``goal`` is shrunk
   (:mod:`dpaudit.search.targeted`);
4. **refine**: steepest-ascent hill-climb from the three best pairs (:mod:`dpaudit.search.refine`).

:class:`PairSearch` keeps every value computed (by ordered pair) and the first label of each
distinct unordered pair, so nothing evaluated is lost and a pair found twice is scored once.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.neighbours.pair import Pair
from dpaudit.search.levels import level_search
from dpaudit.search.refine import refine
from dpaudit.search.targeted import default_strategy, targeted_search

__all__ = ["PairSearch"]


class PairSearch:
    """State and phases of one pair search over ``objective(pair) -> float`` (module docstring)."""

    def __init__(self, objective: Callable[[Pair], float], relation: Any, domain: Any, size: int) -> None:
        self.objective = objective
        self.relation, self.domain, self.size = relation, domain, size
        self.values: dict = {}       # ordered pair key -> value (the cache)
        self.labels: dict = {}       # ordered pair key -> the pair as first evaluated
        self.pairs: dict = {}        # one key per unordered pair -> (pair, value), first label kept
        self.pattern_keys: set = set()
        self.shrunk: Optional[tuple] = None
        self.phases: dict = {}

    # ------------------------------------------------------------------ bookkeeping
    def value(self, pair: Pair) -> float:
        """The objective of ``pair`` (computed once per ordered pair)."""
        hit = self.values.get(pair.key)
        if hit is not None:
            return hit
        v = float(self.objective(pair))
        self.values[pair.key] = v
        self.labels.setdefault(pair.key, pair)
        return v

    def note(self, pair: Pair, v: float) -> None:
        """Remember the first label of each distinct (unordered) pair and its value."""
        key = pair.key if pair.key in self.pairs else (pair.key[1], pair.key[0])
        if key not in self.pairs:
            self.pairs[pair.key] = (pair, v)

    def ranked(self) -> list[tuple[Pair, float]]:
        """Distinct pairs noted, best first."""
        return sorted(self.pairs.values(), key=lambda pv: -pv[1])

    def best_evaluated(self, k: int) -> list[tuple[Pair, float]]:
        """The ``k`` best ordered pairs evaluated, with finite values."""
        top = sorted(self.values.items(), key=lambda kv: -kv[1])[:k]
        return [(self.labels[key], v) for key, v in top if np.isfinite(v)]

    # ------------------------------------------------------------------ phases
    def patterns(self, pairs: list[Pair], score: Callable[[Pair], float],
                 stop: tuple = (), each: Optional[Callable[[Pair], None]] = None) -> None:
        """Phase 1: score every structured pair (until ``score`` raises one of ``stop``)."""
        for p in pairs:
            try:
                v = score(p)
            except stop:
                break
            self.note(p, v)
            self.pattern_keys.add(p.key)
            if each is not None:
                each(p)

    def targeted(self, evaluate: Callable[[Pair], float], strategy: Any, *, goal: float,
                 examples: int, seed: int, budget_left: Callable[[], bool],
                 label: Optional[str] = None, record_goal: bool = True) -> Any:
        """Phase 3: hypothesis-targeted search; every finite pair evaluated is noted (relabelled
        ``label`` when given) and the shrunk winner replaces its earlier note."""
        if strategy is None:
            try:
                strategy = default_strategy(self.relation, self.domain, self.size)
            except ImportError:
                strategy = None
        out = targeted_search(evaluate, strategy, goal=goal, max_examples=examples, seed=seed,
                              budget_left=budget_left)
        for p, v in out.evaluated:
            if np.isfinite(v):
                self.note(p if label is None else p.relabelled(label), v)
        if out.shrunk is not None:
            p, v = out.shrunk
            self.labels[p.key] = p
            self.pairs.pop(p.key, None)
            self.note(p, v)
            self.shrunk = out.shrunk
        rec: dict = {"examples": len(out.evaluated)}
        if record_goal:
            rec["goal"] = goal if math.isfinite(goal) else None
        rec.update(shrunk=out.shrunk is not None, skipped=out.skipped)
        self.phases["search"] = rec
        return out

    def levels(self, evaluate: Callable[[Pair], float], starts: list[tuple[Pair, float]], *,
               evals: int, budget_left: Callable[[], bool], keep: int = 2,
               goal: float = -math.inf) -> list:
        """Phase 2: level search from ``starts``; the ``keep`` best pairs it evaluated that reach
        ``goal`` are noted (a climb scores many near-copies of one pair, and the best of many
        noisy scores is biased up: only a clear gain over the patterns enters the race). They are
        structured pairs, so they compete with the patterns for the race's reserved slots (the
        refinement's many near-copies of them cannot crowd them out)."""
        seen = level_search(evaluate, self.relation, self.domain, self.size, starts,
                            max_evals=evals, budget_left=budget_left)
        for p, v in sorted((pv for pv in seen if np.isfinite(pv[1]) and pv[1] >= goal),
                           key=lambda pv: -pv[1])[:keep]:
            self.note(p, v)
            self.pattern_keys.add(p.key)  # a structured pair: it competes for the patterns' race slots
        best = max(seen, key=lambda pv: pv[1], default=None)
        self.phases["levels"] = {"evaluated": len(seen),
                                 "best": None if best is None else best[0].label}
        return seen

    def refine(self, evaluate: Callable[[Pair], float], starts: list[tuple[Pair, float]], *,
               evals: int, rng: np.random.Generator, budget_left: Callable[[], bool]) -> list:
        """Phase 4: hill-climb from ``starts``; every finite pair evaluated is noted."""
        seen = refine(evaluate, self.relation, self.domain, self.size, starts, max_evals=evals,
                      rng=rng, budget_left=budget_left)
        for p, v in seen:
            if np.isfinite(v):
                self.note(p, v)
        self.phases["refine"] = {"evaluated": len(seen)}
        return seen
