"""Hypothesis-driven pair search: climb toward the pairs with the largest cheap privacy-loss estimate,
and let hypothesis shrink the winner into a small, readable counterexample.

``hypothesis.find(strategy, condition)`` generates neighbouring pairs from the relation's strategy
(:func:`dpaudit.neighbours.strategies.neighbouring_pairs`, injectable), and the condition reports
each pair's estimate with ``hypothesis.target`` so generation is steered toward high values
(Löscher and Sagonas 2017, targeted property-based testing; hypothesis's ``target()``). The
condition holds when a pair beats ``goal`` (the best structured pattern plus a margin); hypothesis
then shrinks that pair toward small datasets and simple values while it still beats the goal.
Every pair evaluated on the way (exploration and shrinking) is recorded, so nothing computed is
lost when no pair beats the goal.

The estimate must be a deterministic function of the pair (the auditor evaluates every pair on the
same seeds), so shrinking is meaningful. The draws are a function of ``seed`` only: hypothesis
takes no constants from the source of the modules the process imported
(:mod:`dpaudit.search.seeded`). A mechanism error inside the search is held and re-raised after
hypothesis returns, not shrunk by it. A search nested inside a running hypothesis test
(``@given``) is skipped, since hypothesis forbids nesting.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.errors import MechanismError
from dpaudit.neighbours.relations import Pair
from dpaudit.search.seeded import seed_only

__all__ = ["TargetedOutcome", "targeted_search", "default_strategy"]


@dataclass(slots=True)
class TargetedOutcome:
    """What the search saw: every (pair, value) evaluated, the shrunk winner if one beat the goal,
    and why it stopped early (``skipped``), if it did."""

    evaluated: list = field(default_factory=list)
    shrunk: Optional[tuple] = None
    skipped: Optional[str] = None

    def best(self) -> Optional[tuple]:
        return max(self.evaluated, key=lambda pv: pv[1]) if self.evaluated else None


def default_strategy(relation: Any, domain: Any, size: int):
    """Neighbouring pairs drawn by the relation's hypothesis strategy (dpaudit.neighbours.strategies),
    sizes as the relation allows."""
    from dpaudit.neighbours.relations import allowed_sizes
    from dpaudit.neighbours.strategies import neighbouring_pairs

    lo, hi = allowed_sizes(relation, size)
    if hi < 1:
        return None
    return neighbouring_pairs(relation, domain, (lo, hi))


class _Stop(Exception):
    """Ends a search whose generation no longer finds new pairs."""


def _as_pair(x: Any) -> Pair:
    if isinstance(x, Pair):
        return x if x.label else Pair.of(x.dataset, x.neighbour, "hypothesis")
    d = getattr(x, "dataset", None)
    if d is not None:
        return Pair.of(np.asarray(d).reshape(-1), np.asarray(x.neighbour).reshape(-1), "hypothesis")
    a, b = x
    return Pair.of(a, b, "hypothesis")


def targeted_search(evaluate: Callable[[Pair], float], strategy: Any, *, goal: float,
                    max_examples: int, seed: int, budget_left: Callable[[], bool]) -> TargetedOutcome:
    """Search ``strategy`` for pairs with a large ``evaluate`` (module docstring).

    ``budget_left()`` is consulted before every evaluation; when it says no, the remaining examples
    are rejected at no cost, which ends generation and shrinking quickly.
    """
    from hypothesis import HealthCheck, Phase, find, settings, target
    from hypothesis.errors import FailedHealthCheck, NoSuchExample, Unsatisfiable

    out = TargetedOutcome()
    if strategy is None or max_examples <= 0:
        out.skipped = "no strategy" if strategy is None else "no budget"
        return out
    held: list[MechanismError] = []
    memo: dict = {}
    calls = [0]
    max_calls = 20 * max_examples + 200

    def condition(x: Any) -> bool:
        calls[0] += 1
        if calls[0] > max_calls:  # hypothesis's target phase can spin on a plateau: stop it
            raise _Stop
        pair = _as_pair(x)
        v = memo.get(pair.key)
        if v is None:  # a pair seen before keeps its answer (hypothesis re-executes examples)
            if held or not budget_left():
                return False
            try:
                v = float(evaluate(pair))
            except MechanismError as exc:
                held.append(exc)
                return False
            memo[pair.key] = v
            out.evaluated.append((pair, v))
        if np.isfinite(v):
            target(v, label="epsilon estimate")
        return v >= goal

    cfg = settings(max_examples=max_examples, database=None, derandomize=False, deadline=None,
                   phases=(Phase.generate, Phase.target, Phase.shrink),
                   suppress_health_check=list(HealthCheck))
    try:
        with seed_only():  # the draws depend on the seed only, not on the modules imported
            found = find(strategy, condition, settings=cfg, random=random.Random(seed))
        pair = _as_pair(found)
        value = next((v for p, v in reversed(out.evaluated) if p.key == pair.key), None)
        if value is not None:
            out.shrunk = (Pair(pair.dataset, pair.neighbour, "hypothesis search (shrunk)"), value)
    except (NoSuchExample, Unsatisfiable):
        pass
    except FailedHealthCheck as exc:
        out.skipped = ("nested inside a running hypothesis test" if "Nest" in str(exc)
                       else f"hypothesis health check: {str(exc).splitlines()[0]}")
    except MechanismError:
        raise
    except _Stop:
        out.skipped = f"stopped after {max_calls} calls"
    except Exception as exc:  # the search is an optimisation: never let it sink the audit
        if held:
            raise held[0] from None
        out.skipped = f"hypothesis stopped: {type(exc).__name__}"
    if held:
        raise held[0]
    return out
