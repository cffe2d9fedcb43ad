"""The formal claims: expected statuses, coverage of "for all k", readable and independently
checked models, no vacuous proofs, frozen results and their records."""

from __future__ import annotations

import dataclasses
import json
import re
from fractions import Fraction

import numpy as np
import pytest
import z3

import dpaudit
from dpaudit.errors import InvalidArgument
from dpaudit.formal import FormalResult, SolverConfig, Status, list_claims, verify
from dpaudit.formal.registry import get_claims
from dpaudit.results import Verdict

#: The claims that must be registered, with the status each must have.
REQUIRED = {
    "l1-helly-2d": Status.PROVED,
    "l1-3d-counterexample": Status.PROVED,
    "l1-3d-spf-undefined": Status.PROVED,
    "l2-2d-counterexample": Status.PROVED,
    "interval-helly-1d": Status.PROVED,
    "quantile-utility-change-one": Status.PROVED,
    "quantile-utility-add-remove": Status.PROVED,
    "quantile-utility-eq22-add-remove": Status.REFUTED,
    "em-range-le-2sens": Status.PROVED,
    "em-monotone-range-le-sens": Status.PROVED,
    "em-monotone-range-eq-sens": Status.REFUTED,
    "laplace-loss-bound": Status.PROVED,
}


def exact(result_or_query, name: str) -> Fraction:
    """A model value as an exact Fraction (from the exact text, not the float)."""
    return Fraction(result_or_query.model_exact[name])


@pytest.mark.slow
def test_every_claim_reports_its_expected_status(formal_results):
    differ = [(r.name, r.expected.value, r.status.value, r.decided_by, r.error)
              for r in formal_results if not r.matches_expected]
    assert not differ
    assert len(formal_results) >= 25


@pytest.mark.slow
def test_all_claims_together_within_60_seconds(formal_run):
    results, wall = formal_run
    assert wall <= 60.0, f"all claims took {wall:.1f} s"
    assert sum(r.elapsed_s for r in results) <= wall + 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("name,status", sorted(REQUIRED.items()))
def test_issue_claims_have_their_status(by_name, name, status):
    r = by_name[name]
    assert r.expected is status and r.status is status
    assert r.verdict is Verdict(status.value)


def test_every_claim_is_described():
    infos = list_claims(include_controls=True)
    assert len({i.name for i in infos}) == len(infos)
    for i in infos:
        assert i.source and len(i.statement) > 40 and i.seeds and i.spec
        assert isinstance(i.assumes_exact_reals, bool)
        assert i.expected in (Status.PROVED, Status.REFUTED)
        assert i.reproduce == f"dpaudit verify --claim {i.name}"
        assert json.dumps(i.to_record(), allow_nan=False)
    # the papers' statements that docs/math.md#errata lists as false are registered as REFUTED, and say so
    for i in infos:
        if i.expected is Status.REFUTED and i.control_of is None:
            assert "FALSE" in i.statement and re.search(r"#e\d+\b", i.source)


def _query_names(result: FormalResult) -> set[str]:
    return {q.name for q in result.queries}


@pytest.mark.slow
def test_l1_helly_2d_covers_every_k(by_name):
    r = by_name["l1-helly-2d"]
    names = _query_names(r)
    lemmas = {"rotation-l1-is-linf", "pairwise-balls-give-pairwise-intervals",
              "interval-witness-per-pair", "interval-pairwise-intersection-condition",
              "interval-argmax-base", "interval-argmax-step", "interval-witness-symbolic-k",
              "box-point-in-every-ball"}
    assert lemmas <= names
    assert {f"direct-witness-k{k}" for k in range(2, 11)} <= names
    assert {f"direct-exists-d2-k{k}" for k in range(2, 6)} <= names
    assert all(q.holds for q in r.queries)
    assert "Composing" in r.statement and "any k" in r.statement


@pytest.mark.slow
def test_interval_helly_1d_covers_every_k(by_name):
    r = by_name["interval-helly-1d"]
    names = _query_names(r)
    assert {"witness-per-pair", "argmax-base", "argmax-step", "witness-symbolic-k"} <= names
    assert {f"direct-witness-k{k}" for k in range(2, 11)} <= names
    assert all(q.holds for q in r.queries)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["em-range-le-2sens", "em-monotone-range-le-sens"])
