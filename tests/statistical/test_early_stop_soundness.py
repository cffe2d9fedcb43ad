"""Soundness of early stopping: a correct mechanism audited as a group-sequential test (looks at
geometric budgets, Bonferroni spending over looks: dpaudit.auditing.schedule) is refuted at most
at the stated rate.

α of the test: each audit at 95% confidence refutes a correct mechanism with probability at most
0.05 under the stopping rule, so among 20 seeded audits the number of refutations is
stochastically at most Bin(20, 0.05), and P(Bin(20, 0.05) > 3) = 0.0159: a sound auditor fails
the first test with probability below 1.6%. Fixed seeds, no retries.

The test can fail: the same audits with a naive rule that looks 20 times (every 500 samples) at
the full α each (no spending) are refuted 5 times in these 20, above the limit (23 in the
benchmark's 100; with 8 looks of 1,000 it was refuted 18 to 21 times in 100, too few to show in
20 audits). The 100-audit
versions of both run in ``benchmarks/size_and_power.py``, which imports them from here.
"""

import pytest

import dpaudit
from dpaudit.auditing.schedule import Schedule
from dpaudit.execution.base import InProcessExecutor
from dpaudit.auditing import looks

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

LIMIT = 3
SEEDS = range(1000, 1020)
#: the naive rule of the negative control: α at every one of 20 looks, every 500 samples
NAIVE = Schedule(10_000, 0.05, (500,) * 19, (0.05,) * 19, 0.05)


@dpaudit.mechanism(epsilon=1.0, neighbours="linf", domain=(-10, 10), size=1, float_events=False)
def laplace(data, rng, size=None):
    """Correct and tight: ε = 1 exactly on every pair moved by 1."""
    return data[0] + rng.laplace(scale=1.0, size=size)


def refutations(budget: int, seeds=SEEDS, **kw) -> tuple[int, int]:
    """(refuted audits, audits that looked early) among the seeded audits."""
    spec = dpaudit.MechanismSpec.from_function(laplace)
    refuted = looked = 0
    for s in seeds:
        out, rec = looks.run(spec, InProcessExecutor(), budget=budget, confidence=0.95,
                             seed=s, **kw)
        assert out.error is None
        refuted += out.bound is not None and out.bound.epsilon_lb > spec.epsilon
        looked += len(rec["looks"]) > 1
    return refuted, looked


def test_correct_laplace_refuted_at_most_3_of_20_with_early_stopping():
    # looks at 500 and 2,000 samples (α/20 each), then the rest at 0.9 α
    refuted, looked = refutations(32_000, min_look=500)
    assert looked == len(SEEDS)  # every audit did look early
    assert refuted <= LIMIT


def test_the_test_catches_looks_without_alpha_spending():
    refuted, _ = refutations(NAIVE.budget, plan=NAIVE)  # BROKEN: α at every look
    assert refuted > LIMIT
