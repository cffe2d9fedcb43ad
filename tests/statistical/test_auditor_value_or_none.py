"""A real value or None (answer only above a noisy threshold), end to end with dpaudit.audit.

Such outputs are audited on their joint structure, the number as the 1-tuple ``(v,)``
(dpaudit/outputs/), so the law of the released value is tested, not only how often it is None.
Claim: ε = 0.5 under add-remove over [0, 1] with 10 records (the sum moves by at most 1).

* ``leaky``: the threshold test costs 0.1 (Lap(10) on the sum) but the value has Lap(0.5) noise,
  so the mechanism is 2.1-DP, no better than 2 on the value. Power: it must be REFUTED with
  ε_LB ≥ 1 at 95% from 4·10⁴ samples (it was NOT REFUTED at ε ≥ 0 when such outputs were
  categories).
* ``sound``: the value has Lap(2.5) noise, 0.1 + 0.4 = 0.5-DP as claimed. Size: audited at
  99.9% it is refuted with probability at most α = 0.001.

Fixed seeds, nothing retried.
"""

import numpy as np
import pytest

import dpaudit
from dpaudit.execution.base import InProcessExecutor

pytestmark = pytest.mark.statistical

CLAIM = dict(epsilon=0.5, neighbours="add-remove", domain=(0, 1), size=10, samples=40_000,
             early_stop=False, executor=InProcessExecutor())


def value_or_none(value_scale: float):
    def mech(data, rng, size=None):
        n = 1 if size is None else size
        s = float(np.sum(data))
        answer = s + rng.laplace(scale=10.0, size=n) >= 3.0
        value = np.round(s + rng.laplace(scale=value_scale, size=n), 3)
        out = [float(v) if a else None for a, v in zip(answer, value)]
        return out if size is not None else out[0]

    return mech


@pytest.mark.slow
def test_a_value_with_too_little_noise_behind_a_none_is_refuted():
    r = dpaudit.audit(value_or_none(0.5), confidence=0.95, seed=21, **CLAIM)
    assert r.verdict.value == "refuted" and r.epsilon_lower_bound >= 1.0, r


@pytest.mark.slow
def test_a_sound_value_or_none_is_not_refuted():
    r = dpaudit.audit(value_or_none(2.5), confidence=0.999, seed=22, **CLAIM)
    assert r.verdict.value == "not_refuted", r
