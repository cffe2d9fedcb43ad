"""Released keys: partition selection (mechanisms/partition_selection.py), the add-remove patterns
that add a record of a new key (dpaudit/neighbours), the encoding of outputs whose keys vary
(dpaudit/outputs) and the presence events (dpaudit/estimators/presence.py)."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest
from scipy import stats

from dpaudit.claims import Domain
from dpaudit.errors import MechanismError
from dpaudit.estimators.joint import mixed_families
from dpaudit.estimators.presence import Holds, Released, presence_families
from dpaudit.estimators.selection import choose_event, score_families
from dpaudit.neighbours._common import fresh_value
from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.neighbours.relations import are_neighbours
from dpaudit.outputs import REAL_MARK, OutputEncoder
from dpaudit.reference.partition_selection import (miscalibrated, release_probability, threshold,
                                                   thresholded_counts)
from dpaudit.spec import OutputKind

EPS, DELTA = 1.0, 1e-5
#: a new key's release probability under the miscalibrated threshold: ½·(2δ)^(1/10)
BAD_P = 0.5 * (2 * DELTA) ** 0.1


# --------------------------------------------------------------------------- the mechanisms

def test_the_threshold_releases_a_new_key_with_probability_delta():
    t = threshold(EPS, DELTA)
    assert t == pytest.approx(1 + math.log(1 / (2 * DELTA)))
    assert release_probability(1.0, t, EPS) == pytest.approx(DELTA, rel=1e-12)
    bad = threshold(10 * EPS, DELTA)
    assert release_probability(1.0, bad, EPS) == pytest.approx(BAD_P, rel=1e-12)
    assert 0.16 < BAD_P < 0.17
    assert thresholded_counts().threshold == t and miscalibrated().threshold == bad
    with pytest.raises(ValueError):
        threshold(1.0, 0.5)


@pytest.mark.statistical
def test_the_miscalibrated_mechanism_releases_a_new_key_at_its_rate():
    """Two-sided binomial test of the release rate of key 4 (the one record 4.5) in 20,000 calls
    against ½·(2δ)^(1/10) at α = 10⁻⁶ (fixed seed, no retry)."""
    f = miscalibrated(form="dict")
    out = f(np.array([0.0, 0.0, 9.0, 4.5]), np.random.default_rng(20261201), size=20_000)
    hits = sum(4 in o for o in out)
    assert stats.binomtest(hits, len(out), BAD_P).pvalue > 1e-6, hits


@pytest.mark.parametrize("form", ["dict", "pairs", "nan", "none"])
def test_every_form_releases_the_same_keys_on_one_seed(form):
    data = np.array([0.0, 0.0, 0.0, 9.0, 9.0, 4.5])
    base = miscalibrated(form="dict")(data, np.random.default_rng(5), size=50)
    out = miscalibrated(form=form)(data, np.random.default_rng(5), size=50)
    for d, o in zip(base, out):
        if form == "dict":
            got = o
        elif form == "pairs":
            got = dict(o)
        else:
            got = {k: v for k, v in enumerate(o) if v is not None and not (isinstance(v, float) and math.isnan(v))}
        assert got == d
        assert all(float(c).is_integer() for c in got.values())  # rounded: no float low bits


def test_a_single_call_is_a_batch_of_one():
    f = thresholded_counts(form="dict")
    data = np.array([0.0] * 15)
    assert f(data, np.random.default_rng(3)) == f(data, np.random.default_rng(3), size=1)[0]


# --------------------------------------------------------------------------- the patterns

@pytest.mark.parametrize("dom, n", [((0, 9), 10), ((0, 1), 6), ((-5, 5), 4), ((0, 100), 3),
                                    ((2, 2.5), 10)])
def test_add_remove_patterns_add_a_record_of_a_new_key(dom, n):
    pairs = structured_pairs("add-remove", dom, n, both_orders=False)
    new = [p for p in pairs if "new key" in p.label]
    assert new
    for p in new:
        small, big = sorted((p.dataset, p.neighbour), key=len)
        assert are_neighbours("add-remove", small, big, dom, n)
        z = big[-1]
        assert np.array_equal(big[:-1], small) and z not in small
        assert dom[0] <= z <= dom[1]


def test_the_new_key_is_in_an_integer_and_a_tenth_of_its_own():
    pairs = structured_pairs("add-remove", (0, 9), 10, both_orders=False)
    new = [p for p in pairs if "new key" in p.label]
    labels = " | ".join(p.label for p in new)
    for fragment in ("copies of lo and hi (n=10)", "copies of lo, the midpoint and hi (n=10)",
                     "distinct values (n=10)"):
        assert fragment in labels
    for p in new:
        small, big = sorted((p.dataset, p.neighbour), key=len)
        z = float(big[-1])
        assert math.trunc(z) not in {math.trunc(x) for x in small}
        assert round(z, 1) not in {round(float(x), 1) for x in small}
    copies = next(p for p in new if p.label.startswith("copies of lo and hi (n=10)"))
    small = min((copies.dataset, copies.neighbour), key=len)
    assert sorted(set(small.tolist())) == [0.0, 9.0] and len(small) == 9  # several copies each


def test_fresh_value_edge_cases():
    tiny = Domain(0.0, 5e-324)  # two doubles, both present: no value is new
    assert fresh_value(tiny, np.array([0.0, 5e-324])) is None
    assert fresh_value(Domain(-1e308, 1e308), np.array([0.0])) is None  # width not finite
    assert fresh_value(Domain(0.0, 9.0), np.empty(0)) == 4.5
    z = fresh_value(Domain(0.0, 1.0), np.array([0.0, 1.0]))
    assert 0 < z < 1


def test_fresh_value_and_the_fresh_pair_near_the_largest_double():
    """``--domain=0:1e308`` stopped ``dpaudit check`` with an internal OverflowError (the tenth
    keying, floor(10·x)) and numpy overflow warnings on stderr."""
    import warnings

    from dpaudit.execution.honesty import fresh_pair
    from dpaudit.neighbours.registry import relation

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = fresh_value(Domain(0.0, 1e308), np.array([0.0, 1e308]))
        assert z is not None and 0 < z < 1e308
        d, dp = fresh_pair(relation("add-remove").patterns(Domain(0.0, 1e308), 10))
        assert len(d) != len(dp)


# --------------------------------------------------------------------------- the encoding

def _encode(enc, raw, data=np.zeros(0)):
    return enc.encode(raw, data)


def test_dicts_whose_keys_vary_are_read_as_their_items():
    enc = OutputEncoder()
    empty = _encode(enc, [{}, {}])  # the first batch: an empty dataset releases no key
    assert enc.schema.kind is OutputKind.MIXED and enc.schema.keyed and enc.schema.length == 16
    assert "keys vary" in enc.schema.description
    y = _encode(enc, [{9: 3.0, 0: 5.0}, {}, {0: 4.0}, {"a": 1.5}])
    assert y.shape == (4, 18)
    assert y[0, 1] == 4 and y[0, 2:6].tolist() == [0.0, 5.0, 9.0, 3.0]  # key order, any insertion
    assert y[1, 0] == empty[0, 0] and y[1, 1] == 0
    assert enc.skeleton(y[0, 0]) == (0, REAL_MARK, 9, REAL_MARK)  # integer keys in the skeleton
    assert enc.skeleton(y[3, 0]) == ("a", REAL_MARK)  # a text key too


def test_a_first_batch_of_several_key_sets_or_a_declaration_reads_items():
    enc = OutputEncoder()
    _encode(enc, [{1: 2.0}, {1: 2.0, 3: 1.0}])
    assert enc.schema.keyed
    enc = OutputEncoder(OutputKind.MIXED)
    _encode(enc, [{1: 2.0}, {1: 3.0}])  # one key set, declared mixed
    assert enc.schema.keyed
    y = _encode(enc, [{}])
    assert y[0, 1] == 0


def test_dicts_of_fixed_keys_stay_vectors_and_a_new_key_set_names_the_way_out():
    enc = OutputEncoder()
    _encode(enc, [{"count": 1.0, "sum": 2.0}, {"sum": 3.0, "count": 2.0}])
    assert enc.schema.kind is OutputKind.VECTOR and enc.schema.names == ("count", "sum")
    with pytest.raises(MechanismError, match="declare output='mixed'"):
        _encode(enc, [{"count": 1.0}])


def test_an_output_encodes_alike_whatever_else_its_batch_holds():
    """[] in a batch of [] only and in a batch with nested outputs is one value (its encoding is
    a function of the output alone)."""
    enc = OutputEncoder()
    alone = _encode(enc, [[], []])
    mixed = _encode(enc, [[], [(0, 2.0)], [(0, 2.0), (3, 1.0)]])
    assert np.array_equal(alone[0], mixed[0], equal_nan=True)
    again = _encode(enc, [[(0, 2.0)], []])
    assert np.array_equal(again[0], mixed[1], equal_nan=True)
    assert np.array_equal(again[1], alone[0], equal_nan=True)


def test_a_pickled_encoder_keeps_its_skeleton_codes():
    """The fork pool counts events with a pickled encoder: the float marker survives pickling."""
    assert pickle.loads(pickle.dumps(REAL_MARK)) is REAL_MARK
    enc = OutputEncoder()
    rows = [None, (1, 2.5), (3, 0.5, 2.0)]
    y = _encode(enc, rows)
    copy = pickle.loads(pickle.dumps(enc))
    assert np.array_equal(_encode(copy, rows), y, equal_nan=True)
    assert len(copy._skeletons) == len(enc._skeletons)


# --------------------------------------------------------------------------- the events

def _rows(form, data, n, seed):
    f = miscalibrated(form=form)
    return f(np.asarray(data, dtype=float), np.random.default_rng(seed), size=n)


#: a few keys, each several times; D' adds one record of the new key 4 (int(4.5))
SMALL = [0.0] * 5 + [9.0] * 4
BIG = SMALL + [4.5]


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("form", ["dict", "pairs", "none"])
def test_presence_events_see_a_new_key(form):
    """The presence event of the new key holds under D at its release rate and never under D'
    (fixed seeds, no retry; the rate within 7 standard errors: α < 10⁻¹¹ per form)."""
    enc = OutputEncoder()
    _encode(enc, _rows(form, [], 8, 0))  # as an audit begins: the empty dataset
    yd = _encode(enc, _rows(form, BIG, 8000, 1), np.asarray(BIG))
    yp = _encode(enc, _rows(form, SMALL, 8000, 2), np.asarray(SMALL))
    fams = [sc for sc, *_ in presence_families(yd, yp, quick=False)]
    want = Released if form == "none" else Holds
    keys = [sc for sc in fams if isinstance(sc, want)
            and (sc.elements == (4,) if want is Released else sc.values == (4.0,))]
    assert keys, [sc.describe() for sc in fams]
    # a released count of 4.0 is an element 4 too, but not among the keys of the items
    key = min(keys, key=lambda sc: sc(yp).mean())
    pd, pp = key(yd).mean(), key(yp).mean()
    assert pp == 0.0 and abs(pd - BAD_P) < 0.03, key.describe()  # 7 standard errors
    assert any(isinstance(sc, want) for sc, *_ in mixed_families(yd, yp, quick=True))
    c = choose_event(yd, yp, enc.schema, n_val=1e5, alpha=0.05, delta=DELTA, honest=True, folds=2)
    assert c is not None and c.projected > 1.0, c.event.text()
    json.dumps(c.event.to_record())


@pytest.mark.slow
@pytest.mark.statistical
def test_released_coordinates_of_nan_vectors():
    """Fixed seeds, no retry; the rate within 7 standard errors (α < 10⁻¹¹)."""
    enc = OutputEncoder()
    yd = _encode(enc, _rows("nan", BIG, 8000, 1), np.asarray(BIG))
    yp = _encode(enc, _rows("nan", SMALL, 8000, 2), np.asarray(SMALL))
    assert enc.schema.kind is OutputKind.VECTOR
    fams = [sc for sc, *_ in score_families(yd, yp, enc.schema, quick=False)]
    rel = [sc for sc in fams if isinstance(sc, Released)]
    assert rel and rel[0].elements == (4,) and "coordinate 4 is released (not NaN)" in rel[0].describe()
    assert rel[0](yp).sum() == 0 and abs(rel[0](yd).mean() - BAD_P) < 0.03


def test_presence_scores_read_compact_rows_and_record_themselves():
    y = np.array([[0, 1, 3, 4], [0, 1, 5, 6]], dtype=np.int8)
    assert Released((2,), (0,))(y).tolist() == [1.0, 1.0]
    assert Holds((4.0,))(y).tolist() == [1.0, 0.0]
    assert Holds((4.0, 6.0)).describe() == "[the output holds an element of {4, 6}]"
    assert json.loads(json.dumps(Holds((4.5,), 2, 2, 0).to_record())) == {
        "kind": "holds", "values": [4.5], "start": 2, "stride": 2, "offset": 0}
    assert Holds((4.0,), 2, 2, 0).describe() == "[the output holds the element 4 among elements 0, 2, 4, …]"
    assert Holds((4.0,), 0, 2, 1)(y).tolist() == [1.0, 0.0]
    assert list(presence_families(np.zeros((1, 4)), np.zeros((1, 4)), quick=True)) == []
