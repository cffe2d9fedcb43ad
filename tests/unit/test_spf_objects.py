"""The callable preprocessed-function objects and their sensitivity claims (what the sensitivity search checks)."""

from __future__ import annotations

import math
import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from dpaudit.claims import SensitivityBound
from dpaudit.errors import InvalidArgument
from dpaudit.reference.sensitivity_preprocessing import (
    GeneralSPF, MedianSPF, OrderedSPF, SpfError, VarianceSPF, spf_median, spf_ordered, spf_variance)
from dpaudit.reference.sensitivity_preprocessing.subsets import population_mask


def test_uniform_objects_are_functions_of_the_multiset():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    for fn in (OrderedSPF("mean", 0.1, 0.0), OrderedSPF("trimmed-mean", 0.1, 0.0, alpha=0.2),
               OrderedSPF("median", 0.1, 0.0, convention="low"), OrderedSPF("max", 0.1, 0.0),
               OrderedSPF("min", 0.1, 0.0), MedianSPF(0.1, 0.0), VarianceSPF(0.1)):
        assert isinstance(fn.sensitivity, SensitivityBound)
        assert fn.sensitivity.bound == 0.1 and fn.sensitivity.individual is None
        assert fn(x) == fn(x[::-1]) == fn(list(rng.permutation(x)))
        assert isinstance(fn(x), float) and isinstance(fn([]), float)
        with pytest.raises(dataclasses.FrozenInstanceError):
            fn.delta = 1.0  # type: ignore[misc]
    assert OrderedSPF("median", 0.1, 0.0)(x) == pytest.approx(MedianSPF(0.1, 0.0)(x), abs=1e-12)
    assert OrderedSPF("mean", 0.3, 0.5)(x) == spf_ordered(x, "mean", 0.3, 0.5)
    assert VarianceSPF(0.2)(x) == spf_variance(x, 0.2)
    assert MedianSPF(0.2, 1.0)(x) == spf_median(np.sort(x), 0.2, 1.0)


def test_empty_database_gives_the_centre():
    assert OrderedSPF("mean", 1.0, 2.5)([]) == 2.5
    assert MedianSPF(1.0, -1.0)([]) == -1.0
    assert VarianceSPF(1.0)([]) == 0.0


def test_raw_statistics_are_exposed_for_comparison():
    assert OrderedSPF("median", 1.0, 0.0, convention="avg").raw([1.0, 2.0, 3.0, 10.0]) == 2.5
    assert OrderedSPF("median", 1.0, 0.0, convention="low").raw([1.0, 2.0, 3.0, 10.0]) == 2.0
    assert OrderedSPF("trimmed-mean", 1.0, 0.0, alpha=0.25).raw([0.0, 1.0, 2.0, 100.0]) == 1.5
    assert VarianceSPF(1.0).raw([1.0, 3.0]) == 1.0
    assert np.isnan(OrderedSPF("mean", 1.0, 0.0).raw([]))


def test_general_object_states_individual_bounds_and_maps_records():
    pop = [3.0, 1.0, 2.0, 1.0]
    spf = GeneralSPF(lambda r: float(np.median(r)) if r.size else np.nan, [0.5, 0.1, 0.2, 0.3],
                     centre=0.0, population=pop)
    assert spf.sensitivity == SensitivityBound(0.5, individual=(0.5, 0.1, 0.2, 0.3))
    assert spf([2.0, 3.0]) == spf.at({0, 2}) == spf.at(0b0101)
    assert spf([1.0]) == spf.at({1})            # the first holder of a repeated record
    assert spf([1.0, 1.0]) == spf.at({1, 3})
    assert spf([]) == 0.0
    with pytest.raises(InvalidArgument, match="more often"):
        spf([1.0, 1.0, 1.0])
    with pytest.raises(InvalidArgument, match="real-valued"):
        GeneralSPF(lambda r: np.zeros(2), 1.0, population=pop)


