"""Output-kind detection, validation and encoding (dpaudit/outputs/)."""

import math

import numpy as np
import pytest

from dpaudit.errors import MechanismError
from dpaudit.outputs import REAL_MARK as REAL, OutputEncoder
from dpaudit.spec import OutputKind

DATA = np.array([0.25, 1.0])


def encode(raw, enc=None, data=DATA):
    enc = enc or OutputEncoder()
    return enc.encode(raw, data), enc


@pytest.mark.parametrize("raw, kind, ordered", [
    ([1.5, -2.0, 3.25], OutputKind.REAL, True),
    ([1, 2.5], OutputKind.REAL, True),
    ([1, 2, 3], OutputKind.DISCRETE, True),
    (np.array([4, 5]), OutputKind.DISCRETE, True),
    ([True, False], OutputKind.BOOL, False),
    (np.array([True, False]), OutputKind.BOOL, False),
    ([None, None], OutputKind.NONE, False),
    (["a", "b", "a"], OutputKind.DISCRETE, False),
    ([3, None], OutputKind.DISCRETE, False),
    ([(1, 2), (3.5, 4)], OutputKind.VECTOR, True),
    (np.ones((3, 4)), OutputKind.VECTOR, True),
])
def test_kind_detected(raw, kind, ordered):
    _, enc = encode(raw)
    assert enc.schema.kind is kind
    assert enc.schema.ordered is ordered


def test_reals_and_integers_are_encoded_as_values():
    y, _ = encode([1.0, 2.5, -3.0])
    assert y.tolist() == [1.0, 2.5, -3.0]
    y, _ = encode([1, 2, -3])
    assert y.tolist() == [1.0, 2.0, -3.0]


def test_an_output_of_another_type_is_another_output():
    """The type is released with the value: 3 and 3.0 are two outputs (a mechanism returned 3 on
    D and 3.0 on D′). Numbers of another form than the first batch's most common one are one
    atom, NaN, the others keep their values; categories and skeletons keep their form apart."""
    y, enc = encode([1, 2.5, -3])
    assert y.tolist()[0::2] == [1.0, -3.0] and math.isnan(y[1])
    y, _ = encode([3.0, np.float64(3.0)], enc)
    assert math.isnan(y[0]) and math.isnan(y[1])
    y, enc = encode(["a", 3, np.int64(3), 3])  # as categories, 3 and numpy's 3 were one atom
    assert y.tolist() == [0.0, 1.0, 2.0, 1.0]
    assert repr(enc.atom(2)) == "3 as numpy.int64"


def test_categories_get_codes_in_order_of_first_appearance_and_decode():
    y, enc = encode(["b", "a", "b", ("t", 1)])
    assert y.tolist() == [0.0, 1.0, 0.0, 2.0]
    assert [enc.atom(c) for c in (0, 1, 2)] == ["b", "a", ("t", 1)]
    y2, _ = encode(["a", "c"], enc)
    assert y2.tolist() == [1.0, 3.0]


def test_none_widens_to_categories_keeping_its_code():
    y, enc = encode([None, None])
    assert y.tolist() == [0.0, 0.0]
    y2, _ = encode([3, None], enc)
    assert enc.schema.kind is OutputKind.DISCRETE and not enc.schema.ordered
    assert y2.tolist() == [1.0, 0.0]
    assert enc.atom(1) == 3 and enc.atom(0) is None


def test_integers_then_floats_stay_numeric():
    _, enc = encode([1, 2])
    y, _ = encode([0.5], enc)
    assert enc.schema.kind is OutputKind.REAL and math.isnan(y[0])  # a float after ints: another form
    _, enc = encode([1, 2], OutputEncoder(forms=False))
    y, _ = encode([0.5], enc)
    assert enc.schema.kind is OutputKind.REAL and y.tolist() == [0.5]