def test_em_range_claims_cover_output_sets_of_any_size(by_name, name):
    r = by_name[name]
    assert {"per-pair", "any-output-set"} | {f"direct-k{k}" for k in range(1, 7)} <= _query_names(r)
    assert "any size" in r.statement
    sort_decl = next(q for q in r.queries if q.name == "any-output-set").smt2
    assert "(declare-sort Output" in sort_decl


@pytest.mark.slow
def test_l1_3d_counterexample_padded_up_to_d8(by_name):
    r = by_name["l1-3d-counterexample"]
    for d in range(3, 9):
        pairs = [q for q in r.queries if q.name.startswith(f"d{d}-pair-")]
        assert len(pairs) == 6 and all(q.answer == "sat" for q in pairs)
        assert next(q for q in r.queries if q.name == f"d{d}-no-common-point").answer == "unsat"


@pytest.mark.slow
def test_l1_3d_pair_witnesses_check_out_exactly(by_name):
    """Independent check of z3's witness points with exact fractions."""
    centres = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (Fraction(1, 2),) * 3]
    for q in by_name["l1-3d-counterexample"].queries:
        if q.needs != "sat":
            continue
        d = int(q.name[1])
        i, j = (int(t) - 1 for t in q.name.split("-")[2:4])
        axes = "xyz" if d <= 3 else [str(k) for k in range(d)]
        p = [Fraction(q.model_exact[f"p_{a}"]) for a in axes]
        for c in (centres[i], centres[j]):
            c = list(c) + [0] * (d - 3)
            assert sum(abs(a - b) for a, b in zip(p, c)) <= 1


@pytest.mark.slow
def test_l2_touching_points_check_out(by_name):
    centres = [(0.0, 0.0), (2.0, 0.0), (1.0, 3 ** 0.5)]
    for q in by_name["l2-2d-counterexample"].queries:
        if q.needs == "sat":
            i, j = (int(t) - 1 for t in q.name.split("-")[1:3])
            p = np.array([q.model["p_x"], q.model["p_y"]])
            for k in (i, j):
                assert np.hypot(*(p - centres[k])) <= 1 + 1e-12


@pytest.mark.slow
def test_eq22_counterexample_is_a_real_dataset(by_name):
    """Rebuild the datasets from the counterexample and recompute eq (2.2) directly."""
    r = by_name["quantile-utility-eq22-add-remove"]
    m = r.model_exact
    q = Fraction(m["q"])
    below, at, above = (int(m[k]) for k in ("n_below", "n_at", "n_above"))
    S = np.array([-1.0] * below + [0.0] * at + [1.0] * above)
    S2 = np.append(S, {0: -1.0, 1: 0.0, 2: 1.0}[int(m["added_class"])])

    def u22(data: np.ndarray, r: float = 0.0) -> Fraction:
        lt, gt = int(np.sum(data < r)), int(np.sum(data > r))
        return max(q, 1 - q) * len(data) - abs((1 - q) * lt - q * gt)

    assert 0 < q < 1
    assert abs(u22(S2) - u22(S)) > max(q, 1 - q)
    assert abs(u22(S2) - u22(S)) <= 2 * max(q, 1 - q)


@pytest.mark.slow
def test_monotone_range_counterexample_checks_out(by_name):
    r = by_name["em-monotone-range-eq-sens"]
    d = [exact(r, "u_S2_y1") - exact(r, "u_S_y1"), exact(r, "u_S2_y2") - exact(r, "u_S_y2")]
    assert min(d) >= 0  # monotone
    assert max(d) - min(d) != max(abs(x) for x in d)


@pytest.mark.slow
def test_seed_normalisation_counterexamples_check_out(by_name):
    rho = exact(by_name["geometric-s1-eq7-normalisation"], "rho")
    assert 0 < rho < 1 and ((1 + rho) / (1 - rho)) ** 2 != 1
    eps = exact(by_name["laplace-s1-eq6-normalisation"], "epsilon")
    assert eps > 0 and 1 / eps != 1


