"""dpaudit's sensitivity search on the raw functions, the planted bugs and the utilities of seeds
000 and 004 (docs/math.md#quantile-utility, #duff-definition, #sensitivity-preprocessing). Each test asserts the verdict and the counterexample's size.

Utilities u(D, r) are searched over r together with the pair (``outputs=``): r is a record of
either dataset, the float next to one, a midpoint of two records, an end of the output domain,
or any point of it (see :func:`dpaudit.check_sensitivity`).
"""

from __future__ import annotations

import numpy as np
import pytest

import dpaudit
from dpaudit.results import Verdict
from dpaudit.reference.controls.sensitivity import (
    CONTROLS,
    DataClampedMean,
    DoubledMedianUtility,
    UpperOnlyMeanSPF,
    raw_mean,
    raw_median,
    unclipped_sum,
)
from dpaudit.reference.duff import duff_utility
from dpaudit.reference.quantile import quantile_utility, quantile_utility_eq22

DELTA = 0.25  # the bound the preprocessed versions of these statistics keep
#: pairs each search of the three slow tests below tries: 250 here (each still reaches its bound,
#: ratio 1, and refutes its power control); benchmarks/property_searches.py runs them at 1,000
EXAMPLES = 250


@pytest.mark.parametrize("f, sizes", [(raw_median, (1, 20)), (raw_mean, (1, 20)), (unclipped_sum, 20)])
def test_raw_statistics_are_refuted_with_at_most_three_records(f, sizes):
    r = dpaudit.check_sensitivity(f, DELTA, neighbours="add-remove", domain=(-10, 10), sizes=sizes,
                                  examples=2_000, seed=6)
    assert r.verdict is Verdict.REFUTED
    c = r.counterexample
    assert c.records <= 3 and c.gap > DELTA
    assert abs(f(np.array(c.dataset)) - f(np.array(c.neighbour))) == pytest.approx(c.gap)


def test_raw_mean_on_the_empty_dataset_is_an_error_not_a_refutation():
    r = dpaudit.check_sensitivity(raw_mean, DELTA, neighbours="add-remove", domain=(-10, 10),
                                  sizes=20, examples=2_000, seed=6)
    assert r.verdict is Verdict.ERROR and "nan" in r.error
    assert r.counterexample.records == 1


@pytest.mark.parametrize("name", list(CONTROLS))
def test_planted_bugs_are_refuted(name):
    f, kw = CONTROLS[name]
    r = dpaudit.check_sensitivity(f, f.sensitivity, examples=2_000, seed=6, **kw)
    assert r.verdict is Verdict.REFUTED
    assert r.counterexample.records <= 3 and r.counterexample.gap > f.sensitivity.bound


@pytest.mark.slow
def test_planted_bugs_only_break_where_the_bug_is():
    """Controls for the controls: with the bug's trigger ruled out, the same code keeps its bound.

    * the upper-only clamp is harmless when no record lies below the centre (f only grows);
    * the data-centred clamp is exactly a fixed clamp when every dataset has the same median;
    * the doubled utility does satisfy Δu = 2.
    """
    up = UpperOnlyMeanSPF(0.25, 0.0)
    r = dpaudit.check_sensitivity(up, up.sensitivity, neighbours="add-remove", domain=(0, 10),
                                  sizes=8, examples=EXAMPLES, seed=6)
    assert r.verdict is Verdict.NOT_REFUTED and r.counterexample is None
    dc = DataClampedMean(1.0, 10)
    r = dpaudit.check_sensitivity(dc, 1.0 / 10, neighbours="add-remove", domain=(0, 0.5),
                                  sizes=(0, 10), examples=EXAMPLES, seed=6)
    assert r.verdict is Verdict.NOT_REFUTED and r.counterexample is None
    r = dpaudit.check_sensitivity(DoubledMedianUtility(), 2.0, neighbours="add-remove",
                                  domain=(0, 1), sizes=12, outputs=(0, 1), examples=EXAMPLES, seed=6)
    assert r.verdict is Verdict.NOT_REFUTED and r.counterexample is None


@pytest.mark.slow
@pytest.mark.parametrize("q", [0.5, 0.3, 0.9])
def test_quantile_utility_of_seed_004(q):
    """Change-one Δu ≤ 1 and add/remove Δu ≤ max(q, 1−q) hold (docs/math.md#quantile-utility); eq 2.2 as
    written (with + max(q, 1−q)·N) breaks the add/remove bound (E30)."""
    u = lambda data, r: quantile_utility(data, r, q)            # noqa: E731
    u22 = lambda data, r: quantile_utility_eq22(data, r, q)      # noqa: E731
    kw = dict(domain=(0, 1), sizes=10, outputs=(0, 1), examples=EXAMPLES, seed=4)
    r = dpaudit.check_sensitivity(u, 1.0, neighbours="replace", **kw)
    assert r.verdict is Verdict.NOT_REFUTED and r.counterexample is None and r.ratio == pytest.approx(1.0)
    r = dpaudit.check_sensitivity(u, max(q, 1 - q), neighbours="add-remove", **kw)
    assert r.verdict is Verdict.NOT_REFUTED and r.counterexample is None and r.ratio == pytest.approx(1.0)
    r = dpaudit.check_sensitivity(u22, max(q, 1 - q), neighbours="add-remove", **kw)
    assert r.verdict is Verdict.REFUTED
    c = r.counterexample
    assert c.records <= 3 and c.output is not None
    assert abs(u22(np.array(c.dataset), c.output) - u22(np.array(c.neighbour), c.output)) > max(q, 1 - q)


@pytest.mark.slow
@pytest.mark.parametrize("convention", ["avg", "low"])
def test_duff_utility_has_sensitivity_one(convention):
    """u_d(x, S) = −min{d_AR(S, S') : T(S') = x} changes by at most 1 (triangle inequality; docs/math.md#duff-definition)."""
    u = lambda data, x: duff_utility(data, x, convention, (0.0, 1.0))   # noqa: E731
    kw = dict(neighbours="add-remove", domain=(0, 1), sizes=10, outputs=(0, 1), examples=EXAMPLES, seed=4)
    r = dpaudit.check_sensitivity(u, 1.0, **kw)
    assert r.verdict is Verdict.NOT_REFUTED and r.counterexample is None and r.ratio == pytest.approx(1.0)
    r = dpaudit.check_sensitivity(u, 0.9, **kw)   # power control: the bound 1 is tight
    assert r.verdict is Verdict.REFUTED and r.counterexample.records <= 2