@pytest.mark.parametrize("raw, fragment", [
    ([{"a": [1, bytearray(b"x")]}], "unhashable tuple"),
    ([[1, bytearray(b"x")]], "unhashable list"),
    ([True, 2], "changed output type"),
    ([1.5, "x"], "changed output type"),
    ([(1, 2), 3.0], "changed output type"),
    (np.ones(()), "shape"),
    ([[1, 2**60]], "beyond ±2**53"),
    (np.array([[1, -2**60]]), "beyond ±2**53"),
])
def test_bad_outputs_name_the_output_and_the_dataset(raw, fragment):
    with pytest.raises(MechanismError) as err:
        encode(raw)
    assert fragment in str(err.value)
    assert "on dataset [0.25, 1.0]" in str(err.value)
    assert np.array_equal(err.value.dataset, DATA)


@pytest.mark.parametrize("raw", [[1.0, math.nan], [math.inf], np.array([1.0, -np.inf]),
                                 [(1.0, math.nan)]])
def test_non_finite_outputs_are_outputs(raw):
    y, enc = encode(raw)
    assert y.shape[0] == len(raw) and enc.schema.ordered
    # numbers: encoded as themselves, NaN and ±inf included (NaN beside None: the test below)
    expected = np.asarray([np.asarray(v, dtype=float) for v in raw], dtype=float)
    assert np.array_equal(y, expected, equal_nan=True)


def test_integers_float64_cannot_hold_are_exact_categories():
    """2**60 and 2**60 + 1 are one double: as numbers they would be one output."""
    big = [2**60, 2**60 + 1, 3, 2**60]
    y, enc = encode(big)
    assert enc.schema.kind is OutputKind.DISCRETE and not enc.schema.ordered
    assert y.tolist() == [0.0, 1.0, 2.0, 0.0] and [enc.atom(c) for c in y] == big
    y, enc = encode(np.array(big, dtype=np.int64))
    assert not enc.schema.ordered and y.tolist() == [0.0, 1.0, 2.0, 0.0]
    _, enc = encode([1, 2])  # small integers first: the big one later is an error that says why
    with pytest.raises(MechanismError, match=r"beyond ±2\*\*53, after smaller integers"):
        encode([2**60], enc)


def test_arrays_of_any_shape_are_their_flattened_vectors():
    m = np.arange(6.0).reshape(2, 3)
    y, enc = encode([m, 2 * m])  # one matrix per call
    assert enc.schema.kind is OutputKind.VECTOR and enc.schema.length == 6
    assert np.array_equal(y, np.stack([m.reshape(-1), 2 * m.reshape(-1)]))
    y, enc = encode(np.stack([m, 2 * m]))  # a batch of matrices
    assert enc.schema.length == 6 and np.array_equal(y[1], 2 * m.reshape(-1))


def test_change_between_batches_is_an_error():
    _, enc = encode([1.0, 2.0])
    with pytest.raises(MechanismError, match="changed output type.*after real scalar"):
        encode(["a"], enc)
    _, enc = encode([(1.0, 2.0)])
    with pytest.raises(MechanismError, match="of length 3 after vectors of length 2"):
        encode([(1.0, 2.0, 3.0)], enc)


def test_varying_lengths_and_none_are_mixed_and_encode_alike_as_tuple_or_list():
    y, enc = encode([(1, 0.5), None, (3, 2.5), (1, 0.5)])
    # lengths that vary (None among them): every column a later, longer output may need
    assert enc.schema.kind is OutputKind.MIXED and enc.schema.length == 16
    assert np.array_equal(y[:, :4], [[0, 2, 1, 0.5], [1, 0, np.nan, np.nan], [2, 2, 3, 2.5],
                                     [0, 2, 1, 0.5]], equal_nan=True)
    assert enc.skeleton(0) == (1, enc.skeleton(0)[1]) and repr(enc.skeleton(0)[1]) == "·"
    assert enc.skeleton(1) is None
    y_list, _ = encode([[1, 0.5], [], [3, 2.5], np.array([1, 0.5])])
    assert np.array_equal(y_list[:3], y[:3], equal_nan=True)
    lists, enc2 = encode([[2, 5], [7], [], [2, 5]])
    assert lists[:, 0].tolist() == [0, 1, 2, 0] and lists[:, 1].tolist() == [2, 1, 0, 2]
    assert enc2.skeleton(0) == (2, 5)
    more, _ = encode([list(range(70)), None], enc2)  # longer than the columns: the skeleton keeps all
    assert more.shape == (2, 18) and more[0, 1] == 70 and more[0, 0] == 3


