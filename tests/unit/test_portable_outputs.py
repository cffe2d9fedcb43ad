"""What the sandbox child sends back (dpaudit/execution/described.py, ``portable_outputs``, then
dpaudit/execution/safe_pickle.py, ``pack``): plain values in forms dpaudit's process reads back with
its restricted unpickler, the same numbers the in-process encoder would see."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import pytest

from dpaudit.execution import safe_pickle
from dpaudit.execution.described import portable_outputs
from dpaudit.output_values import NotPlain


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
    out = safe_pickle.pack(portable_outputs(outputs))
    return safe_pickle.loads(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))


def test_plain_batches_go_as_they_are():
    batch = [1.5, 2.5]
    assert portable_outputs(batch) is batch
    arr = np.arange(3.0)
    assert portable_outputs(arr) is arr


def test_records_and_numpy_values_become_plain_values():
    out = _sent([Pair(1.5, 2), Release(0.5, 3), (1, Release(2.0, 1)), np.float64(1.0),
                 Fraction(1, 2), True, np.arange(2.0), np.datetime64("2020-01-01")])
    assert out[0] == (1.5, 2) and type(out[0]) is tuple
    assert out[1] == {"value": 0.5, "n": 3}
    assert out[2] == (1, {"value": 2.0, "n": 1})
    assert out[3:6] == [1.0, Fraction(1, 2), True]
    assert np.array_equal(out[6], [0.0, 1.0]) and out[7] == np.datetime64("2020-01-01")


def test_other_objects_are_errors_not_their_name_and_repr():
    # plain values only: objects were once sent as their class name and repr (which need not show
    # all they carry: a cheating mechanism's repr showed the noisy value and hid the exact one), and
    # a class of the audited code's own with to_numpy is not taken for a library's table
    for v, said in [(Widget(), "Widget object, not a plain value"), (len, "not a plain value"),
                    (Table(), "Table object, not a plain value")]:
        with pytest.raises(NotPlain, match=said):
            portable_outputs([v])
    user = type("Thing", (), {"__module__": "_dpaudit_user_x", "__repr__": lambda self: "Thing()"})
    with pytest.raises(NotPlain, match="returned a Thing object"):
        portable_outputs([user()])
