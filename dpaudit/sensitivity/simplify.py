"""Greedy simplification of a failing neighbouring pair, after hypothesis has shrunk it.

Hypothesis shrinks the *choices* that generated a pair (sizes, shapes, the leading values, the
seed of a numpy-filled tail). Records in the middle of a numpy tail cannot be deleted one by one
that way, so this pass finishes the job on the concrete pair, in the spirit of delta debugging
(Zeller and Hildebrandt 2002): repeatedly

1. delete one record that both datasets share (keeping the pair neighbours under its relation and
   both sizes in range), then
2. replace a value by a simpler one (0, the domain ends, ±1, the value rounded to fewer digits),

keeping a change only when the pair still fails in the same way (still violates the bound, or
``f`` still fails with the same exception type). Every step strictly decreases (records, total
length of the values' reprs), so the pass terminates; it also stops after ``max_evals`` pairs.
Steps 1 and 2 are the shared pair search's :func:`dpaudit.search.pairs.shrink` (the replay and
the stability check shrink their counterexamples with it too); this pass adds the utility's r.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional


from dpaudit.neighbours._common import simpler as _simpler
from dpaudit.neighbours.pair import Pair
from dpaudit.search.pairs import shrink

__all__ = ["Case", "simplify"]


@dataclass(frozen=True, slots=True)
class Case:
    """A neighbouring pair plus the utility argument r (None for plain functions)."""

    pair: Pair
    r: Optional[float] = None


def simplify(case: Case, fails: Callable[[Case], bool], *, lo: float, hi: float, min_size: int,
             integers: bool = False, output_lo: Optional[float] = None,
             output_hi: Optional[float] = None, max_evals: int = 500) -> tuple[Case, int]:
    """The simplest case reachable greedily from ``case`` on which ``fails`` stays true, and the
    number of cases tried: the pair shrunk by the shared pair search
    (:func:`dpaudit.search.pairs.shrink`: the fewest records, then simpler values), then the
    utility argument r made simpler, again while r changed. ``fails(case)`` must be true on
    entry."""
    evals = 0
    improved = True
    while improved and evals < max_evals:
        improved = False
        current = case
        pair, used = shrink(case.pair, lambda q: fails(replace(current, pair=q)), domain=(lo, hi),
                            min_size=min_size, integers=integers, max_evals=max_evals - evals)
        evals += used
        case = replace(case, pair=pair)
        if evals >= max_evals or case.r is None or output_lo is None:
            break
        for c in _simpler(case.r, output_lo, output_hi, False):
            evals += 1
            if fails(replace(case, r=c)):
                case, improved = replace(case, r=c), True
                break
    return case, evals