def test_declared_mixed_and_a_later_length_change_names_the_declaration():
    y, enc = encode([(1.0, 2.0)], OutputEncoder(OutputKind.MIXED))
    assert enc.schema.kind is OutputKind.MIXED and y.shape == (1, 6)
    _, enc = encode([(1.0, 2.0)])
    with pytest.raises(MechanismError, match="returned None after vectors of length 2.*output='mixed'"):
        encode([None], enc)


def test_declared_kind_is_respected():
    y, enc = encode([0.5, 0.5, 1.5], OutputEncoder(OutputKind.DISCRETE))
    assert enc.schema.kind is OutputKind.DISCRETE and not enc.schema.ordered
    assert y.tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(MechanismError, match="not the declared"):
        encode(["a"], OutputEncoder(OutputKind.REAL))


def test_empty_batch():
    y, enc = encode([])
    assert y.size == 0


def test_dicts_are_tuples_of_their_values_in_sorted_key_order():
    y, enc = encode([{"count": 3.5, "flag": True}, {"count": 1.0, "flag": False}])
    assert y.tolist() == [[3.5, 1.0], [1.0, 0.0]]
    other, _ = encode([{"flag": False, "count": 1.0}], enc)  # the key order is released too
    assert np.isnan(other).all()
    assert enc.schema.kind is OutputKind.VECTOR and enc.schema.names == ("count", "flag")
    assert "keys 'count', 'flag'" in enc.schema.description
    with pytest.raises(MechanismError, match=r"keys \('count'\) after dicts with keys \('count', 'flag'\)"):
        encode([{"count": 2.0}], enc)
    with pytest.raises(MechanismError, match="after dict outputs"):
        encode([2.0], enc)
    y, enc = encode([{"a": "x", "b": 1}, {"b": 1, "a": "y"}, {"a": "x", "b": 1}])  # a text too
    assert enc.schema.kind is OutputKind.MIXED and y[:, 0].tolist() == [0.0, 1.0, 0.0]
    assert enc.skeleton(1.0) == ("y", 1)
    y, enc = encode([{"a": b"x"}, {"a": b"y"}])  # bytes: categories
    assert enc.schema.kind is OutputKind.DISCRETE and enc.atom(1) == (b"y",)


def test_events_name_the_coordinates_of_dict_outputs_by_key():
    from dpaudit.estimators.selection import score_families
    from dpaudit.outputs import OutputSchema

    rng = np.random.default_rng(4)
    yd = np.c_[rng.laplace(size=2000), rng.integers(0, 2, 2000)]
    yp = np.c_[1.0 + rng.laplace(size=2000), rng.integers(0, 2, 2000)]
    schema = OutputSchema(OutputKind.VECTOR, length=2, names=("count", "flag"))
    texts = [sc.describe() for sc, *_ in score_families(yd, yp, schema, quick=False)]
    assert "output['count']" in texts and "output['flag']" in texts
    floats = [sc for sc, *_ in score_families(yd, yp, schema, quick=False)
              if type(sc).__name__ == "FloatCellRatio"]
    assert floats and all(sc.text(sc.inner.atoms[:1]).startswith("coordinate 'count': ") for sc in floats)


def test_a_number_or_none_is_mixed_and_encodes_as_its_one_tuple():
    y, enc = encode([None, 1.5, 2.0, None])
    assert enc.schema.kind is OutputKind.MIXED
    y2, _ = encode([None, (1.5,), (2.0,), None])
    assert np.array_equal(y[:, 1:], y2[:, 1:], equal_nan=True)  # the same lengths and values...
    y3, _ = encode([None, (1.5,), [2.0], None])  # ... but a tuple, a list and a number are apart
    assert y3[1, 0] != y3[2, 0] and y2[1, 0] == y2[2, 0]
    later, _ = encode(np.array([4.5]), enc)  # a batch of numbers alone, after the first: its
    first, _ = encode([None, (4.5,)])  # values alike, its numpy float64 another form than float
    assert np.array_equal(later[:, 1:], first[1:, 1:], equal_nan=True) and later[0, 0] != y[1, 0]
    _, enc = encode([None, 3, 4])  # integers or None stay categories
    assert enc.schema.kind is OutputKind.DISCRETE and not enc.schema.ordered
    y, _ = encode([None, math.nan, float("nan")])  # NaN is a value, None is no answer
    assert np.array_equal(y[1], y[2], equal_nan=True) and not np.array_equal(y[0], y[1], equal_nan=True)


