"""Reproduce lines rerun the claim that was audited, exactly: every float written into a
``dpaudit check`` line (or a ``dpaudit.audit(...)`` call) reads back to the same float."""

import ast
import math
import shlex

from hypothesis import example, given
from hypothesis import strategies as st

from dpaudit import reproduce
from dpaudit.claims import Domain
from dpaudit.cli import _join_dash_values, build_parser  # private: the argv step the round trip needs
from dpaudit.config import resolve_settings

positive = st.floats(min_value=5e-324, max_value=1e300, allow_nan=False, allow_infinity=False)
delta = st.floats(min_value=0.0, max_value=1.0, exclude_max=True, allow_nan=False)
finite = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False)


def _settings_of(line: str):
    argv = shlex.split(line, comments=True)
    assert argv[:2] == ["dpaudit", "check"]
    return resolve_settings(build_parser().parse_args(_join_dash_values(argv[1:])))


@given(epsilon=positive, delta=delta, lo=finite, width=positive, confidence=st.floats(0.001, 0.999999),
       seed=st.integers(0, 2 ** 64))
@example(epsilon=1.000000009, delta=0.0, lo=0.0, width=1.0, confidence=0.95, seed=0)
@example(epsilon=math.log(3), delta=1e-9, lo=-10.0, width=20.0, confidence=0.999, seed=1)
@example(epsilon=1 + 1e-9, delta=1 - 2 ** -53, lo=-0.1, width=0.30000000000000004, confidence=0.9, seed=2)
def test_check_line_round_trips_every_claim_exactly(epsilon, delta, lo, width, confidence, seed):
    hi = lo + width
    if not (math.isfinite(hi) and lo < hi):
        return
    line = reproduce.check_command("m.py:f", epsilon=epsilon, delta=delta, neighbours="replace",
                                   domain=Domain(lo, hi), size=7, seed=seed, samples=4000,
                                   confidence=confidence, own_randomness=seed % 2 == 1)
    s = _settings_of(line)
    assert s.claim["epsilon"] == epsilon
    assert s.claim.get("delta", 0.0) == delta
    assert s.claim["domain"] == Domain(lo, hi)
    assert (s.claim["size"], s.samples, s.seed, s.confidence) == (7, 4000, seed, confidence)


@given(x=st.floats(allow_nan=False))
def test_number_reads_back_to_the_same_float(x):
    text = reproduce.number(x)
    assert float(text) == x and math.copysign(1.0, float(text)) == math.copysign(1.0, x)


@given(epsilon=positive, delta=delta, lo=finite, width=positive)
@example(epsilon=math.log(3), delta=0.0, lo=0.0, width=1.0)
def test_python_call_round_trips_the_claim(epsilon, delta, lo, width):
    hi = lo + width
    if not (math.isfinite(hi) and lo < hi):
        return
    line = reproduce.python_call("f", epsilon=epsilon, delta=delta, neighbours="add-remove",
                                 domain=Domain(lo, hi), size=3, seed=5, samples=1000)
    call = ast.parse(line.split("; ", 1)[1]).body[0].value
    kw = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    assert (kw["epsilon"], kw["delta"], tuple(kw["domain"])) == (epsilon, delta, (lo, hi))


def test_ln3_and_near_one_are_written_in_full():
    line = reproduce.check_command("m.py", epsilon=math.log(3), delta=0.0, neighbours="add-remove",
                                   domain=Domain(0, 1), size=10, seed=1)
    assert "--epsilon=1.0986122886681098 " in line and "--domain=0:1 " in line
    line = reproduce.check_command("m.py", epsilon=1.000000009, delta=1e-6, neighbours="replace",
                                   domain=Domain(-1, 1), size=10, seed=1)
    assert "--epsilon=1.000000009 --delta=1e-06 " in line
