"""check_sensitivity on small functions whose sensitivity is known exactly (docs/math.md#neighbour-relations, #individual-model).

Each test asserts the verdict and, for refutations, the size of the counterexample and that it
really breaks the bound (recomputed here, independently of the search).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import dpaudit
from dpaudit.claims import SensitivityBound
from dpaudit.errors import InvalidArgument
from dpaudit.results import Verdict
from dpaudit.sensitivity import PROFILES, SensitivityResult


def clipped_sum(x):
    return float(np.sum(np.clip(x, 0.0, 1.0)))


def unclipped_sum(x):
    return float(np.sum(x))


def pair_of_sums(x):
    s = float(np.sum(np.clip(x, 0.0, 1.0)))
    return (s, s)


def _run_snippet(result: SensitivityResult, f) -> float:
    """Run the reproduce snippet with ``f`` supplied and return the gap it computes."""
    ns = {"f": f}
    code = result.reproduce.replace("print(", "_printed = (")
    exec(code, ns)
    return float(ns["gap"])


def test_unclipped_sum_is_refuted_with_a_tiny_reproducible_counterexample():
    r = dpaudit.check_sensitivity(unclipped_sum, 1.0, neighbours="add-remove", domain=(0, 10),
                                  sizes=20, examples=300, seed=3)
    assert r.verdict is Verdict.REFUTED
    c = r.counterexample
    assert c.records <= 3
    assert abs(unclipped_sum(np.array(c.dataset)) - unclipped_sum(np.array(c.neighbour))) > 1.0
    assert c.gap > 1.0 and r.ratio >= c.gap / 1.0 and r.max_gap >= c.gap
    assert abs(len(c.dataset) - len(c.neighbour)) == 1
    assert _run_snippet(r, unclipped_sum) == pytest.approx(c.gap, rel=0, abs=0)


@pytest.mark.slow
def test_correct_bounds_are_not_refuted_and_the_search_gets_close_to_them():
    r = dpaudit.check_sensitivity(clipped_sum, 1.0, neighbours="add-remove", domain=(-5, 5),
                                  sizes=30, examples=500, seed=1)
    assert r.verdict is Verdict.NOT_REFUTED and r.counterexample is None
    assert 0.99 <= r.ratio <= 1.0 + 1e-9 and r.examples == 500
    assert r.tightest is not None and r.tightest.ratio == r.ratio
    n = 8  # a mean over exactly n records in [0, 1] moves by at most 1/n when one is replaced
    r = dpaudit.check_sensitivity(lambda x: float(np.mean(x)), 1.0 / n, neighbours="replace",
                                  domain=(0, 1), sizes=(n, n), examples=300, seed=1)
    assert r.verdict is Verdict.NOT_REFUTED and r.ratio > 0.9


@pytest.mark.slow
def test_same_seed_same_result_and_different_seeds_still_refute():
    kw = dict(neighbours="replace", domain=(0, 4), sizes=(1, 12), examples=300)
    a = dpaudit.check_sensitivity(unclipped_sum, 2.0, seed=7, **kw).to_record()
    b = dpaudit.check_sensitivity(unclipped_sum, 2.0, seed=7, **kw).to_record()
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert a == b
    for s in range(3):
        assert dpaudit.check_sensitivity(unclipped_sum, 2.0, seed=s, **kw).verdict is Verdict.REFUTED


@pytest.mark.slow
def test_vector_outputs_under_each_norm():
    """(s, s) with s a clipped sum: sensitivity 2 in l1, sqrt(2) in l2, 1 in linf."""
    kw = dict(neighbours="add-remove", domain=(0, 1), sizes=6, examples=300, seed=2)
    for norm, true in (("l1", 2.0), ("l2", math.sqrt(2.0)), ("linf", 1.0)):
        ok = dpaudit.check_sensitivity(pair_of_sums, true, norm=norm, **kw)
        assert ok.verdict is Verdict.NOT_REFUTED, norm
        bad = dpaudit.check_sensitivity(pair_of_sums, 0.9 * true, norm=norm, **kw)
        assert bad.verdict is Verdict.REFUTED and bad.counterexample.records <= 2, norm
        assert bad.counterexample.gap == pytest.approx(true)


@pytest.mark.slow
def test_linf_and_l1_relations():
    """Σ of a vector of answers: sensitivity n under linf, 1 under l1."""
    kw = dict(domain=(-10, 10), sizes=(1, 8), examples=300, seed=4)
    r = dpaudit.check_sensitivity(unclipped_sum, 1.0, neighbours="linf", **kw)
    assert r.verdict is Verdict.REFUTED and r.counterexample.records == 2
    r = dpaudit.check_sensitivity(unclipped_sum, 1.0, neighbours="l1", **kw)
    assert r.verdict is Verdict.NOT_REFUTED and r.ratio == pytest.approx(1.0)
    r = dpaudit.check_sensitivity(unclipped_sum, 1.0, neighbours="l1", integers=True, **kw)
    assert r.verdict is Verdict.NOT_REFUTED


@pytest.mark.slow
def test_individual_bounds_name_the_individual():
    """f(D) = Σ_{j∈D} w_j x_j on [0, 1] has Δ_j = w_j exactly (Cummings and Durfee (2020), Definition 2.3)."""
    w = np.array([1.0, 2.0, 0.5, 3.0, 1.0, 1.5])

    def weighted(data, ids):
        return float(np.dot(w[ids], data)) if len(ids) else 0.0

    kw = dict(neighbours="add-remove", domain=(0, 1), sizes=5, examples=400, seed=5)
    r = dpaudit.check_sensitivity(weighted, SensitivityBound(3.0, tuple(w)), **kw)
    assert r.verdict is Verdict.NOT_REFUTED and r.ratio == pytest.approx(1.0)
    wrong = tuple(w[:3]) + (2.0,) + tuple(w[4:])   # individual 3 really has Δ_3 = 3
    r = dpaudit.check_sensitivity(weighted, 3.0, individual=wrong, **kw)
    assert r.verdict is Verdict.REFUTED
    c = r.counterexample
    assert c.individual == 3 and c.allowed == 2.0 and c.records <= 2
    assert 3 in (c.ids + c.neighbour_ids) and abs(len(c.ids) - len(c.neighbour_ids)) == 1
    assert c.gap == pytest.approx(abs(weighted(np.array(c.dataset), np.array(c.ids, dtype=int))
                                      - weighted(np.array(c.neighbour), np.array(c.neighbour_ids, dtype=int))))
    assert "ids" in r.reproduce and _run_snippet(r, weighted) == pytest.approx(c.gap)


@pytest.mark.slow
def test_utilities_searched_over_r_and_over_a_grid():
    """u(D, r) = −|#{x<r} − #{x>r}| (a median utility) has add-remove sensitivity 1."""
    def u(data, r):
        return -abs(float(np.sum(data < r)) - float(np.sum(data > r)))

    kw = dict(neighbours="add-remove", domain=(0, 1), sizes=10, examples=300, seed=6)
    assert dpaudit.check_sensitivity(u, 1.0, outputs=(0, 1), **kw).verdict is Verdict.NOT_REFUTED
    r = dpaudit.check_sensitivity(u, 0.5, outputs=(0, 1), **kw)
    assert r.verdict is Verdict.REFUTED and r.counterexample.records <= 1
    assert r.counterexample.output is not None and "r" not in r.to_record()["claim"]
    g = dpaudit.check_sensitivity(u, 0.5, output_grid=np.linspace(0, 1, 11), **kw)
    assert g.verdict is Verdict.REFUTED and g.counterexample.output in set(np.linspace(0, 1, 11))
    assert _run_snippet(g, u) == pytest.approx(g.counterexample.gap)


