"""Power of the level search in a sampled audit: a threshold mechanism whose threshold sits
between the levels of the structured patterns is refuted near its true ε only once the search
moves the answers to the threshold, without being told where it is.

The mechanism releases out_i = [D_i + Lap(b) ≥ T] for d answers (one noisy comparison per
answer, as in the sparse vector technique without its shared threshold noise; Lyu, Su and Li
2017, §3). Under ``linf`` it is exactly d/b-DP: the ratio of Laplace tails is e^{1/b} per answer
on the side of T where both answers lie, and the products multiply. Its worst outputs have
sizeable probability only when every answer sits within about b of T.

α: each audit's bound holds at 90% (the auditor's family-wise confidence), so a bound above the
true ε would happen with probability at most 0.1; the assertions below are power checks at a
fixed seed (no retries), with margins chosen from the exact losses, not from the run.
"""

import functools

import numpy as np
import pytest

import dpaudit
import dpaudit.auditing.sampled as engine
from dpaudit.neighbours.patterns import structured_pairs

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

T, B, D = 3.3, 0.5, 3  # true ε = D / B = 6; T is not a pattern level (−10, −5, 0, 5, 10) ± 1
TRUE_EPS = D / B


def thresholds(data, rng, size=None):
    m = 1 if size is None else size
    out = ((data + rng.laplace(scale=B, size=(m, data.size))) >= T).astype(np.int8)
    return out if size is not None else out[0]


def _audit():
    return dpaudit.audit(thresholds, epsilon=1.0, neighbours="linf", domain=(-10, 10), size=D,
                         samples=1_000_000, confidence=0.9, seed=7, early_stop=False)


def test_level_search_reaches_the_threshold_and_a_tight_bound():
    r = _audit()
    lb = r.epsilon_lower_bound
    assert r.verdict.value == "refuted"
    assert 0.85 * TRUE_EPS <= lb <= TRUE_EPS  # at most the truth: the bound is sound (90%)
    cx = r.counterexample
    a, b = np.asarray(cx.dataset), np.asarray(cx.neighbour)
    # the pair expected: every answer moved the same way by 1, all of them next to T
    assert np.all(np.abs(b - a) == 1) and len(set(np.sign(b - a))) == 1
    assert np.all(np.abs((a + b) / 2 - T) <= 1.5)
    assert r.details["phases"]["levels"]["evaluated"] > 0


def test_the_relations_own_patterns_alone_stay_far_below(monkeypatch):
    # the same audit without the base levels and without the level search (the 0/±1 patterns
    # at the midpoint and the ends): the worst outputs are too rare there to be counted
    monkeypatch.setattr(engine, "LEVEL_SHARE", 0.0)
    monkeypatch.setattr(engine, "structured_pairs", functools.partial(structured_pairs, levels=False))
    r = _audit()
    assert r.epsilon_lower_bound < 0.5 * TRUE_EPS
