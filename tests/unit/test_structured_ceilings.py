"""The exact laws behind benchmarks/structured_ceilings.py (no-abort sparse vector, grouped by the
⊤ counts of the two moved blocks) against brute force and against the mechanism's own samples."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

# benchmarks/ on the path only while importing: it holds a distributed.py, which would shadow the
# dask package for every process spawned later in this session
_BENCH = str(Path(__file__).resolve().parents[2] / "benchmarks")
sys.path.insert(0, _BENCH)
try:
    import structured_ceilings as sc  # noqa: E402
finally:
    sys.path.remove(_BENCH)

from dpaudit.reference.controls import structured as sm  # noqa: E402


def test_grouped_law_is_the_pattern_law_summed_over_each_group():
    # four queries with no abort (c = n): the 2^4 × 2^4 joint law of whole patterns, summed over
    # the patterns of each (k1, k2) group, is the grouped law to rounding error
    a, b, n, m, l1, l2 = 20.0, 40.0, 4, 2, 3.0, -5.0
    q = np.r_[np.full(m, l1), np.full(n - m, l2)]
    pats, P = sc.joint_law(q, q + np.r_[np.ones(m), -np.ones(n - m)], a, b, n)
    G = sc.grouped_law(m, l1, l2, a, b, n=n)
    width = n - m + 1
    summed = np.zeros_like(G)
    for i, u in enumerate(pats):
        for j, v in enumerate(pats):
            summed[sum(u[:m]) * width + sum(u[m:]), sum(v[:m]) * width + sum(v[m:])] += P[i, j]
    assert len(pats) == 16
    np.testing.assert_allclose(summed, G, atol=1e-12)
    np.testing.assert_allclose(G.sum(), 1.0, atol=1e-9)


@pytest.mark.statistical
@pytest.mark.slow
def test_grouped_law_matches_svt6_samples():
    # chi-square goodness of fit of the (k1, k2) counts of 200,000 draws of SVT6 on D, α = 0.001,
    # fixed seed; groups with an expected count under 5 are pooled
    m, l1, l2 = 5, 3.0, 0.0
    a = b = 2 / sm.EPS
    P = sc.grouped_law(m, l1, l2, a, b)
    expected = P.sum(1) * 200_000
    data = np.r_[np.full(m, l1), np.full(10 - m, l2)]
    out = sm.svt6_indices(data, np.random.default_rng(20261125), size=200_000)
    observed = np.zeros_like(expected)
    for idx in out:
        k1 = sum(1 for i in idx if i < m)
        observed[k1 * (10 - m + 1) + len(idx) - k1] += 1
    small = expected < 5
    e, o = expected[~small], observed[~small]
    if small.any():
        e, o = np.r_[e, expected[small].sum()], np.r_[o, observed[small].sum()]
    assert stats.chisquare(o, e).pvalue > 0.001