@pytest.mark.slow
def test_raise_nan_and_declared_out_of_domain_inputs():
    def mean(x):
        return float(np.sum(x) / len(x))   # nan (numpy 0/0) on the empty dataset

    r = dpaudit.check_sensitivity(mean, 1.0, neighbours="add-remove", domain=(0, 1), sizes=5,
                                  examples=200, seed=1)
    assert r.verdict is Verdict.ERROR and "nan" in r.error
    assert r.counterexample is not None and min(len(r.counterexample.dataset),
                                                len(r.counterexample.neighbour)) == 0

    def strict_mean(x):
        if len(x) == 0:
            raise ValueError("mean of nothing")
        return float(np.mean(x))

    r = dpaudit.check_sensitivity(strict_mean, 1.0, neighbours="add-remove", domain=(0, 1),
                                  sizes=5, examples=200, seed=1)
    assert r.verdict is Verdict.ERROR and "ValueError: mean of nothing" in r.error
    assert "strict_mean raised ValueError" in r.error  # it read "f raised", whatever the name
    assert "strict_mean" in r.reproduce or "f(" in r.reproduce
    for ood in (ValueError, (ValueError, KeyError), lambda x: len(x) == 0):
        r = dpaudit.check_sensitivity(strict_mean, 1.0, neighbours="add-remove", domain=(0, 1),
                                      sizes=5, examples=200, seed=1, out_of_domain=ood)
        assert r.verdict is Verdict.NOT_REFUTED, ood
        assert r.details["skipped_out_of_domain"] > 0
    r = dpaudit.check_sensitivity(strict_mean, 1.0, neighbours="add-remove", domain=(0, 1),
                                  sizes=5, examples=50, seed=1, out_of_domain=lambda x: True)
    assert r.verdict is Verdict.ERROR and "out of domain" in r.error


