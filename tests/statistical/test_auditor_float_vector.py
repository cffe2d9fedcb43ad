"""Float-structure events on vector outputs, end to end (dpaudit.audit on a 3-vector).

The claim: ε = 0.1 under ``linf`` over [-10, 10] (each coordinate moved by at most 1). Both
mechanisms spend ε/3 per coordinate, so over the reals both are ε-DP; they differ in one
coordinate only.

* ``porous``: coordinate 0 on the grid 2^5·Z, coordinate 2 a two-sided geometric on ⌊x⌋, and
  coordinate 1 the float64 x + Laplace(30), whose set of possible doubles depends on x (Mironov,
  CCS 2012, §3): not ε-DP for any finite ε. Power: its float64 finding must be REFUTED with
  ε_LB ≥ 4 at 90% (ε_LB ≥ 5 when it had every validation sample; since the two findings split the validation, the float64
  question is validated on its own 5% share, at 10% of α), and the counterexample's event must
  name coordinate 1; its logic finding (the vector over the reals, ε-DP) is not refuted.
* ``safe``: coordinates 0 and 1 are Mironov's snapping mechanism (Theorem 1: ε/3-DP on doubles)
  and coordinate 2 the same geometric: ε-DP as released. Size: audited at 99.9% confidence, it is
  refuted with probability at most α = 0.001, so this test fails on correct code with probability
  at most 0.1%.

Fixed seed, nothing retried.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import dpaudit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from examples.laplace_sum import snapping  # noqa: E402

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

EPS = 0.1
CLAIM = dict(epsilon=EPS, neighbours="linf", domain=(-10, 10), size=3, samples=1_000_000, seed=7,
             early_stop=False)
P = 1 - math.exp(-EPS / 3)  # two-sided geometric of parameter e^(-ε/3) on integers


def _geometric(data, rng, n):
    return math.floor(data[2]) + rng.geometric(P, n) - rng.geometric(P, n)


def porous(data, rng, size=None):
    n = 1 if size is None else size
    y = np.empty((n, 3))
    y[:, 0] = np.round((data[0] + rng.laplace(scale=30.0, size=n)) / 32.0) * 32.0
    y[:, 1] = data[1] + rng.laplace(scale=30.0, size=n)
    y[:, 2] = _geometric(data, rng, n)
    return y if size is not None else y[0]


def safe(data, rng, size=None):
    n = 1 if size is None else size
    y = np.empty((n, 3))
    for j in range(2):
        y[:, j] = snapping(data[j], epsilon=EPS / 3, bound=100.0, rng=rng, size=n)
    y[:, 2] = _geometric(data, rng, n)
    return y if size is not None else y[0]


def test_one_porous_coordinate_refutes_the_vector():
    r = dpaudit.audit(porous, confidence=0.9, **CLAIM)
    assert r.verdict.value == "refuted" and r.decided_by == "float"
    assert r.epsilon_lower_bound >= 4.0 and r.findings["logic"].verdict.value == "not_refuted"
    event = r.counterexample.event
    assert event["kind"] == "float-structure" and event["coordinate"] == 1
    assert event["text"].startswith("coordinate 1: outputs in ")


def test_snapped_and_discrete_coordinates_are_not_refuted_at_99_9():
    r = dpaudit.audit(safe, confidence=0.999, **CLAIM)
    assert r.verdict.value == "not_refuted"
