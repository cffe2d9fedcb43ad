"""Two findings per audit (dpaudit/auditing/sampled.py): the logic finding of a correct float64
mechanism stays sound while its float64 finding refutes it.

α of the size check: each audit at 95% confidence gives its logic finding 90% of α (0.045) when the
float64 question is asked too, so a correct mechanism's logic finding is refuted with probability
at most 0.05 per audit; over 20 independent seeded audits the refutations are stochastically at
most Bin(20, 0.05), and P(Bin(20, 0.05) > 3) = 0.0159: a sound auditor fails the test with
probability below 1.6%. The mechanism is the textbook float64 ``clip(sum) + rng.laplace(1/ε)``,
ε-DP over the reals and porous on doubles. Seeds are fixed; nothing is retried. The same 20 audits
must refute its float64 finding, and the same small audit refutes the logic of the same code with
half the noise (true ε = 2), so the size check is not passing by having no power. The 100-audit
version (limit 10, α = 0.0115) runs in ``benchmarks/size_and_power.py``.
"""

import numpy as np
import pytest

import dpaudit
from dpaudit.execution.base import InProcessExecutor

pytestmark = pytest.mark.statistical

AUDITS = 20
LIMIT = 3
#: the benchmark's 100 seeds start here too
SEEDS = range(7000, 7000 + AUDITS)
SAMPLES = 20_000
CLAIM = dict(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4)


@dpaudit.mechanism(**CLAIM)
def textbook_sum(data, rng, size=None):
    return np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0, size=size)


@dpaudit.mechanism(**CLAIM)
def half_noise_sum(data, rng, size=None):
    return np.clip(data, 0, 1).sum() + rng.laplace(scale=0.5, size=size)


def findings(mechanism, seed):
    r = dpaudit.audit(mechanism, samples=SAMPLES, seed=seed, executor=InProcessExecutor())
    assert r.error is None
    return r.findings


@pytest.mark.slow
def test_a_correct_float64_laplace_sum_has_its_logic_refuted_at_most_3_of_20_and_its_float_refuted():
    audits = [findings(textbook_sum, s) for s in SEEDS]
    logic = [f["logic"] for f in audits]
    # the split, as stated: the betting look's 20% of α to the logic alone, and 90% of the
    # sampled looks' 80%
    assert all(abs(f.alpha - 0.046) < 1e-12 for f in logic)
    assert all(abs(f["float"].alpha - 0.004) < 1e-12 for f in audits)
    assert sum(f.refuted for f in logic) <= LIMIT
    # power, on the same audits: porosity is an event of probability 0 on one side
    assert sum(f["float"].refuted for f in audits) >= 15


def test_and_refute_the_logic_of_half_the_noise_with_its_own_counterexample():
    f = findings(half_noise_sum, 7000)
    logic, flt = f["logic"], f["float"]
    assert logic.refuted and 1.0 < logic.epsilon_lower_bound <= 2.0 + 0.05
    assert logic.counterexample.event["kind"] in ("threshold", "interval")
    assert flt.refuted and flt.counterexample.event["kind"] == "float-structure"
    assert logic.strength.p_value < 1e-3 and flt.strength.p_value < 1e-3
