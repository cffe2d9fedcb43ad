"""The library sweep (dpaudit/sweep/). The grid, the records and the table need no library; the
sweeps themselves run only where OpenDP / diffprivlib are installed (dpaudit[libraries]), and
pytest reports them as skipped elsewhere, with the reason."""

from __future__ import annotations

import json

import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.sweep.grid import Value, code_of, combinations, first_line, plain
from dpaudit.sweep.result import Case, Journal, SweepResult


# -- no library needed ---------------------------------------------------------------------------

def test_combinations_start_at_the_first_candidates_and_stay_within_the_limit():
    choices = {"a": plain(1, 2, 3), "b": plain("x", "y"), "c": plain(None, 0.5)}
    every = list(combinations(choices, 100, seed=1))
    assert len(every) == 12 and len({tuple(v.code for v in c.values()) for c in every}) == 12
    assert [v.obj for v in every[0].values()] == [1, "x", None]
    some = list(combinations(choices, 5, seed=1))
    assert len(some) == 5 and [v.obj for v in some[0].values()] == [1, "x", None]
    assert some == list(combinations(choices, 5, seed=1))  # deterministic from the seed
    assert list(combinations({"a": []}, 5, seed=1)) == []


def test_code_of_writes_values_that_read_back():
    assert code_of([0.1, (1, 2), {"k": True}]) == "[0.1, (1, 2), {'k': True}]"
    assert code_of((1.0,)) == "(1.0,)"
    assert code_of(Value(object(), "dp.x()")) == "dp.x()"


def test_first_line_drops_the_backtrace_and_the_variant():
    exc = RuntimeError('\n  MakeMeasurement("no match")\n   0: frame\n   1: frame')
    assert first_line(exc) == 'RuntimeError: "no match")'


def test_the_table_and_rows_show_every_case_and_the_totals():
    ok = Case("lib.make_a", {"scale": "1.0"}, claim="MaxDivergence: map(1) = 1.0", check="privacy",
              verdict="not_refuted", bound=0.9, seconds=2.0, evidence={"bound_name": "ε_LB", "claimed": 1.0})
    bad = Case("lib.make_b", {}, verdict="skipped", reason="no candidate value for parameter f")
    res = SweepResult("lib", "1.0", 0, {}, [ok, bad], elapsed_s=3.0)
    text = res.table()
    assert "lib.make_a: NOT REFUTED (1 checked of 1, 2.0 s CPU)" in text
    assert "ε_LB = 0.9 (claimed 1)" in text and "why: no candidate value for parameter f" in text
    assert text.splitlines()[-1].startswith("total: refuted 0, error 0, inconclusive 0, not refuted 1, skipped 1")
    row = ok.row()
    assert list(row)[:6] == ["constructor", "params", "claim", "verdict", "bound", "seconds"]
    rec = res.to_record()
    assert rec["counts"]["not_refuted"] == 1 and rec["constructors"][0]["strongest"]["bound"] == 0.9
    json.dumps(rec, allow_nan=False)


def test_the_journal_keeps_each_case_as_soon_as_it_is_written(tmp_path):
    path = tmp_path / "j.jsonl"
    log = Journal(path)
    log.write(Case("a", {}, verdict="refuted", bound=2.0))
    assert Journal.load(path)[0]["verdict"] == "refuted"
    log.write(Case("b", {}))
    assert [r["constructor"] for r in Journal.load(path)] == ["a", "b"]


def test_a_bad_library_or_setting_is_one_line():
    import dpaudit

    with pytest.raises(InvalidArgument, match="library"):
        dpaudit.sweep("tensorflow-privacy")
    with pytest.raises(InvalidArgument, match="only"):
        dpaudit.sweep("opendp", only="make_laplace")


def test_the_command_line_has_the_sweep():
    from dpaudit.cli import build_parser

    args = build_parser().parse_args(["sweep", "opendp", "--only", "make_sum", "--samples", "1000"])
    assert (args.command, args.library, args.only, args.samples) == ("sweep", "opendp", ["make_sum"], 1000)


# -- OpenDP ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dp():
    import os

    os.environ.setdefault("RUST_LIB_BACKTRACE", "0")  # before any OpenDP error: Rust reads it once
    prelude = pytest.importorskip("opendp.prelude", reason="opendp is not installed (dpaudit[libraries])")
    prelude.enable_features("contrib")
    return prelude


@pytest.mark.slow
def test_the_constructors_come_from_the_library_itself(dp):
    from dpaudit.sweep.opendp import Descriptors, constructors

    names = [q for q, _ in constructors()]
    assert "opendp.measurements.make_laplace" in names and "opendp.transformations.make_sum" in names
    assert "opendp.combinators.make_basic_composition" in names
    assert all(q.rsplit(".", 1)[1].startswith("make_") for q in names) and len(names) > 80
    desc = Descriptors(dp)
    codes = {m.code for m in desc.metrics}
    assert "dp.linf_distance(T='i32')" in codes and "dp.symmetric_distance()" in codes
    assert "dp.approximate(dp.max_divergence())" in {m.code for m in desc.measures}


