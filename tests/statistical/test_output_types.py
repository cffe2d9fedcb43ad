"""An output whose Python type depends on the data (a library returned a Python ``float`` on some
calls and ``numpy.float64`` on the others: diffprivlib's mean without bounds, a library user's
probe) is encoded as an atom of its own, NaN, so the type is part of what is released. The event
then says "an output of another type", not "NaN or ±inf" (which the mechanism never returned),
and its fix is one type for every output.

α: the other type comes on 20% of the calls on D and never on D′; at 40,000 samples a refutation
fails with probability below 1e-50. One fixed seed, no retry."""

from __future__ import annotations

import numpy as np
import pytest

import dpaudit
from dpaudit.execution.base import InProcessExecutor
from dpaudit.report.findings import OTHER_TYPE_FIX, float_fix

pytestmark = pytest.mark.statistical


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0.0, 1.0), size=10)
def two_types(data, rng):
    v = np.float64(float(np.sum(data)) + rng.laplace(scale=10.0))
    return float(v) if data[0] > 0.5 and rng.random() < 0.2 else v


def test_an_output_of_another_type_is_named_as_such():
    r = dpaudit.audit(two_types, samples=40_000, seed=3, executor=InProcessExecutor())
    assert r.refuted
    f = r.findings["float"]  # the type's atom is a float64 cell (NaN) of its own
    assert f.refuted
    ev = f.counterexample.event
    assert ev["kind"] == "float-structure" and ev["reason"] == "output-type"
    assert ev["other_types"] == ["float"]
    assert "another type (float)" in ev["text"] and "non-finite output: NaN" not in ev["text"]
    assert float_fix(f.to_record(), r.to_record()) == OTHER_TYPE_FIX


def test_a_vector_of_another_length_is_named_as_such_not_as_none():
    # a grouped release whose key set varies returned lists of 1 and 2 values; the error said
    # "returned None after vectors of length 1" (a library user's probe)
    from dpaudit.errors import MechanismError
    from dpaudit.outputs import OutputEncoder

    enc = OutputEncoder(None)
    enc.encode([[1.0]] * 5, data=np.zeros(2))
    with pytest.raises(MechanismError, match="returned vectors of another length after vectors of length 1"):
        enc.encode([[1.0]] * 4 + [[1.0, 2.0]], data=np.zeros(2))
