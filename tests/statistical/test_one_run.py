"""The one-run audit (dpaudit/onerun/) on the reference DP-SGD trainers (mechanisms/dpsgd.py) and
on score sets whose truth is known. Fixed seeds, nothing retried; each test states its α.

* Power: each bug of the reference trainer is refuted in one run at the accountant's claim
  (m = 1000 Dirac canaries, 95%).
* Size: the correct trainer, audited at 99.9% (α = 0.001 per run), is not refuted in 10 runs:
  a sound engine fails this test with probability at most 10 × 0.001 = 0.01.
* Null and reverse-separated score sets (the shapes that broke a peer's Gaussian-DP path: no
  multiplicity correction over thresholds, |μ| taken for the reverse direction): canaries never
  included, and randomized response at ε = 1 with the scores reversed, each 300 times at 95%;
  the refutations must stay within the 0.999 quantile of Binomial(300, 0.05) (this test's
  α = 0.001 each). Deterministic shapes (identical and reverse-separated scores) are checked
  exactly: no refutation of ε = 0 on identical scores, and reverse separation counts exactly as
  much as the mirrored forward separation.
"""

import numpy as np
import pytest
from scipy import stats

from dpaudit.onerun import Guesser, OneRunSettings, OneRunSpec, audit_scores, run
from dpaudit.reference.dpsgd import BUGS, one_run_spec

pytestmark = pytest.mark.statistical

#: the largest number of refutations in 300 audits at α = 0.05 we accept (its 0.999 quantile)
MAX_REFUTED_300 = int(stats.binom.ppf(0.999, 300, 0.05))


@pytest.mark.parametrize("bug", BUGS)
def test_each_bug_is_refuted_in_one_run(bug):
    spec = one_run_spec(bug, m=1000)
    r = run(spec, OneRunSettings(confidence=0.95, seed=40))
    assert r.verdict.value == "refuted", r.to_record()
    assert r.epsilon_lower_bound > spec.epsilon


@pytest.mark.slow
def test_the_correct_trainer_is_never_refuted():
    spec = one_run_spec(None, m=1000)
    for seed in range(10):
        r = run(spec, OneRunSettings(confidence=0.999, seed=1000 + seed))
        assert r.verdict.value == "not_refuted", (seed, r.to_record())
        assert r.epsilon_lower_bound < spec.epsilon


def _null_refutations(n: int, m: int, guesser=None) -> int:
    refuted = 0
    for seed in range(n):
        rng = np.random.default_rng(seed)
        included = rng.random(m) < 0.5
        scores = rng.standard_normal(m)  # canaries never trained on: the scores ignore S
        r = audit_scores(scores, included, epsilon=0.0, delta=0.0, confidence=0.95, seed=seed, guesser=guesser,
                         bounds=False)
        refuted += r.refuted
    return refuted


@pytest.mark.slow
def test_null_scores_never_refute_beyond_alpha():
    assert _null_refutations(300, 500) <= MAX_REFUTED_300
    # a single guesser fixed in advance gets the whole α: the tightest family, still within α
    assert _null_refutations(300, 500, Guesser("score", 1, 50, 50)) <= MAX_REFUTED_300


@pytest.mark.slow
def test_reverse_separated_randomized_response_is_not_refuted_at_its_epsilon():
    eps, m = 1.0, 500
    p = np.exp(eps) / (1 + np.exp(eps))
    refuted, found = 0, 0.0
    for seed in range(300):
        rng = np.random.default_rng(10_000 + seed)
        included = rng.random(m) < 0.5
        truthful = rng.random(m) < p  # ε-DP randomized response of each canary's bit
        said_in = np.where(truthful, included, ~included)
        scores = np.where(said_in, -1.0, 1.0) + 0.01 * rng.standard_normal(m)  # reversed: low means in
        r = audit_scores(scores, included, epsilon=eps, delta=0.0, confidence=0.95, seed=seed, bounds=seed < 3)
        refuted += r.refuted
        if seed < 3:
            found = max(found, r.epsilon_lower_bound)
    assert refuted <= MAX_REFUTED_300
    assert 0.0 < found <= eps  # the reverse direction is evidence, and never more than the truth


def test_identical_and_reverse_separated_shapes_exactly():
    n = 100
    included = np.r_[np.ones(n, bool), np.zeros(n, bool)]
    same = np.r_[np.arange(n), np.arange(n)].astype(float)  # in and out identical: no evidence at all
    r = audit_scores(same, included, epsilon=0.0, delta=1e-5, seed=1)
    assert not r.refuted and r.epsilon_lower_bound == 0.0 and r.fdp.mu_lower_bound == 0.0
    small = np.r_[np.arange(5), np.arange(5)].astype(float)
    assert not audit_scores(small, np.r_[np.ones(5, bool), np.zeros(5, bool)], epsilon=0.0, seed=1).refuted
    forward = np.r_[np.arange(n) + 200.0, np.arange(n)]
    reverse = np.r_[np.arange(n), np.arange(n) + 200.0]
    f = audit_scores(forward, included, epsilon=50.0, delta=1e-5, seed=1)
    b = audit_scores(reverse, included, epsilon=50.0, delta=1e-5, seed=1)
    assert not f.refuted and not b.refuted  # no claim above the ceiling can be refuted
    assert f.epsilon_lower_bound > 0
    assert b.epsilon_lower_bound == pytest.approx(f.epsilon_lower_bound, rel=1e-9)
    assert b.fdp.mu_lower_bound == pytest.approx(f.fdp.mu_lower_bound, rel=1e-9)
    assert b.steinke.guesser["direction"] == "lower means in"
    assert f.epsilon_lower_bound <= f.ceiling


def test_a_trainer_that_raises_is_an_error_verdict():
    def train(dataset, rng):
        raise RuntimeError("out of memory on step 3")

    spec = OneRunSpec(train=train, data=[], canaries=list(range(10)), score=lambda model, c: 0.0, epsilon=1.0)
    r = run(spec, OneRunSettings(seed=1))
    assert r.verdict.value == "error" and "out of memory" in r.error
