"""The fast smooth sensitivity of the median equals the O(n²) reference (n ≤ 200) and the
brute-force oracle of docs/math.md#median-ss-oracle (n ≤ 8), under replace-one and add/remove."""

import itertools
import math

import numpy as np

from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.reference.analysis.smooth_sensitivity import median_smooth_sensitivity

LO, HI = 0.0, 4.0


def _med(vals, conv):
    v = sorted(vals)
    n = len(v)
    if conv == "low":
        return v[(n + 1) // 2 - 1]
    return (v[(n + 1) // 2 - 1] + v[n // 2]) / 2


def oracle_replace(data, beta, a=LO, b=HI):
    """docs/math.md#median-ss-oracle: every size-n multiset S' over U = {s_i} ∪ {a, b}; d = n − |S ∩ S'|; LS(S') by
    trying every replacement by an element of U; SS = max e^{−βd} LS(S')."""
    S = sorted(min(max(float(x), a), b) for x in data)
    n = len(S)
    U = sorted(set(S) | {a, b})
    base = {u: S.count(u) for u in U}
    best = 0.0
    for T in itertools.combinations_with_replacement(U, n):
        d = n - sum(min(base[u], T.count(u)) for u in U)
        t0 = _med(T, "low")
        ls = max(abs(_med(T[:i] + (u,) + T[i + 1:], "low") - t0) for i in range(n) for u in U)
        best = max(best, math.exp(-beta * d) * ls)
    return best


def oracle_add_remove(data, beta, a=LO, b=HI):
    """docs/math.md#median-ss-oracle for add/remove: breadth-first over multisets over U (sizes ≥ 1) by add/remove
    steps; LS(S') over every add of an element of U and every removal; stop once
    e^{−β(d+1)}·(b − a)/2 (the most any farther dataset can contribute) is ≤ the best so far."""
    S = tuple(sorted(min(max(float(x), a), b) for x in data))
    U = sorted(set(S) | {a, b})

    def ls(T):
        t0 = _med(T, "avg")
        out = max(abs(_med(T + (u,), "avg") - t0) for u in U)
        if len(T) > 1:
            for v in set(T):
                T2 = list(T)
                T2.remove(v)
                out = max(out, abs(_med(T2, "avg") - t0))
        return out

    seen, frontier, best, d = {S}, [S], ls(S), 0
    while math.exp(-beta * (d + 1)) * (b - a) / 2 > best:
        d += 1
        nxt = []
        for T in frontier:
            moves = [tuple(sorted(T + (u,))) for u in U]
            for v in set(T):
                T2 = list(T)
                T2.remove(v)
                if T2:
                    moves.append(tuple(T2))
            for T2 in moves:
                if T2 not in seen:
                    seen.add(T2)
                    nxt.append(T2)
                    best = max(best, math.exp(-beta * d) * ls(T2))
        frontier = nxt
    return best


values = st.one_of(st.integers(0, 4).map(float), st.floats(-1.0, 5.0, allow_nan=False))
betas = st.sampled_from([0.0, 1e-3, 0.05, 0.3, 1.0, 4.0])


@settings(max_examples=150)
@given(st.lists(values, min_size=1, max_size=200), betas, st.sampled_from(["replace", "add-remove"]))
def test_fast_equals_quadratic_reference(data, beta, rel):
    fast = median_smooth_sensitivity(data, beta, LO, HI, rel, "fast")
    ref = median_smooth_sensitivity(data, beta, LO, HI, rel, "quadratic")
    assert math.isclose(fast, ref, rel_tol=1e-12, abs_tol=0.0)


@settings(max_examples=150)
@given(st.lists(st.integers(0, 30).map(lambda k: k / 10), min_size=1, max_size=200),
       st.sampled_from([0.0, 1e-3, 0.02, 0.5]), st.sampled_from(["replace", "add-remove"]))
def test_fast_equals_quadratic_with_many_ties(data, beta, rel):
    fast = median_smooth_sensitivity(data, beta, 0.0, 3.0, rel, "fast")
    ref = median_smooth_sensitivity(data, beta, 0.0, 3.0, rel, "quadratic")
    assert math.isclose(fast, ref, rel_tol=1e-12, abs_tol=0.0)


def _generated(n, seed, shape):
    rng = np.random.default_rng(seed)
    if shape == "normal":
        return rng.normal(2.0, 1.0, n)
    if shape == "ties":
        return rng.integers(0, 5, n).astype(float)
    if shape == "ends":
        return rng.choice([LO, HI, LO + 1e-3, HI - 1e-3], n)
    return np.r_[rng.normal(0.5, 0.01, n // 2), rng.normal(3.5, 0.01, n - n // 2)]


@settings(max_examples=100)
@given(st.integers(1, 200), st.integers(0, 2**32 - 1), st.sampled_from(["normal", "ties", "ends", "clusters"]),
       betas, st.sampled_from(["replace", "add-remove"]))
def test_fast_equals_quadratic_on_generated_data_up_to_200(n, seed, shape, beta, rel):
    data = _generated(n, seed, shape)
    fast = median_smooth_sensitivity(data, beta, LO, HI, rel, "fast")
    ref = median_smooth_sensitivity(data, beta, LO, HI, rel, "quadratic")
    assert math.isclose(fast, ref, rel_tol=1e-12, abs_tol=0.0)


small_integer_data = st.lists(st.integers(0, 4).map(float), min_size=1, max_size=8)
small_float_data = st.lists(st.floats(-1.0, 5.0, allow_nan=False), min_size=1, max_size=5)


@settings(max_examples=100)
@given(st.one_of(small_integer_data, small_float_data), st.sampled_from([0.0, 0.2, 0.7, 2.0]))
def test_replace_one_equals_brute_force(data, beta):
    got = median_smooth_sensitivity(data, beta, LO, HI, "replace")
    assert math.isclose(got, oracle_replace(data, beta), rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=100)
@given(st.one_of(small_integer_data, small_float_data), st.sampled_from([0.5, 0.9, 2.0]))
def test_add_remove_equals_brute_force(data, beta):
    got = median_smooth_sensitivity(data, beta, LO, HI, "add-remove")
    assert math.isclose(got, oracle_add_remove(data, beta), rel_tol=1e-12, abs_tol=1e-15)
