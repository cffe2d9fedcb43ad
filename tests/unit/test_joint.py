"""Joint events on outputs that mix discrete and real parts (dpaudit.estimators.joint)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpaudit
from dpaudit.estimators.bounds import Counts, method as bound_method
from dpaudit.estimators.joint import (Column, JointPattern, JointRatio, RealGiven, fit_structure,
                                      joint_families, mixed_families, scores_of)
from dpaudit.estimators.selection import choose_event
from dpaudit.outputs import OutputEncoder, OutputSchema
from dpaudit.spec import OutputKind


def _coded(rng, n, shift):
    """SVT3-like rows: −1000 before the answer, the value at the answer, −2000 after; values on
    the grid 2^-30·Z (a mechanism over the reals: raw doubles would be porous, a float event)."""
    idx = rng.integers(0, 3, n)
    val = np.round((rng.normal(size=n) + shift * (idx == 2)) * 2.0**30) / 2.0**30
    rows = np.full((n, 3), -1000.0)
    cols = np.arange(3)[None, :]
    rows = np.where(cols > idx[:, None], -2000.0, rows)
    rows[np.arange(n), idx] = val
    return rows


def test_structure_splits_sentinels_and_reals_and_reads_the_reals_in_order():
    y = _coded(np.random.default_rng(1), 1000, 0.0)
    s = fit_structure(y)
    assert [a.tolist() for a in s.atoms] == [[-1000.0], [-2000.0, -1000.0], [-2000.0]]
    sig = s.signature(y)
    assert ((sig == -1).sum(axis=1) == 1).all()  # exactly one real value per row
    r = s.reals(y, sig, 2)
    assert np.array_equal(r[:, 0], y[sig == -1]) and np.isnan(r[:, 1]).all()
    assert s.show(y[0], sig[0]).count("·") == 1


def test_a_shift_in_one_pattern_is_found_as_a_pattern_times_value_event():
    rng = np.random.default_rng(7)
    yd, yp = _coded(rng, 20_000, 1.0), _coded(rng, 20_000, 0.0)
    fams = list(joint_families(yd, yp, quick=False, vector=True))
    kinds = {type(f[0]) for f in fams}
    assert JointRatio in kinds and RealGiven in kinds and JointPattern not in kinds  # vectors score patterns already
    c = choose_event(yd, yp, OutputSchema(OutputKind.VECTOR, length=3),
                     n_val=1e5, alpha=0.05, honest=True, folds=2)
    assert isinstance(c.event.score, (RealGiven, JointRatio)) and c.projected > 0.3, c.event.text()
    rec = c.event.to_record()
    json.dumps(rec)
    assert rec["kind"] == "score" and ("·" in rec["text"])


def test_mixed_rows_get_joint_length_and_position_families():
    rng = np.random.default_rng(3)
    enc = OutputEncoder()
    d = [list(np.flatnonzero(r)) for r in rng.random((4000, 6)) < 0.3]
    p = [list(np.flatnonzero(r)) for r in rng.random((4000, 6)) < 0.5]
    yd, yp = enc.encode(d, None), enc.encode(p, None)
    assert enc.schema.kind is OutputKind.MIXED
    names = [getattr(sc, "name", type(sc).__name__) for sc, *_ in mixed_families(yd, yp, quick=False)]
    assert "length" in names and "JointPattern" in names and any(n.startswith("element") for n in names)
    c = choose_event(yd, yp, enc.schema, n_val=1e5, alpha=0.05, honest=True, folds=2)
    assert c.projected > 0.5


@pytest.mark.slow
@pytest.mark.statistical
def test_no_leak_no_bound_on_fresh_samples():
    """Size: D and D' with one law; the event is chosen on one sample and counted on another.
    α = 0.05, seed fixed: the bound stays ≤ 0 (it exceeds 0 with probability ≤ α)."""
    rng = np.random.default_rng(11)
    enc = OutputEncoder()

    def draw(n):
        has = rng.random(n) < 0.7
        return [(int(i), float(v)) if h else None
                for h, i, v in zip(has, rng.integers(0, 4, n), rng.laplace(size=n))]

    yd, yp = enc.encode(draw(10_000), None), enc.encode(draw(10_000), None)
    c = choose_event(yd, yp, enc.schema, n_val=30_000, alpha=0.05, honest=True, folds=2)
    vd, vp = enc.encode(draw(30_000), None), enc.encode(draw(30_000), None)
    num, den = (vd, vp) if c.numerator == 0 else (vp, vd)
    x, y = int(c.event.contains(num).sum()), int(c.event.contains(den).sum())
    b = bound_method("marginal").validated(Counts(30_000, 30_000, x, y), 0.05, (0.5, 0.5))
    assert b.epsilon_lb <= 0.0


def test_column_scores_read_one_column():
    y = np.array([[0.0, 2.0, 5.0, 1.5], [1.0, 0.0, np.nan, np.nan]])
    assert Column(1, "length")(y).tolist() == [2.0, 0.0]
    assert Column(1, "length").describe() == "length"


@pytest.mark.slow
def test_audit_of_an_index_value_or_none_mechanism_runs_end_to_end():
    def svt(data, rng, size=None):
        n = 1 if size is None else size
        rho = rng.laplace(scale=2.0, size=(n, 1))
        m = data + rng.laplace(scale=2.0, size=(n, data.size))
        above = m >= rho + 1.0
        idx = np.argmax(above, axis=1)
        out = [(int(i), float(m[k, i])) if above[k].any() else None for k, i in enumerate(idx)]
        return out if size is not None else out[0]

    r = dpaudit.audit(svt, epsilon=0.1, neighbours="linf", domain=(0, 1), size=3, samples=40_000,
                      confidence=0.9, seed=5, early_stop=False)
    assert r.error is None and r.verdict.value == "refuted"
    assert "varying length" in r.details["output_kind"]
    assert "non-finite" not in r.counterexample.event["text"]  # NaN there marks absent elements


def _mixed_rows(rng, n, p):
    enc = OutputEncoder()
    rows = [None if r.sum() == 0 else (int(np.argmax(r)), float(rng.normal()))
            for r in rng.random((n, 4)) < p]
    return enc.encode(rows, None)


def test_families_score_each_row_as_the_scores_themselves_do():
    """The families' values come from one signature of all the rows, shared by the joint scores:
    they equal each score applied to the rows (evaluation half for the ratios, all rows for the
    RealGiven scores), for vectors and for MIXED rows."""
    rng = np.random.default_rng(11)
    cases = [(_coded(rng, 6000, 1.0), _coded(rng, 6000, 0.0), dict(vector=True)),
             (_mixed_rows(rng, 6000, 0.3), _mixed_rows(rng, 6000, 0.4), dict(forced=2))]
    for yd, yp, kw in cases:
        half = yd.shape[0] // 2
        fams = list(joint_families(yd, yp, quick=False, **kw))
        assert any(isinstance(f[0], RealGiven) for f in fams)
        assert any(isinstance(f[0], JointRatio) for f in fams)
        for sc, sd, sp, _ in fams:
            rows_d, rows_p = (yd, yp) if isinstance(sc, RealGiven) else (yd[half:], yp[half:])
            np.testing.assert_array_equal(sd, sc(rows_d))
            np.testing.assert_array_equal(sp, sc(rows_p))
        scores = [f[0] for f in fams] + [Column(1, "length")]
        got = dict(scores_of(scores, yd))
        assert sorted(got) == list(range(len(scores)))
        for i, sc in enumerate(scores):
            np.testing.assert_array_equal(got[i], sc(yd))


def test_signature_of_few_atoms_equals_the_column_by_column_signature():
    """The blocked int8 signature (every column with at most 4 atoms) gives the numbers of the
    column-by-column definition: atom index, −1 for a real value, −2 for NaN."""
    rng = np.random.default_rng(4)
    y = _coded(rng, 20_000, 0.5)
    y[rng.random(y.shape) < 0.01] = np.nan
    s = fit_structure(y[:5000])
    got = s.signature(y)
    want = np.full(y.shape, -1.0)
    for j, at in enumerate(s.atoms):
        for i, a in enumerate(at):
            want[:, j] = np.where(y[:, j] == a, float(i), want[:, j])
    want = np.where(np.isnan(y), -2.0, want)
    assert all(a.size <= 4 for a in s.atoms) and got.dtype == np.int8
    np.testing.assert_array_equal(got.astype(float), want)


def test_patterns_fitted_on_integer_keys_equal_the_row_sort():
    """Patterns told apart as mixed-radix integers and the fitting rows never stacked: the same
    patterns, in the same order, with the same rows, counts and real slots as sorting the
    stacked signatures as float rows (coded vectors; MIXED rows take the row sort itself)."""
    from dpaudit.estimators.scores import row_bytes
    from dpaudit.estimators.structure import fit_pattern_counts

    rng = np.random.default_rng(9)
    cases = [(_coded(rng, 4000, 1.0), _coded(rng, 4000, 0.0), 0),
             (_mixed_rows(rng, 4000, 0.3), _mixed_rows(rng, 4000, 0.4), 2)]
    for fit_d, fit_p, forced in cases:
        both = np.concatenate([fit_d, fit_p])
        structure = fit_structure(both, forced)
        got = fit_pattern_counts(fit_d, fit_p, structure)
        sig = structure.signature(both).astype(float)
        keys, first, inv = np.unique(row_bytes(sig), return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        assert keys.size > 2 and np.array_equal(got.keys, keys)
        np.testing.assert_array_equal(got.rows, both[first])
        np.testing.assert_array_equal(got.sigs, sig[first])
        np.testing.assert_array_equal(got.cd, np.bincount(inv[:4000], minlength=keys.size))
        np.testing.assert_array_equal(got.cp, np.bincount(inv[4000:], minlength=keys.size))
        np.testing.assert_array_equal(got.nreal, (sig[first] == -1).sum(axis=1))


def test_mixed_rows_compacted_to_integers_with_no_absent_element_are_scored():
    # a sample where every output has every position (all six indices above a threshold) holds
    # no NaN, so compaction stores it as integers; the fill of absent elements must still work
    from dpaudit.estimators.compact import compact

    enc = OutputEncoder(OutputKind.MIXED)
    yd = compact(enc.encode([tuple(range(6))] * 200, None))
    yp = compact(enc.encode([tuple(range(6))] * 150 + [(0, 1)] * 50, None))
    assert yd.dtype.kind in "iu"
    names = [getattr(sc, "name", type(sc).__name__) for sc, *_ in mixed_families(yd, yp, quick=True)]
    assert "length" in names


def test_member_counts_read_a_tuple_of_indices_as_its_set():
    from dpaudit.estimators.joint import member_counts, member_values

    enc = OutputEncoder()
    outs = [(0, 3), (), (1, 2, 3, 5), None, (5,), (2, 2)]
    y = enc.encode(outs, None)
    assert enc.schema.kind is OutputKind.MIXED
    assert member_values(y, y) == (0, 6)
    want = np.zeros((len(outs), 6), np.int8)
    for i, o in enumerate(outs):
        for v in o or ():
            want[i, v] += 1
    np.testing.assert_array_equal(member_counts(y, 0, 6), want)
    # reals, or values spread over more than 64 integers, are not read as members
    reals = OutputEncoder().encode([(0, 0.5), (1,)], None)
    assert member_values(reals, reals) is None
    wide = OutputEncoder().encode([(0, 100), (1,)], None)
    assert member_values(wide, wide) is None


def test_membership_scores_see_which_indices_an_svt_answered():
    # D's rows hold each of 8 indices with probability 0.45, D''s with 0.5 on the first four and
    # 0.4 on the rest (a weak per-index effect the positions of a sorted tuple blur): the
    # membership families fit weights of opposite signs on the two blocks, and score a row as its
    # bit vector does (the same rows given as tuples and as bits get one score); labels: 1 for D
    from dpaudit.estimators.joint import Members, member_counts

    rng = np.random.default_rng(7)
    bd = rng.random((6000, 8)) < 0.45
    bp = rng.random((6000, 8)) < np.r_[np.full(4, 0.5), np.full(4, 0.4)]
    enc = OutputEncoder()
    yd = enc.encode([tuple(np.flatnonzero(r).tolist()) for r in bd], None)
    yp = enc.encode([tuple(np.flatnonzero(r).tolist()) for r in bp], None)
    fams = [f for f in mixed_families(yd, yp, quick=False) if isinstance(f[0], Members)]
    assert len(fams) == 2
    logistic = next(sc for sc, *_ in fams if sc.to_record()["kind"] == "logistic")
    assert "which values the output holds" in logistic.describe()
    np.testing.assert_array_equal(member_counts(yd, 0, 8), bd.astype(np.int8))
    np.testing.assert_allclose(logistic(yd[:50]), logistic.inner(bd[:50].astype(np.int8)), atol=1e-12)
    assert logistic.to_record()["members_of"] == [0, 7]
    more_d, more_p = enc.encode([(4, 5, 6, 7), (0, 1, 2, 3)], None)
    for sc, *_ in fams:
        assert sc(more_d[None])[0] > sc(more_p[None])[0]
