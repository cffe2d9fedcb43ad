"""The pairs a stability check tries: the relation's patterns, float-rounding patterns, then a
hypothesis search steered toward d_out / map(d_in).

:func:`search_pairs` spends the :class:`~dpaudit.stability.checker.Checker`'s budget on
them, :data:`PATTERN_SHARE` of it at most on the patterns, and stops at the first violation
(shrunk by hypothesis). Deterministic from the checker's seed.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from dpaudit.claims import Neighbours
from dpaudit.neighbours.pair import Pair
from dpaudit.stability.checker import Checker, OutOfBudget

__all__ = ["search_pairs", "PATTERN_SHARE"]

#: the share of the budget the structured and rounding patterns may use
PATTERN_SHARE = 0.5


class _Found(Exception):
    """A violation in the hypothesis search (hypothesis then shrinks the pair)."""


def _ulp(x: float, carrier: str) -> float:
    """The unit in the last place of |x| in the carrier's float type (f32 or f64)."""
    if carrier == "f32":
        v = np.float32(abs(x))
        return float(np.nextafter(v, np.float32(np.inf)) - v)
    return math.ulp(abs(x))


def _straddle(big: float, other: float, n: int, carrier: str = "f64") -> Optional[tuple[int, float]]:
    """``(m, t)`` for the binade-straddling pattern: after the changed record and m records at
    ``big``, the partial sum of D has reached a power of two 2^k that the partial sum of D′ (the
    changed record at ``other``) has not, and records t just above half of D's unit in the last
    place round up by a whole unit on D and by almost nothing on D′, each step. Chosen to
    maximise (steps left) × ulp(2^k) / 2; None when no m crosses a power of two."""
    best = None
    for m in range(1, n - 1):
        on_d, on_dp = abs((m + 1) * big), abs(other + m * big)
        if not (math.isfinite(on_d) and on_d > 0):
            break
        power = 2.0 ** math.floor(math.log2(on_d))
        if not on_dp < power <= on_d:
            continue
        t = math.copysign(_ulp(power, carrier) / 2 * (1 + 2 ** -20), big)
        score = (n - m - 1) * _ulp(power, carrier) / 2
        if best is None or score > best[0]:
            best = (score, m, t)
    return None if best is None else (best[1], best[2])


def _rounding_pairs(c: Checker) -> list[Pair]:
    """Float-rounding patterns in the manner of Casacuberta et al. (2022, Section 4), for float
    records under add-remove or replace (n records, domain [lo, hi]; ``big`` the end of largest
    magnitude, ``other`` the other end):

    * one record at ``big`` and n − 1 records t just above half a unit in the last place of it,
      against that record at ``other`` (replace) or removed (add-remove), in both orders: every
      addition of t to a partial sum near ``big`` rounds up by a whole unit on D, not on D′;
    * the same after m records at ``big``, m chosen so that D's partial sum has crossed a power of
      two that D′'s has not (:func:`_straddle`): the units then differ by a factor 2;
    * n records at ``big`` against one moved to ``other`` (or removed), and alternating ends when
      the domain holds both signs (cancellation)."""
    if not c.floats or c.relation not in (Neighbours.REPLACE, Neighbours.ADD_REMOVE) or c.size < 2:
        return []
    from dpaudit.neighbours.relations import are_neighbours

    lo, hi = c.domain.lo, c.domain.hi
    big = hi if abs(hi) >= abs(lo) else lo
    other = lo if big == hi else hi
    n = c.size
    replace = c.relation is Neighbours.REPLACE
    out: list[Pair] = []

    def add(head: list, rest: list, label: str) -> None:
        first = [big] + head + rest
        second = ([other] if replace else []) + head + rest
        out.append(Pair.of(first, second, label))
        out.append(Pair.of(head + rest + [big], head + rest + ([other] if replace else []), label))

    half = _ulp(big, c.carrier) / 2
    for t in (math.copysign(half * (1 + 2 ** -20), big), math.copysign(half * 1.5, big)):
        if lo <= t <= hi:
            add([], [t] * (n - 1), "float rounding: ½ ulp records after an extreme one")
    straddle = _straddle(big, other if replace else 0.0, n, c.carrier)
    if straddle is not None:
        m, t = straddle
        if lo <= t <= hi:
            add([big] * m, [t] * (n - m - 1), "float rounding: partial sums straddling a power of two")
    add([big] * (n - 1), [], "float rounding: n records at the far end")
    if lo < 0 < hi:  # mixed signs: cancellation
        alt = [hi if k % 2 == 0 else lo for k in range(n - 1)]
        add(alt, [], "float rounding: alternating ends")
    return [p for p in out if are_neighbours(c.relation, p.dataset, p.neighbour, c.domain, c.size)]


def search_pairs(c: Checker) -> dict:
    """Patterns, then the hypothesis search; stops at the first violation (shrunk by hypothesis)."""
    from hypothesis import strategies as st
    from hypothesis import target

    from dpaudit.replay.search import ordered, run_targeted
    from dpaudit.neighbours.patterns import structured_pairs
    from dpaudit.neighbours.relations import allowed_sizes
    from dpaudit.neighbours.strategies import neighbouring_pairs

    phases: dict = {}
    patterns = structured_pairs(c.relation, c.domain, c.size, both_orders=False)
    patterns = patterns[:1] + _rounding_pairs(c) + patterns[1:]
    if not patterns:
        return phases
    try:
        c.self_check(patterns[0].dataset)
        cap = max(4, int(PATTERN_SHARE * c.budget))
        seen = 0
        for pair in patterns:
            if c.invocations + 2 > cap:
                break
            seen += 1
            found = c.evaluate(pair)
            if found is not None:
                c.violation = found
                break
            if c.random_from == 0 and c.mstage is None:  # nothing left that can be checked
                break
        phases["patterns"] = {"pairs": seen, "of": len(patterns)}
        if c.violation is not None or c.left() < 4 or (c.random_from == 0 and c.mstage is None):
            return phases
        lo, hi = allowed_sizes(c.relation, c.size)
        strategy = neighbouring_pairs(c.relation, c.domain, (lo, hi), integers=c.integers)
        state: dict = {"last": None, "examples": 0}

        @st.composite
        def pairs(draw: Any) -> Pair:
            if c.left() < 2:
                raise OutOfBudget()
            return ordered(draw, draw(strategy)).relabelled("hypothesis search")

        def probe(pair: Pair) -> None:
            found = c.evaluate(pair)
            state["examples"] += 1
            target(min(c.last_score, 1e6), label="d_out / map(d_in)")
            if found is not None:
                state["last"] = found
                raise _Found()

        run_targeted(pairs(), probe, examples=c.examples, seed=c.seed, stops=(_Found, OutOfBudget))
        if state["last"] is not None:
            c.violation = state["last"]
        phases["search"] = {"pairs": state["examples"], "examples_asked": c.examples}
    except OutOfBudget:
        pass
    return phases
