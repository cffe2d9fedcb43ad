"""What the sandbox child sends back (dpaudit/execution/remote.py, ``opaque_outputs``): values in
forms dpaudit's process reads back with its restricted unpickler, the same numbers the in-process
encoder would see."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from dpaudit.execution import safe_pickle
from dpaudit.execution.remote import Opaque, opaque_outputs


class Pair(NamedTuple):
    value: float
    n: int


@dataclass
class Release:
    value: float
    n: int


class Table:
    def to_numpy(self):
        return np.array([1.0, 2.0])


class Widget:
    def __repr__(self):
        return "Widget(7)"


def _sent(outputs):
    out = opaque_outputs(outputs)
    return safe_pickle.loads(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))


def test_plain_batches_go_as_they_are():
    batch = [1.5, 2.5]
    assert opaque_outputs(batch) is batch
    arr = np.arange(3.0)
    assert opaque_outputs(arr) is arr


def test_records_tables_and_library_numbers_become_plain_values():
    out = _sent([Pair(1.5, 2), Release(0.5, 3), Table(), (1, Release(2.0, 1)), np.float64(1.0),
                 Fraction(1, 2), True])
    assert out[0] == (1.5, 2) and type(out[0]) is tuple
    assert out[1] == {"value": 0.5, "n": 3}
    assert np.array_equal(out[2], [1.0, 2.0])
    assert out[3] == (1, {"value": 2.0, "n": 1})
    assert out[4:] == [1.0, Fraction(1, 2), True]


def test_other_objects_go_as_their_name_and_repr_and_functions_as_they_are():
    out = opaque_outputs([Widget(), len])
    assert out[0] == Opaque(f"{__name__}.Widget", "Widget(7)") and out[1] is len
    user = type("Thing", (), {"__module__": "_dpaudit_user_x", "__repr__": lambda self: "Thing()"})
    assert opaque_outputs([user()]) == [Opaque("Thing", "Thing()")]
