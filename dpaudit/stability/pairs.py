"""The pairs a stability check tries: the shared pair search's candidates (the relation's
patterns, float-rounding patterns and numeric corners, :func:`dpaudit.search.pairs.candidates`),
then a hypothesis search steered toward d_out / map(d_in).

:func:`search_pairs` spends the :class:`~dpaudit.stability.checker.Checker`'s budget on
them, :data:`PATTERN_SHARE` of it at most on the candidates, and stops at the first violation:
a candidate's shrunk to the fewest records (:func:`dpaudit.search.pairs.shrink`), the search's
by hypothesis. Deterministic from the checker's seed.
"""

from __future__ import annotations

from dpaudit.neighbours.pair import Pair
from dpaudit.neighbours.relations import allowed_sizes
from dpaudit.search.pairs import candidates, drawn, run_targeted, shrink
from dpaudit.stability.checker import Checker, OutOfBudget, PartFailed

__all__ = ["search_pairs", "PATTERN_SHARE"]

#: the share of the budget the structured and rounding patterns may use
PATTERN_SHARE = 0.5
#: smaller pairs tried when shrinking a pattern's violation
SHRINK_PAIRS = 40


class _Found(Exception):
    """A violation in the hypothesis search (hypothesis then shrinks the pair)."""


def _shrunk(c: Checker, pair: Pair, found: dict) -> dict:
    """A pattern's violation shrunk to the fewest records and simpler values while it is still
    one (:func:`dpaudit.search.pairs.shrink`, within the budget; hypothesis shrinks the search's
    own): the violation of the smallest pair that still fails."""
    last = [found]

    def still_fails(q: Pair) -> bool:
        if c.left() < 2:
            raise OutOfBudget()
        again = c.evaluate(q.relabelled(pair.label))
        if again is not None:
            last[0] = again
        return again is not None

    lo, _ = allowed_sizes(c.relation, c.size)
    shrink(pair, still_fails, domain=c.domain, min_size=max(lo, 1), integers=c.integers,
           max_evals=SHRINK_PAIRS, stop=(OutOfBudget, PartFailed), relation=c.relation)
    return last[0]


def search_pairs(c: Checker) -> dict:
    """Patterns, then the hypothesis search; stops at the first violation (shrunk by hypothesis)."""
    from hypothesis import target

    phases: dict = {}
    patterns = list(candidates(c.relation, c.domain, c.size, c.seed, integers=c.integers,
                               floats=c.floats, carrier=c.carrier, nonfinite=c.nonfinite))
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
                c.violation = _shrunk(c, pair, found)
                break
            if c.random_from == 0 and c.mstage is None:  # nothing left that can be checked
                break
        phases["patterns"] = {"pairs": seen, "of": len(patterns)}
        if c.violation is not None or c.left() < 4 or (c.random_from == 0 and c.mstage is None):
            return phases
        state: dict = {"last": None, "examples": 0}

        def before() -> None:
            if c.left() < 2:
                raise OutOfBudget()

        def probe(pair: Pair) -> None:
            found = c.evaluate(pair)
            state["examples"] += 1
            target(min(c.last_score, 1e6), label="d_out / map(d_in)")
            if found is not None:
                state["last"] = found
                raise _Found()

        run_targeted(drawn(c.relation, c.domain, c.size, integers=c.integers, before=before),
                     probe, examples=c.examples, seed=c.seed, stops=(_Found, OutOfBudget))
        if state["last"] is not None:
            c.violation = state["last"]
        phases["search"] = {"pairs": state["examples"], "examples_asked": c.examples}
    except OutOfBudget:
        pass
    return phases