def test_population_mask_matches_records_to_individuals():
    pop = np.array([5.0, 2.0, 5.0, 7.0])
    assert population_mask(pop, []) == 0
    assert population_mask(pop, [5.0]) == 0b0001
    assert population_mask(pop, [5.0, 5.0, 7.0]) == 0b1101
    assert population_mask(pop, [7.0, 2.0]) == 0b1010
    with pytest.raises(InvalidArgument, match="not in the population"):
        population_mask(pop, [6.0])


def test_float_overflow_is_clamped_away_or_a_clear_error():
    """Huge records: window means are summed at an exact power-of-two scale, so they stay finite
    and match the general algorithm with an exactly rounded mean (rational arithmetic); a variance that
    overflows is reported as a one-line SpfError, never returned as nan."""
    assert OrderedSPF("mean", 1.0, 0.0)([1e308, 1e308, 1e308]) == 3.0
    assert MedianSPF(1.0, 0.0)([1.7e308, 1.7e308]) == 2.0
    huge = [-1.7e308, 1.7e308, 1.7e308, 1e300]
    exact_mean = GeneralSPF(lambda r: float(sum(map(Fraction, r)) / len(r)) if len(r) else math.nan, (1.0,) * 4,
                            centre=0.0, population=huge)
    assert OrderedSPF("mean", 1.0, 0.0)(huge) == exact_mean.at({0, 1, 2, 3})
    with pytest.raises(SpfError, match="overflowed double precision"):
        VarianceSPF(1.0)([-1.7e308, 1.7e308, 1.7e308, 1e300])


def median_or_nan(r):
    return float(np.median(r)) if r.size else np.nan


def test_general_object_on_the_fly_with_identities():
    """Without a population, spf(data, ids) preprocesses over D's own records with Δ by identity,
    and agrees with the fixed-population table on that population's databases."""
    deltas = (0.5, 0.1, 0.2, 0.3)
    free = GeneralSPF(median_or_nan, deltas, centre=0.0)
    fixed = GeneralSPF(median_or_nan, deltas, centre=0.0, population=[3.0, 1.0, 2.0, 1.0])
    assert free.sensitivity == fixed.sensitivity == SensitivityBound(0.5, individual=deltas)
    assert free([1.0, 2.0, 1.0], [1, 2, 3]) == fixed.at({1, 2, 3}) == fixed([1.0, 2.0, 1.0], [1, 2, 3])
    assert free([], []) == 0.0
    with pytest.raises(InvalidArgument, match="need identities"):
        free([1.0])
    with pytest.raises(InvalidArgument, match="ids"):
        free([1.0, 2.0], [0, 0])
    with pytest.raises(InvalidArgument, match="ids"):
        free([1.0], [4])
    with pytest.raises(InvalidArgument, match="population records of ids"):
        fixed([5.0], [0])
    with pytest.raises(InvalidArgument, match="fixed population"):
        free.at({0})
    uniform = GeneralSPF(median_or_nan, 0.25, centre=0.0)
    assert uniform.sensitivity == SensitivityBound(0.25)
    assert uniform([1.0, 9.0, 2.0]) == uniform([2.0, 1.0, 9.0]) == uniform([9.0, 2.0, 1.0], [7, 3, 5])


@pytest.mark.slow
def test_objects_plug_into_the_sensitivity_search():
    """dpaudit.check_sensitivity reads ``.sensitivity`` and calls ``spf(data, ids)`` in the
    individual model; the preprocessed functions survive it (a search, so: not refuted)."""
    import dpaudit
    from dpaudit.reference.sensitivity_preprocessing import TwoDimSPF

    deltas = (0.1, 0.5, 0.2, 0.3, 0.05)
    for fn in (GeneralSPF(median_or_nan, deltas, centre=0.0),
               TwoDimSPF(lambda r: np.array([r.sum(), r.max(initial=0.0)]), deltas, centre=0.0),
               MedianSPF(0.1, 0.5)):
        result = dpaudit.check_sensitivity(fn, examples=150, neighbours="add-remove", domain=(0, 1),
                                           sizes=(0, 5), seed=5)
        assert result.verdict.value == "not_refuted", (fn.name, result)
