"""Complex outputs, end to end with dpaudit.audit: audited as (Re z, Im z) (dpaudit/outputs/).

As categories almost every complex value is seen once, so no event had power and a mechanism
that releases its input in the imaginary part was NOT REFUTED at ε ≥ 0. Claim: ε = 0.5 under
add-remove over [0, 1] with 10 records (the sum moves by at most 1).

* ``leaky``: Re z = sum + Lap(2), Im z = sum + Lap(0.2): 5.5-DP, no better than 5 on Im z.
  Power: REFUTED with ε_LB ≥ 1 at 95% from 4·10⁴ samples.
* ``sound``: Im z with Lap(4) as well: 0.25 + 0.25 = 0.5-DP as claimed. Size: audited at 99.9% it
  is refuted with probability at most α = 0.001.

Fixed seeds, nothing retried.
"""

import numpy as np
import pytest

import dpaudit
from dpaudit.execution.base import InProcessExecutor

pytestmark = pytest.mark.statistical

CLAIM = dict(epsilon=0.5, neighbours="add-remove", domain=(0, 1), size=10, samples=40_000,
             early_stop=False, executor=InProcessExecutor())


def complex_release(re_scale: float, im_scale: float):
    def mech(data, rng, size=None):
        n = 1 if size is None else size
        s = float(np.sum(data))
        z = np.round(s + rng.laplace(scale=re_scale, size=n), 4) \
            + 1j * np.round(s + rng.laplace(scale=im_scale, size=n), 4)
        return z if size is not None else complex(z[0])

    return mech


@pytest.mark.slow
def test_a_leak_in_the_imaginary_part_is_refuted():
    r = dpaudit.audit(complex_release(2.0, 0.2), confidence=0.95, seed=31, **CLAIM)
    assert r.verdict.value == "refuted" and r.epsilon_lower_bound >= 1.0, r


@pytest.mark.slow
def test_a_sound_complex_release_is_not_refuted():
    r = dpaudit.audit(complex_release(4.0, 4.0), confidence=0.999, seed=32, **CLAIM)
    assert r.verdict.value == "not_refuted", r
