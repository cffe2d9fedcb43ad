"""The guessers of a one-run audit, fixed before the run, and their counts on one run's scores.

A guesser is a score (by name), a direction (+1: a higher score means "included"; −1: a lower
one does) and (k₊, k₋): the k₊ canaries ranked highest are guessed "in", the k₋ ranked lowest
"out", the rest abstain (Steinke, Nasr & Jagielski 2023, Algorithm 1; their k₊ and k₋). Ties in
the ranking are broken by a random key drawn from the audit's generator (independent of which
canaries were included, so the guesses stay a function of the output and fresh randomness).

The default family (:func:`family`) is, for each score and both directions, the guess counts
r = m, m/2, m/4, … (down to :data:`SMALLEST`) split three ways: (r, 0), (0, r) and (r/2, r/2)
(one-sided splits at r = m guess every canary the same way and are left out). Every guesser gets
α/K of the test's share (Bonferroni over the K guessers), so trying them all costs nothing in
soundness: the bound holds for the guesser that happened to do best. A pre-registered guesser
(``Guesser`` given by the caller) is the family of one, at the full share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

__all__ = ["Guesser", "family", "sizes", "counts", "SMALLEST"]

#: the fewest guesses a default guesser makes
SMALLEST = 8


@dataclass(frozen=True, slots=True)
class Guesser:
    """Guess "in" for the ``k_plus`` canaries whose ``direction``·score is highest and "out" for
    the ``k_minus`` lowest, under the score named ``score``."""

    score: str
    direction: int
    k_plus: int
    k_minus: int

    @property
    def guesses(self) -> int:
        return self.k_plus + self.k_minus

    def to_record(self) -> dict:
        return {"score": self.score, "direction": "higher means in" if self.direction > 0 else "lower means in",
                "k_plus": self.k_plus, "k_minus": self.k_minus}


def sizes(m: int) -> tuple[int, ...]:
    """The guess counts of the default family: m, ⌊m/2⌋, ⌊m/4⌋, … while ≥ :data:`SMALLEST`
    (or m alone when m is smaller)."""
    out, r = [], m
    while r >= SMALLEST or not out:
        out.append(r)
        r //= 2
    return tuple(out)


def family(m: int, scores: Sequence[str]) -> tuple[Guesser, ...]:
    """The default family of guessers (module docstring), in a fixed order."""
    out = []
    for name in scores:
        for direction in (1, -1):
            for r in sizes(m):
                splits = [(r // 2, r - r // 2)] if r == m else [(r, 0), (0, r), (r // 2, r - r // 2)]
                for kp, km in splits:
                    out.append(Guesser(name, direction, kp, km))
    return tuple(dict.fromkeys(out))


def counts(scores: Mapping[str, np.ndarray], included: np.ndarray, guessers: Sequence[Guesser],
           tie_keys: np.ndarray) -> list[tuple[int, int]]:
    """``(r, v)`` per guesser: its guesses and how many were right. ``included`` is the run's
    S (bool per canary); ``tie_keys`` one random key per canary, ranking equal scores."""
    included = np.asarray(included, dtype=bool)
    order: dict = {}
    out = []
    for g in guessers:
        key = (g.score, g.direction)
        if key not in order:
            s = np.asarray(scores[g.score], dtype=float) * g.direction
            order[key] = np.lexsort((tie_keys, s))[::-1]  # highest first; ties by the random key
        rank = order[key]
        right_in = int(np.count_nonzero(included[rank[:g.k_plus]])) if g.k_plus else 0
        right_out = int(np.count_nonzero(~included[rank[len(rank) - g.k_minus:]])) if g.k_minus else 0
        out.append((g.guesses, right_in + right_out))
    return out