@pytest.mark.slow
def test_bad_outputs_are_errors_not_tracebacks():
    cases = [(lambda x: None, "None"), (lambda x: "a", "not a number"),
             (lambda x: np.inf, "inf"), (lambda x: np.zeros(len(x)), "shapes"),
             (lambda x: np.zeros((2, 2)), "shape (2, 2)"),
             (lambda x: 10 ** 400, "a number too large for a float (1000"),
             (lambda x: 10 ** 5000, "a number too large for a float (an int of 16610 bits)")]
    for f, text in cases:
        r = dpaudit.check_sensitivity(f, 1.0, neighbours="add-remove", domain=(0, 1), sizes=(1, 4),
                                      examples=50, seed=1)
        assert r.verdict is Verdict.ERROR and text in r.error, (text, r.error)


def test_nondeterministic_and_mutating_functions_do_not_break_the_search():
    rng = np.random.default_rng(0)

    def noisy(x):
        return float(np.sum(x) + rng.normal())

    r = dpaudit.check_sensitivity(noisy, 0.5, neighbours="add-remove", domain=(0, 1), sizes=4,
                                  examples=100, seed=1)
    assert r.verdict is Verdict.REFUTED

    def sorts_in_place(x):
        x.sort()
        x[:] = 0.0
        return 5.0 * len(x)

    r = dpaudit.check_sensitivity(sorts_in_place, 1.0, neighbours="add-remove", domain=(1, 2),
                                  sizes=4, examples=100, seed=1)
    assert r.verdict is Verdict.REFUTED
    assert all(v >= 1.0 for v in r.counterexample.dataset + r.counterexample.neighbour)


