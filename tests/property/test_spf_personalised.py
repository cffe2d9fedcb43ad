"""Personalised DP (Cummings and Durfee 2020, Def 7.1, Props 7.3 and 7.5; docs/math.md#personalised-dp) by exact privacy loss.

For every configuration hypothesis draws (population, Δ_i, ε_i), every individual i and every
database D ∌ i of a small population, the exact loss ``sup_y |ln p_{D∪i}(y) − ln p_D(y)|`` between
the output laws (dpaudit.estimators.exact.pair_loss) must be at most ε_i: all pairs of each
searched configuration are checked, not a sample of them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.claims import Neighbours, PureDP
from dpaudit.errors import InvalidArgument
from dpaudit.estimators.exact import pair_loss
from dpaudit.reference.sensitivity_preprocessing import (
    GeneralSPF, PersonalisedExponential, PersonalisedLaplace, median_score, spf_table)

SEEDS = st.integers(0, 2**32 - 1)
#: HYPOTHESIS_PROFILE=thorough (tests/conftest.py) searches 25 times longer than CI.
THOROUGH = settings.default.max_examples > 100


def budget(examples: int) -> int:
    return examples * 25 if THOROUGH else examples


def i_neighbour_pairs(n: int):
    """(i, D, D ∪ {i}) as bitmasks, for every individual i and database D ∌ i."""
    for i in range(n):
        for m in range(1 << n):
            if not m >> i & 1:
                yield i, m, m | (1 << i)


def draw_individuals(rng: np.random.Generator, n: int):
    sens = rng.uniform(0.05, 2.0, size=n)
    eps = rng.uniform(0.1, 3.0, size=n)
    pop = np.round(rng.normal(size=n) * 2, 2)
    return sens, eps, pop


@pytest.mark.slow
@given(seed=SEEDS, n=st.integers(1, 4))
@settings(max_examples=budget(25))
def test_laplace_exact_loss_toward_each_individual_is_at_most_its_epsilon(seed, n):
    """Prop 7.3: f̂ + Lap(b), b = max Δ_i/ε_i, loses at most Δ_i/b ≤ ε_i toward individual i."""
    rng = np.random.default_rng(seed)
    sens, eps, pop = draw_individuals(rng, n)
    mech = PersonalisedLaplace(tuple(sens), tuple(eps))
    query = GeneralSPF(lambda r: float(np.mean(r)) if r.size else np.nan, sens, centre=0.0, population=pop)
    for i, D, Di in i_neighbour_pairs(n):
        loss = pair_loss(mech.law(query.at(Di)), mech.law(query.at(D))).epsilon
        assert loss <= mech.individual_epsilon(i) + 1e-9
        assert loss <= eps[i] + 1e-9


@given(seed=SEEDS, n=st.integers(1, 4), outputs=st.integers(2, 6))
@settings(max_examples=budget(25))
def test_exponential_exact_loss_toward_each_individual_is_at_most_its_epsilon(seed, n, outputs):
    """Prop 7.5 with Remark 7.6: preprocess the median score per output to Δ_i, then the EM."""
    rng = np.random.default_rng(seed)
    sens, eps, pop = draw_individuals(rng, n)
    outs = np.linspace(-3.0, 3.0, outputs)
    mech = PersonalisedExponential(tuple(sens), tuple(eps), tuple(outs.tolist()))
    scores = spf_table(lambda r: median_score(r, outs), pop, sens).values   # (2^n, outputs)
    for i, D, Di in i_neighbour_pairs(n):
        assert np.max(np.abs(scores[Di] - scores[D])) <= sens[i] + 1e-9       # Δ_i(u) ≤ Δ_i
        loss = pair_loss(mech.law(scores[Di]), mech.law(scores[D])).epsilon
        assert loss <= mech.individual_epsilon(i) + 1e-9
        assert loss <= eps[i] + 1e-9


def test_laplace_loss_is_exactly_delta_over_b_when_the_sensitivity_is_attained():
    """f(D) = Σ_{i∈D} Δ_i has individual sensitivity exactly Δ_i: the loss toward i is Δ_i/b."""
    sens, eps = np.array([0.5, 1.0, 0.2]), np.array([0.5, 2.0, 1.0])
    mech = PersonalisedLaplace(tuple(sens), tuple(eps))
    table = spf_table(lambda r, B: B @ sens, np.arange(3.0), sens, batched=True)
    assert np.array_equal(table.values, table.f_values)
    assert mech.scale == pytest.approx(1.0)
    for i, D, Di in i_neighbour_pairs(3):
        loss = pair_loss(mech.law(table.values[Di, 0]), mech.law(table.values[D, 0])).epsilon
        assert loss == pytest.approx(sens[i] / mech.scale, abs=1e-9)


def test_a_too_small_scale_is_caught_by_the_same_check():
    """Negative control: noise calibrated to twice the budgets loses more than ε_i toward someone."""
    sens, eps = np.array([0.5, 1.0, 0.2]), np.array([0.5, 2.0, 1.0])
    broken = PersonalisedLaplace(tuple(sens), tuple(2 * eps))
    table = spf_table(lambda r, B: B @ sens, np.arange(3.0), sens, batched=True)
    over = [pair_loss(broken.law(table.values[Di, 0]), broken.law(table.values[D, 0])).epsilon - eps[i]
            for i, D, Di in i_neighbour_pairs(3)]
    assert max(over) > 0.1


def test_specs_declare_the_implied_dp_claim_and_exact_laws():
    lap = PersonalisedLaplace((0.5, 1.0, 0.2), (0.5, 2.0, 1.0))
    em = PersonalisedExponential((0.5, 1.0, 0.2), (0.5, 2.0, 1.0), (0.0, 0.5, 1.0))
    for mech in (lap, em):
        assert mech.claim == PureDP(2.0) and mech.neighbours is Neighbours.ADD_REMOVE
        assert mech.sensitivity.individual == (0.5, 1.0, 0.2)
        spec = mech.spec()
        assert spec.epsilon == 2.0 and spec.size == 3 and spec.exact
        rng = np.random.default_rng(7)
        out = spec.call_batch([0.0, 0.5], rng, 5)
        assert len(out) == 5
        big, small = spec.distribution([0.0, 0.5, 1.0]), spec.distribution([0.0, 0.5])
        assert pair_loss(big, small).epsilon <= spec.epsilon + 1e-9


def test_bad_parameters_are_one_line_errors():
    with pytest.raises(InvalidArgument, match="equal"):
        PersonalisedLaplace((1.0, 1.0), (1.0,))
    with pytest.raises(InvalidArgument, match=r"epsilons\[1\]"):
        PersonalisedLaplace((1.0, 1.0), (1.0, 0.0))
    with pytest.raises(InvalidArgument, match="not all 0"):
        PersonalisedLaplace((0.0,), (1.0,))
    with pytest.raises(InvalidArgument, match="distinct"):
        PersonalisedExponential((1.0,), (1.0,), (1, 1))
    with pytest.raises(InvalidArgument, match="one per output"):
        PersonalisedExponential((1.0,), (1.0,), (1, 2)).law([0.0])
    with pytest.raises(InvalidArgument, match="Generator"):
        PersonalisedLaplace((1.0,), (1.0,)).sample(0.0, rng=0)