@pytest.mark.slow
def test_s0_delta_counterexample_checks_out(by_name):
    r = by_name["ss-laplace-s0-delta"]
    E, delta = exact(r, "E"), exact(r, "delta")
    p, pm, p2 = exact(r, "P_S"), exact(r, "P_mid"), exact(r, "P_S2")
    assert E > 1 and 0 < delta < 1
    assert p <= E * pm + delta / 2 and pm <= E * p2 + delta / 2
    assert p > E * E * p2 + delta


@pytest.mark.slow
def test_refuted_models_are_readable_numbers(formal_results):
    for r in formal_results:
        if r.status is Status.REFUTED:
            assert r.model and r.model_exact and set(r.model) == set(r.model_exact)
            assert all(isinstance(v, (int, float, bool)) for v in r.model.values())
        else:
            assert r.model is None


@pytest.mark.slow
def test_no_proof_is_vacuous():
    """Every unsat query's hypotheses (all assertions but the negated conclusion) are
    satisfiable, so no claim is proved from contradictory assumptions."""
    for claim in get_claims():
        for q in claim.build():
            if q.needs != "unsat" or len(q.assertions) < 2:
                continue
            s = z3.Solver()
            s.set("timeout", 10_000)
            s.add(*q.assertions[:-1])
            assert s.check() == z3.sat, (claim.name, q.name)


@pytest.mark.slow
def test_results_are_frozen_and_recorded(by_name):
    r = by_name["quantile-utility-eq22-add-remove"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.status = Status.PROVED  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.queries[0].answer = "unsat"  # type: ignore[misc]
    rec = r.to_record()
    for key in ("kind", "target", "verdict", "elapsed_s", "reproduce", "error", "source",
                "statement", "expected", "matches_expected", "model", "smt2",
                "assumes_exact_reals"):
        assert key in rec
    assert rec["kind"] == "formal" and rec["target"] == r.name and rec["verdict"] == "refuted"
    assert rec["expected"] == "refuted" and rec["matches_expected"] is True
    assert rec["reproduce"] == "dpaudit verify --claim quantile-utility-eq22-add-remove"
    assert rec["smt2"] == list(r.smt2) and rec["smt2"][0].rstrip().endswith("(check-sat)")
    json.dumps(rec, allow_nan=False)


def test_public_exports():
    assert dpaudit.verify is verify and dpaudit.FormalResult is FormalResult


@pytest.mark.slow
def test_runs_are_reproducible(by_name):
    again = verify(["quantile-utility-eq22-add-remove"])[0]
    first = by_name["quantile-utility-eq22-add-remove"]
    assert again.model_exact == first.model_exact and again.smt2 == first.smt2


def test_seed_and_limits_are_in_the_smt2():
    r = verify(["laplace-loss-bound"], seed=7, timeout=5, rlimit=10**7)[0]
    text = r.smt2[0]
    for option in ("(set-option :smt.random_seed 7)", "(set-option :sat.random_seed 7)",
                   "(set-option :rlimit 10000000)", "(set-option :timeout 5000)"):
        assert option in text
    assert r.seed == 7 and r.status is Status.PROVED


def test_inconclusive_is_never_a_pass():
    r = verify(["quantile-utility-change-one"], rlimit=2000)[0]
    assert r.status is Status.INCONCLUSIVE and not r.matches_expected
    assert r.verdict is Verdict.INCONCLUSIVE and r.to_record()["verdict"] == "inconclusive"
    q = next(q for q in r.queries if q.name == r.decided_by)
    assert q.answer == "unknown" and q.reason_unknown


@pytest.mark.parametrize("kwargs", [{"seed": -1}, {"seed": 2**40}, {"seed": 1.5},
                                    {"timeout_s": 0}, {"timeout_s": float("nan")},
                                    {"timeout_s": "3"}, {"rlimit": 0}, {"rlimit": True}])
def test_bad_settings_are_rejected(kwargs):
    with pytest.raises(InvalidArgument):
        SolverConfig(**kwargs)


def test_unknown_claim_name_lists_the_valid_ones():
    with pytest.raises(InvalidArgument, match="valid names: .*l1-helly-2d"):
        verify(["no-such-claim"])
