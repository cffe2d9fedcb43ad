"""Negative controls: the same encodings with a planted error come out REFUTED, so the proofs
are shown able to fail. Models of the controls are checked independently."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import linprog

from dpaudit.formal import Status, list_claims


@pytest.mark.slow
def test_controls_are_refuted(control_results, by_name):
    assert {r.name for r in control_results} >= {"control-l1-helly-3d", "control-l2-radius-0.9",
                                                   "control-quantile-change-one-max",
                                                   "control-laplace-loss-half"}
    for r in control_results:
        assert r.status is Status.REFUTED and r.matches_expected, (r.name, r.status)
        # the unmutated claim, same encoding, is proved in the shared run
        assert by_name[r.control_of].status is Status.PROVED
        assert r.name not in by_name  # controls stay out of the default run


def test_controls_are_listed_only_on_request():
    plain = {i.name for i in list_claims()}
    every = list_claims(include_controls=True)
    assert all(i.control_of is None for i in list_claims())
    assert {i.name for i in every if i.control_of} and not plain & {i.name for i in every if i.control_of}


def test_helly_3d_model_is_a_real_counterexample(control_results):
    """Four ℓ1 balls of ℝ³ from z3's model: pairwise ‖c_i − c_j‖₁ ≤ r_i + r_j exactly, and an LP
    shows the smallest common inflation t* of all radii that admits a common point is > 0."""
    r = next(r for r in control_results if r.name == "control-l1-helly-3d")
    m = r.model_exact
    c = [[Fraction(m[f"c{i}_{a}"]) for a in "xyz"] for i in range(4)]
    rad = [Fraction(m[f"r{i}"]) for i in range(4)]
    for i, j in itertools.combinations(range(4), 2):
        assert sum(abs(a - b) for a, b in zip(c[i], c[j])) <= rad[i] + rad[j]
    # variables (z_x, z_y, z_z, t); for each ball and sign vector s: s·(z − c_i) − t ≤ r_i
    rows, rhs = [], []
    for i in range(4):
        for s in itertools.product((1, -1), repeat=3):
            rows.append(list(s) + [-1.0])
            rhs.append(float(rad[i] + sum(si * ci for si, ci in zip(s, c[i]))))
    lp = linprog(c=[0, 0, 0, 1], A_ub=np.array(rows), b_ub=np.array(rhs),
                 bounds=[(None, None)] * 3 + [(None, None)], method="highs")
    assert lp.status == 0 and lp.fun > 1e-6, lp


def test_l2_radius_control_fails_on_a_pair(control_results):
    r = next(r for r in control_results if r.name == "control-l2-radius-0.9")
    q = next(q for q in r.queries if q.name == r.decided_by)
    assert q.needs == "sat" and q.answer == "unsat" and r.model is None


def test_wrong_constant_models_check_out(control_results):
    by = {r.name: r for r in control_results}
    m = by["control-quantile-change-one-max"].model_exact
    q = Fraction(m["q"])
    change = abs(Fraction(m["u_S_neighbour"]) - Fraction(m["u_S"]))
    assert max(q, 1 - q) < change <= 1
    m = by["control-laplace-loss-half"].model_exact
    eps, sens = Fraction(m["epsilon"]), Fraction(m["Delta"])
    y, c, c2 = Fraction(m["y"]), Fraction(m["c"]), Fraction(m["c_prime"])
    assert abs(c - c2) <= sens
    loss = eps * abs(y - c) / sens - eps * abs(y - c2) / sens
    assert eps / 2 < abs(loss) <= eps
