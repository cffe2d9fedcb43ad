"""Soundness of early stopping: a correct mechanism audited as a group-sequential test (looks at
geometric budgets, Bonferroni spending over looks: dpaudit.auditing.schedule) is refuted at most
at the stated rate.

α of the test: each audit at 95% confidence refutes a correct mechanism with probability at most
0.05 under the stopping rule, so among 100 seeded audits the number of refutations is
stochastically at most Bin(100, 0.05), and P(Bin(100, 0.05) > 10) = 0.0115: a sound auditor fails
the first test with probability below 1.2%. Fixed seeds, no retries.

The test can fail: the same audits with a naive rule that looks 8 times at the full α each (no
spending) are refuted 21 times in 100 at these seeds, above the limit.
"""

import pytest

import dpaudit
from dpaudit.auditing.schedule import Schedule
from dpaudit.execution.base import InProcessExecutor
from dpaudit.auditing import looks

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

LIMIT = 10
SEEDS = range(1000, 1100)


@dpaudit.mechanism(epsilon=1.0, neighbours="linf", domain=(-10, 10), size=1, float_events=False)
def laplace(data, rng, size=None):
    """Correct and tight: ε = 1 exactly on every pair moved by 1."""
    return data[0] + rng.laplace(scale=1.0, size=size)


def refutations(budget: int, **kw) -> tuple[int, int]:
    """(refuted audits, audits that looked early) among the seeded audits."""
    spec = dpaudit.MechanismSpec.from_function(laplace)
    refuted = looked = 0
    for s in SEEDS:
        out, rec = looks.run(spec, InProcessExecutor(), budget=budget, confidence=0.95,
                             seed=s, **kw)
        assert out.error is None
        refuted += out.bound is not None and out.bound.epsilon_lb > spec.epsilon
        looked += len(rec["looks"]) > 1
    return refuted, looked


def test_correct_laplace_refuted_at_most_10_of_100_with_early_stopping():
    # looks at 500 and 2,000 samples (α/20 each), then the rest at 0.9 α
    refuted, looked = refutations(32_000, min_look=500)
    assert looked == len(SEEDS)  # every audit did look early
    assert refuted <= LIMIT


def test_the_test_catches_looks_without_alpha_spending():
    naive = Schedule(8_000, 0.05, (1_000,) * 7, (0.05,) * 7, 0.05)  # BROKEN: α at every look
    refuted, _ = refutations(8_000, plan=naive)
    assert refuted > LIMIT