def test_complex_numbers_are_their_real_and_imaginary_parts():
    y, enc = encode([1 + 2j, 3 - 1j])
    assert enc.schema.kind is OutputKind.VECTOR and enc.schema.length == 2
    assert y.tolist() == [[1.0, 2.0], [3.0, -1.0]]
    batch, _ = encode(np.array([1 + 2j, 3 - 1j]))  # a batch array encodes alike, on its own
    assert np.array_equal(batch, y)
    vec, enc = encode([np.array([1 + 2j, 2j])])  # a complex vector: parts interleaved
    assert vec.tolist() == [[1.0, 2.0, 0.0, 2.0]]
    assert np.array_equal(encode(np.array([[1 + 2j, 2j]]))[0], vec)
    mixed, _ = encode([(1 + 2j, 3.0)])  # complex elements among reals, each as its two parts
    assert mixed.tolist() == [[1.0, 2.0, 3.0]]
    _, enc = encode([1 + 0j])
    with pytest.raises(MechanismError, match="length"):  # a later triple is a length change
        encode([(1.0, 2.0, 3.0)], enc)


def test_minus_zero_is_a_category_of_its_own():
    # −0.0 == 0.0, so a dict would give both one code; the sign bit is part of the output
    y, enc = encode([0.0, -0.0, 0.0, -0.0, 1.5], OutputEncoder(OutputKind.DISCRETE))
    assert y.tolist() == [0.0, 1.0, 0.0, 1.0, 2.0]
    assert math.copysign(1.0, enc.atom(1.0)) < 0.0
    a, b = b"a", b"b"  # bytes: neither numbers nor texts
    y, enc = encode([(a, 0.0), (a, -0.0), (a, 0.0), (b, 0)])  # categories
    assert y.tolist() == [0.0, 1.0, 0.0, 2.0]
    assert enc.atom(1.0) == (a, -0.0) and math.copysign(1.0, enc.atom(1.0)[1]) < 0.0


def test_text_that_spells_numbers_is_audited_as_those_numbers():
    """Each text as its number and the spelling that writes it back (``#``: Python's own; a
    number spelled otherwise than any format writes its value stays text): "1.50" and "1.5", or
    "05" and "5", are one value but not one text."""
    y, enc = encode(["1.500", "-0.25", "nan", "1e3"])
    assert enc.schema.kind is OutputKind.MIXED and enc.schema.text == "number"
    assert [enc.skeleton(r[0]) for r in y] == [("#.3f", REAL), ("#", REAL), ("nan",), ("1e3",)]
    assert y[:2, 3].tolist() == [1.5, -0.25]
    y, enc = encode(["05", "5", "1.50", "1.5", "+1", "1", "-0.0", "0.0", "\u0663", "3"])
    spelled = [(enc.skeleton(r[0]), r[3]) for r in y]
    assert len(set(map(repr, spelled))) == len(spelled), spelled  # ten texts, ten audited values
    assert "read from text that spells numbers" in enc.schema.description
    with pytest.raises(MechanismError, match="'N/A' after text outputs that all spelled numbers.*"
                                             "output='discrete'"):
        encode(["N/A"], enc)
    y, enc = encode(["1", "0", "1"], OutputEncoder(OutputKind.DISCRETE))  # declared: categories
    assert not enc.schema.ordered and enc.atom(y[1]) == "0"
    y, enc = encode(["yes", "no", "1"])  # texts that are not all numbers stay categories
    assert not enc.schema.ordered and enc.atom(y[2]) == "1"


