"""Exact-pair search: the neighbouring pair with the largest exact privacy loss (or exact δ).

For a spec with its exact output law (``distribution(data)``: a dpaudit law or a frozen scipy
distribution), the objective of a pair is

* pure claims: the exact loss L(D, D') = sup_y |ln p_D(y) − ln p_D'(y)| (:func:`pair_loss`);
* (ε, δ) claims: the exact hockey-stick δ(ε) = max of ∫(p − e^ε q)⁺ over both directions
  (Balle, Barthe and Gaboardi 2018, Thm 1), here on the dense grid of
  :mod:`dpaudit.estimators.exact` (the final pair is re-evaluated exactly, from the masses of
  the optimal event: :func:`~dpaudit.estimators.exact.hockey_stick`).

For a spec with only ``log_prob(data, y)``, the output space is not known: the loss is the largest
|ln p_D(y) − ln p_D'(y)| over outputs y sampled from both datasets (with a grid between them for
real outputs), a lower bound on the pair's exact loss that is exact at those outputs.

The search is the sampled auditor's pipeline (:mod:`dpaudit.search.pipeline`) with the exact
objective: structured patterns, the level search (``linf`` / ``l1``), then hypothesis-targeted
search (so the worst pair is shrunk), then local refinement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from dpaudit.claims import Neighbours
from dpaudit.errors import MechanismError
from dpaudit.estimators.exact import evaluation_grid, hockey_stick, pair_loss
from dpaudit.laws import ContinuousLaw, as_law
from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.neighbours.relations import Pair
from dpaudit.rng import generator, root_sequence
from dpaudit.search.levels import LEVEL_RELATIONS
from dpaudit.search.pipeline import PairSearch
from dpaudit.spec import MechanismSpec

__all__ = ["ExactObjective", "ExactSearch", "search_exact"]


def _call_law(spec: MechanismSpec, data: tuple) -> Any:
    try:
        return as_law(spec.distribution(np.asarray(data, dtype=float)))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        raise MechanismError(f"distribution raised {type(exc).__name__}: {exc}", np.asarray(data)) from exc


class ExactObjective:
    """Exact loss and δ of pairs of one spec (module docstring)."""

    def __init__(self, spec: MechanismSpec, seed: int, outputs: int = 400) -> None:
        self.spec = spec
        self.seed = seed
        self.outputs = outputs
        self.by_law = spec.distribution is not None

    def laws(self, pair: Pair) -> tuple:
        return _call_law(self.spec, pair.dataset), _call_law(self.spec, pair.neighbour)

    def loss(self, pair: Pair) -> tuple[float, Any]:
        """(exact loss, an output where it is attained)."""
        if self.by_law:
            P, Q = self.laws(pair)
            pl = pair_loss(P, Q)
            return pl.epsilon, pl.witness
        return self._logprob_loss(pair)

    def delta(self, pair: Pair, epsilon: float, exact: bool = False) -> float:
        """max over both directions of δ(ε); grid approximation unless ``exact``."""
        if not self.by_law:
            return math.nan
        P, Q = self.laws(pair)
        if exact or not (isinstance(P, ContinuousLaw) and isinstance(Q, ContinuousLaw)):
            return max(hockey_stick(P, Q, epsilon), hockey_stick(Q, P, epsilon))
        g = evaluation_grid(P, Q, n=4001)
        p, q = P.dist.pdf(g), Q.dist.pdf(g)
        e = math.exp(epsilon)
        return float(max(np.trapezoid(np.maximum(p - e * q, 0), g), np.trapezoid(np.maximum(q - e * p, 0), g)))

    def objective(self, pair: Pair) -> float:
        if self.spec.delta > 0 and self.by_law:
            return self.delta(pair, self.spec.epsilon)
        return self.loss(pair)[0]

    # ----------------------------------------------------------------- log_prob only
    def _outputs(self, pair: Pair) -> list:
        rng = generator(root_sequence(self.seed))
        ys: list = []
        for d in (pair.dataset, pair.neighbour):
            out = self.spec.call_batch(np.asarray(d, dtype=float), rng, self.outputs)
            ys.extend(list(out))
        try:
            vals = np.asarray(ys, dtype=float)
            if vals.ndim == 1 and np.all(np.isfinite(vals)):
                lo, hi = vals.min(), vals.max()
                width = max(hi - lo, 1.0)
                ys = list(np.unique(np.concatenate([vals, np.linspace(lo - width, hi + width, 401)])))
        except (TypeError, ValueError):
            pass
        return ys

    def _logprob(self, data: tuple, ys: list) -> np.ndarray:
        f = self.spec.log_prob
        x = np.asarray(data, dtype=float)
        try:
            try:
                v = np.asarray(f(x, np.asarray(ys)), dtype=float)
                if v.shape == (len(ys),):
                    return v
            except Exception:
                pass
            return np.array([float(f(x, y)) for y in ys])
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            raise MechanismError(f"log_prob raised {type(exc).__name__}: {exc}", x) from exc

    def _logprob_loss(self, pair: Pair) -> tuple[float, Any]:
        ys = self._outputs(pair)
        lp, lq = self._logprob(pair.dataset, ys), self._logprob(pair.neighbour, ys)
        with np.errstate(invalid="ignore"):
            d = np.abs(lp - lq)
        d = np.where(np.isneginf(lp) & np.isneginf(lq), 0.0, d)
        d = np.where(np.isnan(d), np.inf, d)
        k = int(np.argmax(d))
        return float(d[k]), ys[k]


@dataclass(frozen=True, slots=True)
class ExactSearch:
    """The worst pair found and what the search did."""

    pair: Pair
    value: float
    evaluated: int
    phases: dict


def search_exact(spec: MechanismSpec, *, seed: int, examples: int = 200,
                 strategy: Any = None, objective: Optional[ExactObjective] = None) -> ExactSearch:
    """Maximise the exact objective over neighbouring pairs (module docstring)."""
    obj = objective or ExactObjective(spec, seed)
    s_hyp, s_ref = root_sequence(seed).spawn(2)
    search = PairSearch(obj.objective, spec.neighbours, spec.domain, spec.size)
    patterns = structured_pairs(spec.neighbours, spec.domain, spec.size, both_orders=False)
    search.patterns(patterns, search.value)
    cache = search.values
    best = max(cache.values()) if cache else -math.inf
    search.phases["patterns"] = len(patterns)
    count = {"n": 0}

    def budget_left() -> bool:
        count["n"] += 1
        return count["n"] <= 4 * examples

    if Neighbours.parse(spec.neighbours) in LEVEL_RELATIONS:
        search.levels(search.value, search.best_evaluated(len(cache)), evals=max(12, examples // 8),
                      budget_left=lambda: True, keep=len(cache))
    best = max(cache.values()) if cache else -math.inf
    goal = best + 1e-6 * max(1.0, abs(best)) if np.isfinite(best) else math.inf
    out = search.targeted(search.value, strategy, goal=goal, examples=examples,
                          seed=int(s_hyp.generate_state(1)[0]), budget_left=budget_left,
                          record_goal=False)
    search.refine(search.value, search.best_evaluated(3), evals=max(20, examples // 2),
                  rng=generator(s_ref), budget_left=lambda: True)
    # the best value; ties go to the earliest (simplest) pair: patterns, then the shrunk winner
    order = list(cache)
    if out.shrunk is not None and out.shrunk[0].key in cache:
        order.remove(out.shrunk[0].key)
        order.insert(len(patterns), out.shrunk[0].key)
    top = max(cache.values())
    key = next(k for k in order if cache[k] >= top - 1e-12 * max(1.0, abs(top)))
    return ExactSearch(search.labels[key], cache[key], len(cache), search.phases)
