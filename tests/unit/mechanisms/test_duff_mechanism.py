"""Duff for the median: closed-form costs, pieces, law and spec (Muñoz Medina and Gillenwater (2020) Def 8; docs/math.md#duff-definition, #duff-median-cost, #duff-sampler)."""

import math

import numpy as np
import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.reference.duff import Duff, duff_cost, duff_pieces, duff_utility


def test_low_costs_on_gaps_of_five_points():
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0])          # n = 5, D = 2k − 5 on gap k
    xs = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
    # D = −5, −3, −1, 1, 3, 5 → c = 5, 3, 1, 2, 4, 6
    assert duff_cost(data, xs, "low", (0, 6)).tolist() == [5, 3, 1, 2, 4, 6]
    assert duff_cost(data, 3.0, "low", (0, 6)) == 0.0


def test_avg_costs_split_each_gap_at_its_midpoint():
    data = np.array([1.0, 2.0, 3.0, 4.0])                 # n = 4, AVG median 2.5
    c = duff_cost(data, [2.25, 2.5, 2.75, 3.25, 3.75, 0.25, 0.75], "avg", (0, 5))
    # D = 0 gap costs 1 except at the median; gap (3, 4): D = 2, near half 2, far half 3;
    # gap (0, 1): D = −4, far (left) half 5, near half 4
    assert c.tolist() == [1, 0, 1, 2, 3, 5, 4]


def test_cost_at_data_points_and_outside():
    data = np.array([1.0, 1.0, 2.0])
    assert duff_cost(data, 1.0, "avg", (0, 3)) == 0.0      # 1 is the median already
    assert duff_cost(data, 2.0, "avg", (0, 3)) == 2.0      # E = 1, D = 2: c₁ = 2 (e.g. drop both 1s)
    assert duff_cost(data, -1.0, "avg", (0, 3)) == math.inf
    assert duff_cost(data, 2.0, "low", (0, 3)) == 2.0
    assert duff_cost(data, 1.5, "avg", (0, 3)) == 1.0      # add a 2 (or a 3): median (1 + 2)/2
    assert duff_utility(data, 2.0, "avg", (0, 3)) == -2.0


def test_empty_data_costs_one_everywhere():
    for conv in ("low", "avg"):
        assert duff_cost(np.array([]), [0.2, 0.7], conv, (0, 1)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("conv", ["low", "avg"])
def test_pieces_agree_with_cost_inside_cells(conv):
    rng = np.random.default_rng(1)
    cases = [rng.uniform(-1, 1, n) for n in range(0, 9)]
    cases += [np.r_[-2.0, -2.0, 0.5, 0.5, 2.0], np.r_[-3.0, 1.0, 1.0, 1.0], np.full(4, 2.0)]  # ends, ties, clamping
    for data in cases:
        n = data.size
        edges, costs = duff_pieces(data, conv, (-2, 2))
        assert costs.size == edges.size - 1 == (n + 1 if conv == "low" else 2 * n + 2)
        mids = (edges[1:] + edges[:-1]) / 2
        inside = edges[1:] > edges[:-1]
        assert np.array_equal(duff_cost(data, mids[inside], conv, (-2, 2)), costs[inside])


@pytest.mark.parametrize("conv", ["low", "avg"])
def test_law_is_normalised_and_peaks_at_the_median(conv):
    data = np.random.default_rng(2).normal(size=51)
    m = Duff(2.0, -5.0, 5.0, conv)
    law = m.law(data)
    assert law.total_mass() == pytest.approx(1.0, rel=1e-12)
    top = np.argmax(law.log_density)
    assert law.edges[top] <= m.target(data) <= law.edges[top + 1]
    # density ratio between neighbouring cost levels is e^{−ε/2}
    lv = np.unique(law.log_density)
    assert np.diff(lv)[-1] == pytest.approx(1.0)


def test_validation():
    with pytest.raises(InvalidArgument, match="convention"):
        Duff(1.0, convention="mid")
    with pytest.raises(InvalidArgument, match="convention"):
        duff_cost(np.zeros(2), 0.0, "mean")
    with pytest.raises(InvalidArgument, match="epsilon"):
        Duff(math.inf)
    with pytest.raises(InvalidArgument, match="x must be"):
        duff_cost(np.zeros(2), math.nan)
    with pytest.raises(InvalidArgument, match="data"):
        duff_cost(np.array([1.0, math.inf]), 0.0)
    with pytest.raises(InvalidArgument, match="domain"):
        duff_cost(np.zeros(2), 0.0, "avg", (1, 1))


def test_sample_and_spec():
    m = Duff(1.0, 0.0, 10.0, "low")
    data = np.arange(1.0, 10.0)
    x = m.sample(data, np.random.default_rng(0), 2000)
    # a sanity band, not a test of the law (that is tests/statistical/test_duff_gof.py): a correct
    # sampler leaves it with probability 6e-12 (exact binomial tails of the law)
    assert np.all((x >= 0) & (x <= 10)) and abs(np.median(x) - 5.0) < 0.5
    assert isinstance(m.sample(data, np.random.default_rng(0)), float)
    spec = m.spec(size=4)
    assert (spec.epsilon, spec.neighbours.value, spec.size, spec.exact) == (1.0, "add-remove", 4, True)
    assert len(spec.call_batch(data[:4], np.random.default_rng(1), 3)) == 3
    assert m.cdf(data, [0.0, 10.0]) == pytest.approx([0.0, 1.0])