def test_json_text_is_audited_as_its_template_and_numbers():
    """JSON text as its template and numbers, not as what ``json.loads`` gives: the key order,
    whitespace, a repeated key and 1 against 1.0 were each lost in parsing, and a hostile review
    hid the exact sum in each (NOT REFUTED)."""
    y, enc = encode(['{"b": 2.5, "a": 1}', '{"a": 3, "b": -1.0}'])
    assert enc.schema.kind is OutputKind.MIXED and enc.schema.text == "json"
    assert [enc.skeleton(r[0]) for r in y] == [('{"b": #, "a": #d}', REAL, REAL),
                                               ('{"a": #d, "b": #}', REAL, REAL)]
    assert y[:, 3:5].tolist() == [[2.5, 1.0], [3.0, -1.0]]
    texts = ['{"a": 1, "b": 1.0}', '{"b": 1.0, "a": 1}', '{"a":1,"b":1.0}', '{"a": 1.0, "b": 1.0}',
             '{"a": 1, "a": 1, "b": 1.0}', '{"a": 1, "b": 1e0}']
    y, enc = encode(texts)
    assert len({enc.skeleton(r[0]) for r in y}) == len(texts)  # six texts, six templates
    with pytest.raises(MechanismError, match="JSON"):
        encode(["{not json"], enc)


def test_decimals_are_real_numbers():
    from decimal import Decimal

    # as the template and value of its text: Decimal("1.0") and Decimal("1.00") are one value
    y, enc = encode([Decimal("1.25"), Decimal("-3"), Decimal("sNaN"), Decimal("1.0"), Decimal("1.00")])
    assert enc.schema.kind is OutputKind.MIXED
    assert [enc.skeleton(r[0]) for r in y] == [("#", REAL), ("#d", REAL), ("sNaN",), ("#", REAL),
                                               ("#.2f", REAL)]
    assert y[[0, 1, 3, 4], 3].tolist() == [1.25, -3.0, 1.0, 1.0]


def test_sets_are_their_sorted_tuples():
    y, enc = encode([{2, 0}, frozenset(), {1}])
    assert enc.schema.kind is OutputKind.MIXED
    y2, _ = encode([(0, 2), (), (1,)])
    assert np.array_equal(y, y2, equal_nan=True)
    _, enc = encode([{"b", "a"}])  # texts: in the skeleton
    assert enc.skeleton(0.0) == ("a", "b")


def test_numbers_labelled_with_text_or_none_are_mixed_with_the_labels_in_the_skeleton():
    y, enc = encode([("sum", 2.5), ("sum", -1.0), ("max", 3.0), (None, 1.0)])
    assert enc.schema.kind is OutputKind.MIXED
    assert [enc.skeleton(c) for c in y[:, 0]][::3] == [("sum", REAL), (None, REAL)]
    assert np.array_equal(y[:, 2:4], [[np.nan, 2.5], [np.nan, -1.0], [np.nan, 3.0],
                                      [np.nan, 1.0]], equal_nan=True)
    y, enc = encode([{"stat": "sum", "value": 2.5}])  # a dict of a label and a number alike
    assert enc.schema.kind is OutputKind.MIXED and enc.skeleton(y[0, 0]) == ("sum", REAL)


def test_empty_sequences_are_a_length_not_a_vector_of_none():
    y, enc = encode([(), ()])
    assert enc.schema.kind is OutputKind.MIXED and y[:, 1].tolist() == [0.0, 0.0]
    later, _ = encode([(3,)], enc)
    assert later[0, 1] == 1.0 and later[0, 2] == 3.0
    _, enc = encode(np.empty((4, 0)))
    assert enc.schema.kind is OutputKind.MIXED


def test_nested_outputs_are_the_tuples_of_their_leaves():
    want, _ = encode([(1.5, 2.0, 3.0, 4.0)])
    for raw in ([[[1.5, 2.0], [3.0, 4.0]]], [[np.array([1.5, 2.0]), np.array([3.0, 4.0])]],
                [(1.5, np.array([2.0, 3.0, 4.0]))], [{"b": [3.0, 4.0], "a": (1.5, 2.0)}]):
        y, enc = encode(raw)
        assert enc.schema.kind is OutputKind.VECTOR and np.array_equal(y, want), raw
    # outputs of several shapes in the first batch: each output's shape leads as a text, so where
    # the boundaries fall is told apart
    y, enc = encode([[[1], [2, 3]], [[1, 2], [3]]])
    assert enc.schema.kind is OutputKind.MIXED and y[0, 0] != y[1, 0]
    assert np.array_equal(y[0, 3:6], y[1, 3:6])
    y, enc = encode([{"a": {2, 1}, "b": [0.5]}])  # a set inside: its sorted elements
    assert y.tolist() == [[1.0, 2.0, 0.5]]


