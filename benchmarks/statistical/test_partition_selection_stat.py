"""Partition selection by thresholding (mechanisms/partition_selection.py), end to end with
dpaudit.audit: which keys are released is a release.

Claim: (ε, δ) = (1, 10⁻⁵) under add-remove over [0, 9], at most 10 records, keys ``int(x)``.
The noisy count of every key present, Laplace(1/ε), is released when it exceeds T.

* ``miscalibrated``: T computed for 10ε, T' = 1 + ln(1/(2δ))/10 ≈ 2.08, noise still of scale
  1/ε, so a key whose one record only D holds is released with probability
  ½·exp(−ε(T' − 1)) = ½·(2δ)^(1/10) ≈ 0.169: the claim fails by a δ of 0.169 (the rest of the
  release is ε-DP, so no pair and event show more). Power: REFUTED with δ_LB > 10⁻³ from
  2·10⁵ samples at 95%, and, the bound being sound, δ_LB ≤ 0.169 but with probability at most
  α = 0.05 (the audit's confidence).
* ``thresholded_counts``: T = 1 + ln(1/(2δ))/ε ≈ 11.8, a new key released with probability δ
  exactly; (ε, δ)-DP as claimed (the released counts are rounded to integers, which keeps the
  guarantee on float64). Size: audited at 99% it is refuted with probability at most α = 0.01,
  at the budget that refutes ``miscalibrated`` above (2·10⁵; the 10⁶-sample audit runs in
  ``benchmarks/size_and_power.py``).

Fixed seeds, nothing retried.
"""

import pytest

import dpaudit
from dpaudit.reference.partition_selection import miscalibrated, thresholded_counts

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

EPS, DELTA = 1.0, 1e-5
#: the δ the miscalibrated mechanism shows: a new key's release probability
BAD_DELTA = 0.5 * (2 * DELTA) ** 0.1
CLAIM = dict(epsilon=EPS, delta=DELTA, neighbours="add-remove", domain=(0, 9), size=10)


@pytest.mark.parametrize("form, seed", [("dict", 31), ("nan", 32)])
def test_a_threshold_for_ten_times_epsilon_is_refuted_with_its_delta(form, seed):
    r = dpaudit.audit(miscalibrated(EPS, DELTA, form=form), samples=200_000, seed=seed,
                      confidence=0.95, **CLAIM)
    assert r.verdict.value == "refuted", r
    assert 1e-3 < r.delta_lower_bound <= BAD_DELTA, r
    c = r.counterexample
    small, big = sorted((c.dataset, c.neighbour), key=len)
    new = {int(x) for x in big} - {int(x) for x in small}
    assert len(new) == 1, c  # the pair adds a record of a key the other dataset lacks


def test_a_calibrated_threshold_is_not_refuted():
    # (ε, δ)-DP as claimed: a sound audit at 99% refutes it with probability at most α = 0.01
    r = dpaudit.audit(thresholded_counts(EPS, DELTA, form="dict"), samples=200_000, seed=33,
                      confidence=0.99, **CLAIM)
    assert r.verdict.value == "not_refuted", r
    assert r.delta_lower_bound is None or r.delta_lower_bound <= DELTA, r