@pytest.mark.slow
def test_record_is_json_and_follows_the_common_keys():
    r = dpaudit.check_sensitivity(unclipped_sum, 1.0, neighbours="add-remove", domain=(0, 3),
                                  sizes=4, examples=100, seed=1, target="sum")
    rec = json.loads(json.dumps(r.to_record()))
    for key in ("kind", "target", "verdict", "elapsed_s", "reproduce", "error", "claim", "max_gap",
                "ratio", "counterexample", "examples"):
        assert key in rec
    assert rec["kind"] == "sensitivity" and rec["target"] == "sum" and rec["verdict"] == "refuted"
    assert rec["claim"] == {"bound": 1.0, "individual": None, "neighbours": "add-remove", "norm": "l1"}
    assert set(rec["counterexample"]) >= {"dataset", "neighbour", "individual", "f_dataset", "f_neighbour"}
    assert "REFUTED" in str(r)


@pytest.mark.slow
def test_nothing_is_printed(capsys):
    dpaudit.check_sensitivity(unclipped_sum, 1.0, neighbours="add-remove", domain=(0, 3), sizes=4,
                              examples=100, seed=1)
    dpaudit.check_sensitivity(lambda x: 1 / 0, 1.0, neighbours="add-remove", domain=(0, 3),
                              sizes=4, examples=100, seed=1)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


@pytest.mark.slow
def test_profiles_and_bound_from_the_function():
    assert PROFILES["ci"].examples == 1_000 and PROFILES["thorough"].examples == 20_000

    def f(x):
        return float(np.sum(np.clip(x, 0, 1)))

    f.sensitivity = SensitivityBound(1.0)
    r = dpaudit.check_sensitivity(f, neighbours="add-remove", domain=(0, 2), sizes=5,
                                  profile="thorough", examples=100, seed=1)
    assert r.verdict is Verdict.NOT_REFUTED and r.profile == "thorough" and r.bound == 1.0


@pytest.mark.parametrize("kwargs, name", [
    (dict(bound=-1.0), "bound"),
    (dict(bound=float("nan")), "bound"),
    (dict(neighbours="swap"), "neighbours"),
    (dict(norm="l3"), "norm"),
    (dict(examples=0), "examples"),
    (dict(profile="fast"), "profile"),
    (dict(sizes=(3, 2)), "sizes"),
    (dict(domain=(1, 0)), "domain"),
    (dict(individual=(1.0,), neighbours="replace"), "neighbours"),
    (dict(individual=(-1.0,)), r"individual\[0\]"),
    (dict(outputs=(0, 1), output_grid=[0.5]), "either"),
    (dict(out_of_domain=3), "out_of_domain"),
    (dict(seed=-1), "seed"),
    (dict(bound=SensitivityBound(1.0, norm="l2"), norm="l1"), "norm"),
])
def test_invalid_arguments_name_themselves(kwargs, name):
    args = dict(bound=1.0, neighbours="add-remove", domain=(0, 1), sizes=4)
    args.update(kwargs)
    bound = args.pop("bound")
    with pytest.raises(InvalidArgument, match=name):
        dpaudit.check_sensitivity(unclipped_sum, bound, **args)
    with pytest.raises(InvalidArgument, match="f must be"):
        dpaudit.check_sensitivity(3, 1.0, neighbours="add-remove", domain=(0, 1), sizes=4)


@pytest.mark.slow
def test_reproduce_snippet_imports_an_importable_function_and_reruns_standalone():
    r = dpaudit.check_sensitivity(np.sum, 1.0, neighbours="replace", domain=(0, 5), sizes=(1, 6),
                                  examples=200, seed=1)
    assert r.verdict is Verdict.REFUTED
    assert "from numpy import sum as f" in r.reproduce
    ns: dict = {}
    exec(r.reproduce.replace("print(", "_printed = ("), ns)   # no f supplied: the import gives it
    assert ns["gap"] == r.counterexample.gap and bool(ns["_printed"][3])
    lam = dpaudit.check_sensitivity(lambda x: float(np.sum(x)), 1.0, neighbours="replace",
                                    domain=(0, 5), sizes=(1, 6), examples=200, seed=1)
    assert "# f = " in lam.reproduce and "defined in" in lam.reproduce
