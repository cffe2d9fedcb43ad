"""Scores, events and event selection (dpaudit/estimators/{scores,events,selection}.py)."""

import math

import numpy as np
import pytest

from dpaudit.estimators.events import Event
from dpaudit.estimators.scores import (AtomRatio, Coordinate, Identity, fit_atoms, fit_naive_bayes,
                                       fit_patterns)
from dpaudit.estimators.selection import choose_event
from dpaudit.outputs import OutputSchema
from dpaudit.spec import OutputKind

REAL = OutputSchema(OutputKind.REAL)


def test_threshold_events_are_half_open_complements():
    y = np.array([-1.0, 0.0, 0.5, 1.0])
    above, below = Event(Identity(), "above", lo=0.5), Event(Identity(), "below", hi=0.5)
    assert above.contains(y).tolist() == [False, False, True, True]
    assert (above.contains(y) ^ below.contains(y)).all()
    inter = Event(Identity(), "interval", lo=0.0, hi=1.0)
    assert inter.contains(y).tolist() == [False, True, True, False]
    assert above.text() == "output ≥ 0.5" and inter.text() == "0 ≤ output < 1"
    rec = above.to_record()
    assert rec["kind"] == "threshold" and rec["threshold"] == 0.5 and rec["side"] == "above"
    assert rec["lo"] == 0.5 and rec["hi"] == math.inf


def test_atom_ratio_orders_atoms_and_leaves_unseen_atoms_out():
    sc = fit_atoms(np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0, 1.0]))
    assert sc.llr[0] > 0 > sc.llr[1]
    ev = Event(sc, "above", lo=0.0)
    assert ev.contains(np.array([0.0, 1.0, 7.0])).tolist() == [True, False, False]
    assert Event(sc, "below", hi=0.0).contains(np.array([7.0])).tolist() == [False]
    rec = ev.to_record(lambda c: {0.0: "yes", 1.0: "no"}[c])
    assert rec["kind"] == "atoms" and rec["atoms"] == ["yes"]
    assert rec["text"] == "output ∈ {'yes'}"


def test_pattern_ratio_scores_whole_vectors():
    d = np.array([[0.0, 1.0]] * 3 + [[1.0, 0.0]])
    p = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]])
    sc = fit_patterns(d, p)
    s = sc(np.array([[0.0, 1.0], [1.0, 0.0], [5.0, 5.0]]))
    assert s[0] > 0 > s[1] and np.isnan(s[2])
    assert Event(sc, "above", lo=0.0).text() == "output vector ∈ {(0, 1)}"


def test_naive_bayes_adds_per_coordinate_log_ratios():
    rng = np.random.default_rng(0)
    d = np.c_[rng.normal(0, 1, 4000), rng.integers(0, 2, 4000)]
    p = np.c_[rng.normal(1, 1, 4000), (rng.random(4000) < 0.8)]
    sc = fit_naive_bayes(d, p)
    s = sc(np.array([[-2.0, 0.0], [2.0, 1.0]]))
    assert s[0] > 0 > s[1]
    assert Coordinate(1)(p).tolist() == p[:, 1].tolist()
    assert Event(sc, "above", lo=0.0).to_record()["kind"] == "score"


def test_selection_finds_the_laplace_tail_and_its_direction():
    rng = np.random.default_rng(1)
    nu = rng.laplace(scale=1.0, size=50_000)
    # a model over the reals (raw float64 x + Laplace is porous: see the next test)
    c = choose_event(nu, nu + 1.0, REAL, n_val=1e6, alpha=0.05, floats=False)
    # D' = D + 1 is the numerator: events where M(D') is likelier, with the ratio e exactly
    side_ok = (c.numerator == 1 and c.event.side in ("above", "interval")) or \
              (c.numerator == 0 and c.event.side == "below")
    assert side_ok
    assert 0.8 < c.projected < 1.1  # a projection (optimistic by design), not a bound
    assert c.curve is None or len(c.curve["threshold"]) == len(c.curve["epsilon_lower_bound"])


def test_float64_laplace_shift_is_seen_on_the_bits():
    from dpaudit.estimators.floats import FloatCellRatio

    rng = np.random.default_rng(1)
    nu = rng.laplace(scale=10.0, size=50_000)
    c = choose_event(nu, 1.0 + nu, REAL, n_val=1e6, alpha=0.05)
    assert isinstance(c.event.score, FloatCellRatio) and c.numerator == 0
    assert c.projected > 5.0
    rec = c.event.to_record()
    assert rec["kind"] == "float-structure" and "mantissa" in rec["text"]
    off = choose_event(nu, 1.0 + nu, REAL, n_val=1e6, alpha=0.05, floats=False)
    assert not isinstance(off.event.score, FloatCellRatio) and off.projected < 1.0


def test_nan_is_an_atom_of_the_output_space():
    rng = np.random.default_rng(3)
    yd = np.full(4000, np.nan)
    yp = rng.normal(size=4000)
    c = choose_event(yd, yp, REAL, n_val=1e6, alpha=0.05)
    assert c.projected > 5.0  # {NaN} on D, or its complement on D': both never happen on the other
    same = choose_event(yd, yd.copy(), REAL, n_val=1e6, alpha=0.05)
    assert same is None or same.projected <= 0.0


def test_selection_uses_atoms_for_discrete_outputs():
    rng = np.random.default_rng(2)
    yd = rng.choice(4, size=20_000, p=[0.4, 0.3, 0.2, 0.1]).astype(float)
    yp = rng.choice(4, size=20_000, p=[0.1, 0.2, 0.3, 0.4]).astype(float)
    c = choose_event(yd, yp, OutputSchema(OutputKind.DISCRETE, ordered=False), n_val=1e6, alpha=0.05,
                     paired=False)
    assert isinstance(c.event.score, AtomRatio)
    assert c.projected > 1.0


def test_selection_on_identical_laws_projects_no_violation():
    rng = np.random.default_rng(3)
    c = choose_event(rng.normal(size=20_000), rng.normal(size=20_000), REAL, n_val=1e6, alpha=0.05,
                     paired=False, honest=True)
    assert c is not None and c.projected < 0.05   # the best event projects no violation


def test_selection_needs_a_few_samples():
    assert choose_event(np.zeros(2), np.zeros(2), REAL, n_val=10, alpha=0.1) is None


def test_identity_score_record():
    assert Identity().to_record() == {"kind": "identity"}
    with pytest.raises(IndexError):
        Coordinate(3)(np.zeros((2, 2)))
