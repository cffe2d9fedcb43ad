"""2-D ℓ1 preprocessing (Cummings and Durfee 2020, Def 8.2, Thm 8.3, Lemma 8.9) and the 3-D failure (Remark 8.6), docs/math.md#spf-2d.

Oracles: exhaustive pair checks over every subset; the ℓ1 projection LP (scipy linprog) for
"f̂(D) is an ℓ1-nearest point of K(D)"; docs/math.md#spf-2d's explicit 3-D construction.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.errors import DpauditError, InvalidArgument
from dpaudit.reference.sensitivity_preprocessing import (
    EmptyFeasibleSet, TwoDimSPF, l1_projection, permutation_error_bound, remark_8_6_example,
    spf_l1_2d, spf_l1_naive, spf_table)
from dpaudit.reference.sensitivity_preprocessing.subsets import members

SEEDS = st.integers(0, 2**32 - 1)
#: HYPOTHESIS_PROFILE=thorough (tests/conftest.py) searches 25 times longer than CI.
THOROUGH = settings.default.max_examples > 100


def budget(examples: int) -> int:
    return examples * 25 if THOROUGH else examples


def random_2d_table(rng: np.random.Generator, n: int, individual: bool):
    """f into ℝ² from a random lookup table (wild) or from the records (smooth), Δ uniform or not."""
    x = rng.normal(size=n)
    deltas = rng.exponential(size=n) if individual else float(rng.exponential())
    if rng.random() < 0.5:
        vals = rng.normal(size=(1 << n, 2)) * rng.choice([0.5, 3.0])
        return spf_l1_2d(lambda r, B: vals, x, deltas, batched=True)
    return spf_l1_2d(lambda r: np.array([r.sum(), np.abs(r).max(initial=0.0) - r.min(initial=0.0)]),
                     x, deltas)


@given(seed=SEEDS, n=st.integers(1, 9), individual=st.booleans())
@settings(max_examples=budget(60))
def test_l1_individual_sensitivity_on_every_pair(seed, n, individual):
    """‖f̂(D ∪ {i}) − f̂(D)‖₁ ≤ Δ_i for every i and D ∌ i (Theorem 8.3)."""
    table = random_2d_table(np.random.default_rng(seed), n, individual)
    masks = np.arange(1 << n)
    for i in range(n):
        low = masks[(masks >> i & 1) == 0]
        gap = np.abs(table.values[low | (1 << i)] - table.values[low]).sum(axis=1)
        assert np.all(gap <= table.deltas[i] + 1e-9)


@pytest.mark.slow
@given(seed=SEEDS, n=st.integers(1, 5), individual=st.booleans())
@settings(max_examples=budget(40))
def test_each_value_is_an_l1_nearest_point_of_the_feasible_set(seed, n, individual):
    """f̂(D) ∈ K(D) = ∩ B₁(f̂(D∖i), Δ_i), at the LP's minimal ℓ1 distance from f(D)."""
    table = random_2d_table(np.random.default_rng(seed), n, individual)
    for m in range(1, 1 << n):
        who = members(m)
        centres = table.values[[m ^ (1 << i) for i in who]]
        radii = table.deltas[list(who)]
        assert np.all(np.abs(centres - table.values[m]).sum(axis=1) <= radii + 1e-9)
        proj = l1_projection(table.f_values[m], centres, radii)
        assert proj is not None                                    # Lemma 8.5: never empty in 2-D
        mine = float(np.abs(table.f_values[m] - table.values[m]).sum())
        assert mine == pytest.approx(proj.distance, abs=1e-7)


def test_lemma_8_9_error_bound_on_thousands_of_cases():
    """‖f(D) − f̂(D)‖₁ ≤ max_σ Σ_j (‖f(P_j) − f(P_{j−1})‖₁ − Δ_σ(j))⁺: 0 violations."""
    root = np.random.SeedSequence(8909)
    cases = violations = 0
    for child in root.spawn(300):
        rng = np.random.default_rng(child)
        table = random_2d_table(rng, int(rng.integers(1, 8)), bool(rng.integers(2)))
        err, bound = table.errors("l1"), permutation_error_bound(table, norm="l1")
        cases += err.size
        violations += int(np.sum(err > bound + 1e-9))
    assert cases >= 5000 and violations == 0


def test_two_dim_object_maps_records_to_individuals():
    pop = np.array([0.1, 0.5, 0.9, 0.5])
    spf = TwoDimSPF(lambda r: np.array([r.sum(), r.size]), [0.2, 0.4, 0.6, 0.8], population=pop)
    assert spf.sensitivity.norm == "l1" and spf.sensitivity.individual == (0.2, 0.4, 0.6, 0.8)
    assert spf.sensitivity.bound == 0.8
    # records → individuals by value; the repeated 0.5 maps to individual 1 first, then 3
    assert np.array_equal(spf([0.9, 0.5]), spf.at({1, 2}))
    assert np.array_equal(spf([0.5, 0.5]), spf.at({1, 3}))
    with pytest.raises(InvalidArgument, match="not in the population"):
        spf([0.3])
    with pytest.raises(InvalidArgument, match="ℝ²"):
        spf_l1_2d(lambda r: float(r.sum()), pop, 1.0)


# --- Remark 8.6: the naive 3-D extension is undefined ---------------------------------------

def test_naive_3d_extension_reports_an_empty_feasible_set():
    records, f, delta = remark_8_6_example()
    with pytest.raises(EmptyFeasibleSet) as info:
        spf_l1_naive(f, records, delta)
    err = info.value
    assert isinstance(err, DpauditError)
    assert err.subset == (0, 1, 2, 3) and err.dim == 3
    assert "undefined at D = {0, 1, 2, 3}" in str(err) and "\n" not in str(err)


def test_remark_8_6_construction_step_by_step():
    """f̂ = f on every set of size ≤ 3; the four balls at the full set meet pairwise, not jointly."""
    records, f, delta = remark_8_6_example()
    for trio in itertools.combinations(range(4), 3):
        sub = spf_l1_naive(f, records[list(trio)], delta)            # no error below size 4
        assert np.array_equal(sub.values, sub.f_values)
    centres = np.stack([f(np.delete(records, i)) for i in range(4)])  # f̂(D∖i) = f(D∖i)
    radii = np.full(4, delta)
    for i, j in itertools.combinations(range(4), 2):
        assert l1_projection(np.zeros(3), centres[[i, j]], radii[[i, j]]) is not None
    assert l1_projection(np.zeros(3), centres, radii) is None
    # Remark 3.4's coordinatewise preprocessing stays defined on the same f
    table = spf_table(f, records, delta)
    assert table.values.shape == (16, 3)


@given(seed=SEEDS, n=st.integers(1, 5))
@settings(max_examples=budget(15))
def test_naive_lp_version_is_always_defined_in_two_dimensions(seed, n):
    """In ℝ² the literal Definition 8.2 (LP projection) never meets an empty K(D) (Lemma 8.5)."""
    rng = np.random.default_rng(seed)
    vals = rng.normal(size=(1 << n, 2)) * 3
    table = spf_l1_naive(lambda r, B: vals, np.arange(n, dtype=float), rng.exponential(size=n), batched=True)
    assert np.all(np.isfinite(table.values))