def test_a_privacy_reproduction_draws_as_often_as_the_sweeps_estimates_need():
    from dpaudit.sweep.drafts import DRAWS, MIN_DRAWS, draws_for

    # Laplace(1) claiming eps = 1/2: the event's p = 0.666, q = 0.275 show ln 2.42 = 0.88 > 0.5
    assert draws_for(0.666, 0.275, 0.5) == MIN_DRAWS
    # at N draws the bound at p and q moved by twice the slack must exceed eps: 10,000 is too few here
    n = draws_for(0.73, 0.27, 0.9)
    assert MIN_DRAWS < n < DRAWS and n == 80_000
    assert draws_for(0.27, 0.73, 0.9) == n  # either order
    # an excess too small to show, or estimates unknown: every draw
    assert draws_for(0.5, 0.49, 0.01) == DRAWS and draws_for(None, 0.2, 1.0) == DRAWS
    assert draws_for(0.9, 0.1, float("nan")) == DRAWS


@pytest.mark.slow
def test_a_sweep_of_right_maps_refutes_nothing(dp):
    import dpaudit

    # each check's time limit is wall time (60 s by default): on a machine running twice as many
    # workers as cores a stability check can pass it and end INCONCLUSIVE, which is not what this
    # test is about, so the limit here is ten times the default
    result = dpaudit.sweep("opendp", seed=3, only=["make_clamp", "make_count_distinct"], cases=2,
                           samples=2_000, budget=60, timeout=600.0)
    checked = [c for c in result.cases if c.verdict == "not_refuted"]
    assert len(checked) == 4 and not result.refutations, \
        [(c.constructor, c.verdict, c.check, c.reason) for c in result.cases]
    assert all(c.check == "stability" and c.bound <= 1.0 for c in checked)


@pytest.mark.slow
def test_a_wrong_stability_map_is_refuted_and_reproduced_with_opendp_alone(dp):
    from dpaudit.sweep.drafts import draft
    from dpaudit.sweep.opendp import Sweeper

    dp.enable_features("honest-but-curious")
    code = ("dp.t.make_user_transformation(dp.vector_domain(dp.atom_domain(T='i32')), "
            "dp.symmetric_distance(), dp.atom_domain(T='i32'), dp.absolute_distance(T='i32'), "
            "lambda x: len(x), lambda d: d // 2)")
    obj = eval(code, {"dp": dp})  # noqa: S307 - the test's literal
    sweeper = Sweeper(seed=0, samples=1_000, budget=40, cases=1, attempts=10, confidence=0.95,
                      timeout=600.0, only=["-"], polars=False)  # a wall-time limit with slack, as above
    case = sweeper.check(Case("user.count_halved", {}, code=code), obj)
    assert case.verdict == "refuted" and case.check == "stability"
    assert case.confirmed is True, case.details  # run in a fresh interpreter where dpaudit cannot be imported
    assert "import dpaudit" not in case.reproduction
    text = draft(case, "opendp", "0.16.0")
    assert "## Reproduction (needs only the library)" in text and "it reproduces the violation" in text


def test_approximate_zcdp_is_stated_as_approximate_dp(dp):
    from dpaudit.adapters.common import claim_for_measure, zcdp_epsilon

    eps, delta, text = claim_for_measure(dp.approximate(dp.zero_concentrated_divergence()), (0.5, 1e-7), 1e-6)
    assert eps == zcdp_epsilon(0.5, 1e-6) and delta == pytest.approx(1.1e-6) and "approximate zCDP" in text
    with pytest.raises(InvalidArgument, match="delta="):
        claim_for_measure(dp.approximate(dp.zero_concentrated_divergence()), (0.5, 1e-7), None)


def test_a_grouped_polars_release_is_read_as_released_keys(dp):
    pl = pytest.importorskip("polars", reason="polars is not installed (dpaudit[libraries])")
    from dpaudit.adapters.opendp import frame_values

    df = pl.DataFrame({"g": [0, 1], "len": [3, 4], "x": [0.5, 1.5]})
    assert frame_values(df, ("g",)) == {0: (3, 0.5), 1: (4, 1.5)}
    assert frame_values(df.head(1).select("x")) == 0.5
    assert frame_values(df.head(1)) == (0, 3, 0.5)


def test_a_metric_named_by_its_rust_path_is_read(dp):
    from dpaudit.adapters import opendp

    m = dp.m.make_noisy_max(dp.vector_domain(dp.atom_domain(T="i32"), size=3), dp.linf_distance(T="i32"),
                            dp.max_divergence(), scale=1.0)
    assert str(m.input_metric.type).startswith("opendp::metrics::LInfDistance")
    spec = opendp.target(m)
    assert spec.neighbours.value == "linf" and spec.size == 3 and spec.epsilon == m.map(1)


def test_only_takes_the_constructor_named_before_those_that_contain_the_name():
    from dpaudit.sweep.grid import selected

    quals = ["opendp.measurements.make_laplace", "opendp.measurements.make_laplace_threshold",
             "opendp.measurements.make_gaussian"]
    assert selected(quals, ["make_laplace"]) == {"opendp.measurements.make_laplace"}
    assert selected(quals, ["laplace"]) == set(quals[:2])  # no constructor is named that
    assert selected(quals, ["make_laplace", "gauss"]) == {quals[0], quals[2]}
    assert selected(quals, None) == set(quals)
    from dpaudit.errors import NothingMatched

    with pytest.raises(NothingMatched, match="--only make_laplase: .*close: make_laplace"):
        selected(quals, ["make_laplase"])  # a typo swept nothing and exited 0