def test_a_tuple_holding_an_array_is_not_compared_to_zero_as_a_whole():
    y, enc = encode([(0.0, np.array([1.0, 2.0]))])
    assert y.tolist() == [[0.0, 1.0, 2.0]]


def test_times_and_durations_are_seconds():
    import datetime as dt

    t0 = dt.datetime(1970, 1, 1)
    y, enc = encode([t0 + dt.timedelta(seconds=1.5), t0 + dt.timedelta(days=1)])
    assert enc.schema.kind is OutputKind.REAL and y.tolist() == [1.5, 86400.0]
    assert encode([dt.datetime(1970, 1, 1, 1, tzinfo=dt.timezone.utc)])[0].tolist() == [3600.0]
    utc1 = dt.timezone(dt.timedelta(hours=1))  # its seconds would drop the offset: refused
    with pytest.raises(MechanismError, match="time zone"):
        encode([dt.datetime(1970, 1, 1, 1, tzinfo=utc1)])
    assert encode([dt.timedelta(minutes=2)])[0].tolist() == [120.0]
    assert encode([dt.date(1970, 1, 2)])[0].tolist() == [float(dt.date(1970, 1, 2).toordinal())]
    y, _ = encode(np.array(["1970-01-01T00:00:02", "NaT"], dtype="datetime64[s]"))
    assert np.array_equal(y, [2.0, np.nan], equal_nan=True)
    y, _ = encode([(np.timedelta64(3, "s"), 1.0)])
    assert y.tolist() == [[3.0, 1.0]]


class Table:
    """Anything with ``to_numpy`` (a pandas or polars Series or DataFrame), without pandas."""

    def __init__(self, values):
        self.values = values

    def to_numpy(self):
        return np.asarray(self.values)


def test_series_and_frames_are_their_values(monkeypatch):
    # only a library's tables are read with to_numpy (a class of the audited code could hide part
    # of its release behind it: an error, below); the stand-in is taken for a library's here
    with pytest.raises(MechanismError, match="Table object, not a plain value"):
        encode([Table([1.0, 2.0])])
    import dpaudit.output_values as ov

    monkeypatch.setattr(ov, "ARRAY_LIBRARIES", ov.ARRAY_LIBRARIES | {Table.__module__.split(".")[0]})
    y, enc = encode([Table([1.0, 2.0, 3.0]), Table([4.0, 5.0, 6.0])])
    assert enc.schema.kind is OutputKind.VECTOR and y.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    y, _ = encode([Table([[1.0, 2.0], [3.0, 4.0]])])  # a frame: flattened, C order
    assert y.tolist() == [[1.0, 2.0, 3.0, 4.0]]
    y, enc = encode(Table([0.5, 1.5]))  # a batch as one Series: one output a row
    assert enc.schema.kind is OutputKind.REAL and y.tolist() == [0.5, 1.5]
    y, enc = encode(Table([[0.5, 1.0], [1.5, 2.0]]))  # a batch as one frame
    assert enc.schema.kind is OutputKind.VECTOR and y.tolist() == [[0.5, 1.0], [1.5, 2.0]]
    y, enc = encode([Table(np.array(["a", 1.5], dtype=object))])  # objects: a labelled tuple
    assert enc.schema.kind is OutputKind.MIXED and enc.skeleton(y[0, 0]) == ("a", REAL)


