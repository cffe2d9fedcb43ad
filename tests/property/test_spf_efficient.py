"""The efficient preprocessings against the general algorithm and Cummings and Durfee (2020) §5-6 (docs/math.md#database-ordered, #spf-median, #spf-mean, #spf-variance).

Oracle: :func:`spf_table` over all 2^n subsets (n ≤ 12), with f the plain statistic evaluated by
:func:`subset_statistic` (itself checked against ``statistic_value`` here). Then each efficient
algorithm must return the same f̂, keep the sensitivity bound on every pair hypothesis generates,
and satisfy the paper's accuracy statements on thousands of generated cases.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpaudit.errors import InvalidArgument
from dpaudit.reference.sensitivity_preprocessing import (
    MedianSPF, OrderedSPF, VarianceSPF, mean_bounds, mean_error_bound, mean_exact_condition,
    median_exact_condition, spf_median, spf_ordered, spf_table, spf_variance, statistic_value,
    variance_witness)
from dpaudit.reference.sensitivity_preprocessing.statistics import subset_statistic
from dpaudit.reference.sensitivity_preprocessing.subsets import membership

SEEDS = st.integers(0, 2**32 - 1)
#: HYPOTHESIS_PROFILE=thorough (tests/conftest.py) searches 25 times longer than CI.
THOROUGH = settings.default.max_examples > 100


def budget(examples: int) -> int:
    return examples * 25 if THOROUGH else examples
VARIANTS = [("mean", {}), ("trimmed-mean", {"alpha": 0.1}), ("trimmed-mean", {"alpha": 0.25}),
            ("trimmed-mean", {"alpha": 0.4}), ("median", {"convention": "low"}),
            ("median", {"convention": "avg"}), ("max", {}), ("min", {})]
TOL = 1e-9


def random_data(rng: np.random.Generator, n: int) -> np.ndarray:
    """Data with a scale, an offset, ties (rounding) and sometimes outliers."""
    x = rng.normal(size=n) * rng.choice([0.2, 1.0, 5.0]) + rng.choice([0.0, 3.0])
    if rng.random() < 0.5:
        x = np.round(x, 1)
    if n and rng.random() < 0.3:
        x[rng.integers(n)] += rng.choice([-1, 1]) * 50.0
    return x


def oracle(x, statistic, delta, centre, **kw):
    def f(records, B):
        return subset_statistic(statistic, records, B, **kw)
    return spf_table(f, x, delta, centre=centre, batched=True)


def test_subset_statistic_matches_the_plain_statistic():
    rng = np.random.default_rng(10)
    for _ in range(30):
        n = int(rng.integers(1, 8))
        x = random_data(rng, n)
        B = membership(n)
        for stat, kw in VARIANTS:
            got = subset_statistic(stat, x, B, **kw)
            want = np.array([statistic_value(x[B[m]], stat, **kw) for m in range(1 << n)])
            assert np.isnan(got[0]) and np.isnan(want[0])
            assert np.allclose(got[1:], want[1:], rtol=0, atol=1e-12)
        var = subset_statistic("variance", x, B)
        assert np.allclose(var, [np.var(x[B[m]]) if B[m].any() else 0.0 for m in range(1 << n)], atol=1e-12)


# --- Lemma 5.2 / Cor 5.3, Lemma 5.4: equal to the general algorithm --------------------------

@pytest.mark.slow
@given(seed=SEEDS, n=st.integers(1, 12), delta=st.sampled_from([0.05, 0.3, 1.0, 4.0]),
       centre=st.sampled_from([-2.0, 0.0, 0.7, 10.0]))
@settings(max_examples=budget(40))
@example(seed=1, n=12, delta=0.3, centre=0.0)
@example(seed=2, n=12, delta=0.05, centre=10.0)
@example(seed=3, n=11, delta=1.0, centre=-2.0)
def test_efficient_algorithms_equal_the_general_algorithm(seed, n, delta, centre):
    """Ordered O(n²) DP, O(n) median chain and variance DP = general f̂, at D and at subsets of D."""
    rng = np.random.default_rng(seed)
    x = random_data(rng, n)
    picks = [(1 << n) - 1] + [int(m) for m in rng.integers(1, 1 << n, size=3)]
    B = membership(n)
    for stat, kw in VARIANTS:
        table = oracle(x, stat, delta, centre, **kw)
        for m in picks:
            want = table.values[m, 0]
            assert spf_ordered(x[B[m]], stat, delta, centre, **kw) == pytest.approx(want, abs=TOL)
            if stat == "median":
                got = spf_median(np.sort(x[B[m]]), delta, centre, **kw)
                assert got == pytest.approx(want, abs=TOL)
    table = oracle(x, "variance", delta, 0.0)
    for m in picks:
        assert spf_variance(x[B[m]], delta) == pytest.approx(table.values[m, 0], abs=TOL)
        assert variance_witness(x[B[m]], delta).value == pytest.approx(table.values[m, 0], abs=TOL)


@given(seed=SEEDS, n=st.integers(0, 300), delta=st.floats(0.0, 3.0), centre=st.floats(-5.0, 5.0))
@settings(max_examples=budget(60))
def test_median_chain_equals_quadratic_dp_on_larger_data(seed, n, delta, centre):
    rng = np.random.default_rng(seed)
    x = np.sort(random_data(rng, n))
    for conv in ("low", "avg"):
        want = spf_ordered(x, "median", delta, centre, convention=conv)
        assert spf_median(x, delta, centre, convention=conv) == pytest.approx(want, abs=TOL)


# --- Individual sensitivity of every efficient implementation --------------------------------

RECORDS = st.floats(-100.0, 100.0, allow_nan=False, allow_infinity=False)


@pytest.mark.slow
@given(data=st.lists(RECORDS, max_size=25), z=RECORDS, delta=st.floats(0.0, 5.0),
       centre=st.floats(-50.0, 50.0))
@settings(max_examples=budget(150))
def test_every_efficient_preprocessing_keeps_sensitivity_delta(data, z, delta, centre):
    """|f̂(D ∪ {z}) − f̂(D)| ≤ Δ for the ordered statistics, the median chain and the variance."""
    D = np.asarray(data, dtype=float)
    Dz = np.append(D, z)
    fns = [OrderedSPF(stat, delta, centre, **kw) for stat, kw in VARIANTS]
    fns += [MedianSPF(delta, centre, "low"), MedianSPF(delta, centre, "avg"), VarianceSPF(delta)]
    for fn in fns:
        assert fn.sensitivity.bound == delta
        assert abs(fn(Dz) - fn(D)) <= delta + 1e-9 * (1 + abs(fn(D)))


# --- Theorem 1.6 (median exactness) and Lemma 5.5 (no overshoot) ----------------------------

@pytest.mark.slow
def test_theorem_1_6_exactness_and_no_overshoot_on_thousands_of_cases():
    root = np.random.SeedSequence(1606)
    cases = exact_claimed = violations = overshoot = 0
    for child in root.spawn(2000):
        rng = np.random.default_rng(child)
        n = int(rng.integers(1, 40))
        x = np.sort(np.round(rng.normal(size=n) * rng.choice([0.3, 1.0, 3.0]), 2))
        delta = float(rng.choice([0.05, 0.2, 0.5, 1.0]))
        centre = float(np.round(rng.normal() * 2, 1))
        for conv in ("low", "avg"):
            fh = spf_median(x, delta, centre, convention=conv)
            med = statistic_value(x, "median", convention=conv)
            cases += 1
            overshoot += int(not (min(centre, med) - TOL <= fh <= max(centre, med) + TOL))
            if median_exact_condition(x, delta, centre, convention=conv):
                exact_claimed += 1
                violations += int(abs(fh - med) > TOL)
    assert cases >= 4000 and violations == 0 and overshoot == 0
    assert exact_claimed >= 0.2 * cases       # the condition is not vacuous


# --- Theorem 1.7 and Definition 5.8 (mean) ---------------------------------------------------

def mean_bounds_by_recursion(x, delta, centre):
    """Def 5.8 as a recursion: f_low(D) = min(mean(D), f_low(D∖x_max) + Δ), f_up symmetric."""
    s = np.sort(x)
    low = up = centre
    for j in range(1, s.size + 1):
        low = min(float(np.mean(s[:j])), low + delta)
        up = max(float(np.mean(s[-j:])), up - delta)
    return low, up


@pytest.mark.slow
def test_theorem_1_7_bounds_error_and_exactness_on_thousands_of_cases():
    root = np.random.SeedSequence(1707)
    cases = exact_claimed = tight = 0
    bad = {"sandwich": 0, "error": 0, "exact": 0, "closed-form": 0}
    for child in root.spawn(3000):
        rng = np.random.default_rng(child)
        n = int(rng.integers(1, 30))
        x = random_data(rng, n)
        delta = float(rng.choice([0.05, 0.2, 0.5, 1.0]))
        centre = float(np.round(rng.normal() * 2, 1))
        fh = spf_ordered(x, "mean", delta, centre)
        b = mean_bounds(x, delta, centre)
        cases += 1
        bad["closed-form"] += int(not np.allclose((b.low, b.up), mean_bounds_by_recursion(x, delta, centre), atol=TOL))
        bad["sandwich"] += int(not (b.low - TOL <= fh <= b.up + TOL))
        err, bound = abs(np.mean(x) - fh), mean_error_bound(x, delta, centre)
        bad["error"] += int(err > bound + TOL * (1 + abs(fh)))
        tight += int(abs(err - bound) <= TOL * (1 + abs(fh)))
        if mean_exact_condition(x, delta, centre):
            exact_claimed += 1
            bad["exact"] += int(abs(fh - np.mean(x)) > TOL * (1 + abs(fh)))
    assert cases == 3000 and bad == {"sandwich": 0, "error": 0, "exact": 0, "closed-form": 0}
    assert exact_claimed >= 300 and tight >= 300


@given(seed=SEEDS, n=st.integers(1, 10))
@settings(max_examples=budget(30))
def test_mean_statements_against_the_general_algorithm(seed, n):
    rng = np.random.default_rng(seed)
    x = random_data(rng, n)
    delta, centre = float(rng.choice([0.1, 0.5])), float(rng.normal())
    fh = oracle(x, "mean", delta, centre).values[-1, 0]
    b = mean_bounds(x, delta, centre)
    assert b.low - TOL <= fh <= b.up + TOL
    assert abs(np.mean(x) - fh) <= mean_error_bound(x, delta, centre) + TOL


# --- Variance: Lemmas 6.4, 6.5, 6.9 ----------------------------------------------------------

def test_lemma_6_5_and_6_9_on_thousands_of_subsets():
    """On every subset of random populations: general f̂ ≤ Var (Lemma 6.5), and f̂ = Var(D') +
    |D∖D'|Δ for the Lemma 6.9 witness D' (a contiguous range of the sorted records)."""
    root = np.random.SeedSequence(6506)
    cases = violations = 0
    for child in root.spawn(60):
        rng = np.random.default_rng(child)
        n = int(rng.integers(1, 10))
        x = random_data(rng, n)
        delta = float(rng.choice([0.01, 0.1, 1.0, 5.0]))
        table = oracle(x, "variance", delta, 0.0)
        cases += 1 << n
        violations += int(np.sum(table.values[:, 0] > table.f_values[:, 0] + TOL))
        w = variance_witness(x, delta)
        s = np.sort(x)
        part = s[w.start:w.start + w.length]
        rebuilt = (float(np.var(part)) if part.size else 0.0) + (n - w.length) * delta
        assert rebuilt == pytest.approx(table.values[-1, 0], abs=TOL)
    assert cases >= 2000 and violations == 0


# --- validation ------------------------------------------------------------------------------

def test_bad_inputs_are_clear_errors():
    with pytest.raises(InvalidArgument, match="sorted"):
        spf_median([3.0, 1.0, 2.0], 1.0, 0.0)
    with pytest.raises(InvalidArgument, match="statistic"):
        spf_ordered([1.0], "mode", 1.0, 0.0)
    with pytest.raises(InvalidArgument, match="alpha"):
        OrderedSPF("trimmed-mean", 1.0, 0.0, alpha=0.5)
    with pytest.raises(InvalidArgument, match="delta"):
        VarianceSPF(-1.0)
    with pytest.raises(InvalidArgument, match="centre"):
        MedianSPF(1.0, float("nan"))
    with pytest.raises(InvalidArgument, match="finite"):
        spf_ordered([1.0, float("inf")], "mean", 1.0, 0.0)
    with pytest.raises(InvalidArgument, match="convention"):
        spf_median([1.0], 1.0, 0.0, convention="high")
    with pytest.raises(InvalidArgument, match="non-empty"):
        median_exact_condition([], 1.0, 0.0)
    with pytest.raises(InvalidArgument, match="non-empty"):
        mean_error_bound([], 1.0, 0.0)
