"""The sensitivity-preprocessed functions of Cummings and Durfee (2020) (mechanisms/sensitivity_preprocessing) keep
their declared bounds under dpaudit's hypothesis search (Cummings and Durfee 2020, Lemma 3.5; docs/math.md#spf-definition, #spf-2d).

Every function is searched over at least 250 neighbouring pairs (20,000 with
``HYPOTHESIS_PROFILE=thorough``; benchmarks/property_searches.py runs these tests at 1,000 and
records the outcome) and must not be refuted; the search must also get close to the
bound (ratio ≥ 0.9, so the budget is enough and the search not vacuous) and must refute the same function against half its
bound with a tiny counterexample (power control).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import dpaudit
from dpaudit.results import Verdict
from dpaudit.reference.sensitivity_preprocessing import (
    GeneralSPF,
    MedianSPF,
    OrderedSPF,
    TwoDimSPF,
    VarianceSPF,
)
from dpaudit.reference.sensitivity_preprocessing.statistics import subset_statistic

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
EXAMPLES = 20_000 if THOROUGH else 250
PROFILE = "thorough" if THOROUGH else "ci"
DOMAIN = (-10.0, 10.0)

GLOBAL = {
    "median-avg": OrderedSPF("median", 0.25, 0.0),
    "median-low": OrderedSPF("median", 0.25, 1.0, convention="low"),
    "median-chain": MedianSPF(0.25, 0.0),
    "mean": OrderedSPF("mean", 0.25, 0.0),
    "trimmed-mean": OrderedSPF("trimmed-mean", 0.5, -1.0, alpha=0.2),
    "max": OrderedSPF("max", 0.25, 0.0),
    "min": OrderedSPF("min", 0.25, 2.0),
    "variance": VarianceSPF(0.25),
}

#: individual bounds Δ_i of a universe of 6 identities (Cummings and Durfee (2020) Definition 2.3)
DELTAS = (0.1, 0.4, 0.25, 0.05, 0.3, 0.2)


def _batched_mean(records, B):
    return subset_statistic("mean", records, B)


def _mean_and_median(data):
    return np.array([np.mean(data), np.median(data)])


def _check(f, **kw):
    return dpaudit.check_sensitivity(f, f.sensitivity, neighbours="add-remove", examples=EXAMPLES,
                                     profile=PROFILE, seed=2002, **kw)


@pytest.mark.parametrize("name", [n if n == "min" else pytest.param(n, marks=pytest.mark.slow) for n in GLOBAL])
def test_global_preprocessed_statistics_are_not_refuted(name):
    f = GLOBAL[name]
    r = _check(f, domain=DOMAIN, sizes=10)
    assert r.verdict is Verdict.NOT_REFUTED, r
    assert r.counterexample is None and r.examples >= EXAMPLES
    assert 0.9 <= r.ratio <= 1.0 + 1e-9
    half = dpaudit.check_sensitivity(f, 0.5 * f.sensitivity.bound, neighbours="add-remove",
                                     domain=DOMAIN, sizes=10, examples=EXAMPLES, seed=2002)
    assert half.verdict is Verdict.REFUTED and half.counterexample.records <= 3


@pytest.mark.slow
def test_individual_sensitivities_of_the_general_preprocessing():
    """GeneralSPF with Δ_i per identity: |f̂(D ∪ {i}) − f̂(D)| ≤ Δ_i, searched in the individual model."""
    f = GeneralSPF(_batched_mean, DELTAS, centre=0.0, batched=True)
    assert f.sensitivity.individual == DELTAS
    r = _check(f, domain=DOMAIN, sizes=4)
    assert r.verdict is Verdict.NOT_REFUTED, r
    assert r.counterexample is None and r.examples >= EXAMPLES and 0.9 <= r.ratio <= 1.0 + 1e-9
    wrong = tuple(d / 2 if k == 1 else d for k, d in enumerate(DELTAS))
    bad = dpaudit.check_sensitivity(f, max(DELTAS), individual=wrong, neighbours="add-remove",
                                    domain=DOMAIN, sizes=4, examples=EXAMPLES, seed=2002)
    assert bad.verdict is Verdict.REFUTED and bad.counterexample.individual == 1
    assert bad.counterexample.records <= 3


@pytest.mark.slow
def test_two_dimensional_l1_preprocessing():
    """TwoDimSPF (Def 8.2): ‖f̂(D ∪ {i}) − f̂(D)‖₁ ≤ Δ_i for f = (mean, median) into ℝ²."""
    f = TwoDimSPF(_mean_and_median, DELTAS, centre=(0.0, 0.0))
    assert f.sensitivity.norm == "l1"
    r = _check(f, domain=DOMAIN, sizes=4)
    assert r.verdict is Verdict.NOT_REFUTED, r
    assert r.counterexample is None and r.examples >= EXAMPLES and 0.9 <= r.ratio <= 1.0 + 1e-9
    bad = dpaudit.check_sensitivity(f, max(DELTAS) / 2, neighbours="add-remove", domain=DOMAIN,
                                    sizes=4, examples=EXAMPLES, seed=2002,
                                    individual=tuple(d / 2 for d in DELTAS))
    assert bad.verdict is Verdict.REFUTED and bad.counterexample.records <= 3