def test_texts_with_numbers_inside_are_read_as_templates_and_numbers():
    texts = [f"answer={i / 7:.3f} (n={i})" for i in range(30)] + ["no answer"] * 10
    y, enc = encode(texts)
    assert enc.schema.kind is OutputKind.MIXED and enc.schema.text == "template"
    assert enc.skeleton(y[3, 0]) == ("answer=# (n=#d)", REAL, REAL)  # 3/7 as 0.429: Python's own
    assert enc.skeleton(y[7, 0]) == ("answer=#.3f (n=#d)", REAL, REAL)  # 1.000: three decimals
    assert y[3, 3:5].tolist() == [float(f"{3 / 7:.3f}"), 3.0]
    assert enc.skeleton(y[-1, 0]) == ("no answer",)
    later, _ = encode(["anything at all", None], enc)  # every text reads: no error later
    assert enc.skeleton(later[0, 0]) == ("anything at all",) and enc.skeleton(later[1, 0]) is None
    _, enc = encode(["yes", "no"] * 20)  # few distinct texts: categories, as before
    assert enc.schema.kind is OutputKind.DISCRETE
    _, enc = encode([f"id-{i}" for i in range(10)])  # too few texts to tell: categories
    assert enc.schema.kind is OutputKind.DISCRETE
    # a one-call mechanism's first output alone: a text that spells a real number is a template
    # (it was a category, and "count=" + str(x + noise) got no float64 question at all)
    y, enc = encode(["count=-0.17032938532613265"])
    assert enc.schema.kind is OutputKind.MIXED and enc.schema.text == "template"
    assert enc.skeleton(y[0, 0]) == ("count=#", REAL) and y[0, 3] == -0.17032938532613265
    _, enc = encode(["count=3"])  # a whole number alone: still too little to tell
    assert enc.schema.kind is OutputKind.DISCRETE


def test_numbers_as_text_or_none_are_a_value_or_none():
    y, enc = encode([None, "1.5", "2.5"])
    assert enc.schema.kind is OutputKind.MIXED and enc.schema.text == "number"
    assert enc.skeleton(y[0, 0]) is None and y[1:, 3].tolist() == [1.5, 2.5]


def test_a_none_after_integers_names_the_declaration_that_audits_it():
    """``None if x > 3 else round(x)`` whose first batch held no None: the ERROR read "returned int
    2 after integer outputs" and offered no way out, and declaring ``output='mixed'`` was refused
    too ("returned 2, not the declared tuple ... output"). Now the ERROR says what to declare, and
    the declaration audits it: numbers as 1-tuples, None as None."""
    _, enc = encode([1, 2])
    with pytest.raises(MechanismError, match=r"returned None after integer outputs \(declare "
                                             r"output='mixed' for a value that may be None\)"):
        encode([None, 3], enc)
    y, enc = encode([1, 2], OutputEncoder(OutputKind.MIXED))
    later, _ = encode([None, 3], enc)
    assert enc.schema.kind is OutputKind.MIXED
    assert enc.skeleton(later[0, 0]) is None and enc.skeleton(later[1, 0]) == (3,)
    assert enc.skeleton(y[0, 0]) == (1,)
    y, enc = encode([None, 1], OutputEncoder(OutputKind.MIXED))  # a first batch of both
    assert enc.schema.kind is OutputKind.MIXED and enc.skeleton(y[1, 0]) == (1,)


def test_numpy_texts_are_texts():
    y, enc = encode([np.str_("1.5"), np.str_("2.5")])
    assert enc.schema.text == "number" and y[:, 3].tolist() == [1.5, 2.5]
    y, enc = encode(np.array(["0.5", "3"]))  # a batch array of texts
    assert enc.schema.text == "number" and y[:, 3].tolist() == [0.5, 3.0]
    y, enc = encode([(np.str_("sum"), 1.0)])
    assert enc.schema.kind is OutputKind.MIXED and enc.skeleton(y[0, 0]) == ("sum", REAL)


def test_dataclasses_are_the_dicts_of_their_fields():
    from dataclasses import dataclass

    @dataclass
    class Release:
        value: float
        n: int

    y, enc = encode([Release(1.5, 3), Release(2.5, 4)])
    assert enc.schema.kind is OutputKind.VECTOR and enc.schema.names == ("n", "value")
    assert y.tolist() == [[3.0, 1.5], [4.0, 2.5]]


@pytest.mark.slow
def test_a_nested_output_too_large_to_walk_is_one_line():
    x = [0.5]
    for _ in range(8):
        x = [x] * 30  # 30**8 values, each list shared
    with pytest.raises(MechanismError, match="nested output of more than") as err:
        encode([x])
    assert len(str(err.value)) < 400
