"""Claims, specs, seeds and the public API surface."""

import math

import numpy as np
import pytest

import dpaudit
from dpaudit.claims import Domain, Neighbours, privacy_claim
from dpaudit.errors import InvalidArgument, MechanismError, UsageError
from dpaudit.rng import root_sequence, spawn_generators
from dpaudit.spec import CallForm, MechanismSpec, mechanism


@pytest.mark.parametrize("eps", [0, -1.0, math.nan, math.inf, "1", True])
def test_invalid_epsilon_names_argument_and_value(eps):
    with pytest.raises(InvalidArgument, match=r"^epsilon must be a finite number > 0, got"):
        dpaudit.PureDP(eps)


def test_a_number_given_as_text_and_the_american_spelling_are_named():
    """epsilon="1" read 'must be a finite number > 0, got '1'' (it is above 0: it is text), and
    neighbors= was an unknown keyword with no hint, where the CLI takes --neighbors."""
    with pytest.raises(InvalidArgument, match=r"got '1' \(text: give the number without quotes\)$"):
        dpaudit.PureDP("1")
    with pytest.raises(InvalidArgument, match=r"'neighbors': did you mean 'neighbours'\?$"):
        MechanismSpec.from_function(lambda data, rng: 0.0, epsilon=1.0, neighbors="add-remove")


@pytest.mark.parametrize("delta", [-0.1, 1.0, 2, math.nan])
def test_invalid_delta(delta):
    with pytest.raises(InvalidArgument, match=r"^delta must be a number in \[0, 1\), got"):
        dpaudit.ApproxDP(1.0, delta)


def test_privacy_claim_picks_pure_or_approx():
    assert privacy_claim(1.0) == dpaudit.PureDP(1.0)
    assert privacy_claim(1.0, 1e-5) == dpaudit.ApproxDP(1.0, 1e-5)


@pytest.mark.parametrize("bad", ["1:1", "2:1", "a:b", "1", (0, math.inf), (1, 0)])
def test_invalid_domain(bad):
    with pytest.raises(InvalidArgument, match="domain"):
        Domain.parse(bad)


def test_domain_parse_negative_lo():
    assert Domain.parse("-10:10") == Domain(-10.0, 10.0)


def test_unknown_relation_names_choices():
    with pytest.raises(InvalidArgument, match="neighbours must be one of add-remove, replace, linf, l1"):
        Neighbours.parse("swap")
    assert Neighbours.parse("add_remove") is Neighbours.ADD_REMOVE


def test_negative_size_rejected():
    with pytest.raises(InvalidArgument, match="size must be an integer >= 0, got -1"):
        mechanism(epsilon=1.0, size=-1)


def test_call_forms_detected():
    assert MechanismSpec.from_function(lambda d: 0.0, epsilon=1).call_form is CallForm.DATA
    assert MechanismSpec.from_function(lambda d, rng: 0.0, epsilon=1).call_form is CallForm.DATA_RNG

    def batch(d, rng, size=None):
        return rng.normal(size=size)

    assert MechanismSpec.from_function(batch, epsilon=1).call_form is CallForm.BATCH


def test_flags_override_declaration_and_missing_claim_is_usage_error():
    @mechanism(epsilon=1.0, domain=(0, 1), size=5)
    def m(data, rng):
        return 0.0

    spec = MechanismSpec.from_function(m, epsilon=2.0, size=7)
    assert (spec.epsilon, spec.size, spec.domain) == (2.0, 7, Domain(0.0, 1.0))
    with pytest.raises(UsageError, match="--epsilon"):
        MechanismSpec.from_function(lambda d, rng: 0.0)


def test_call_batch_wraps_mechanism_exceptions_with_dataset():
    spec = MechanismSpec.from_function(lambda d, rng: 1 / 0, epsilon=1)
    with pytest.raises(MechanismError, match="raised ZeroDivisionError") as info:
        spec.call_batch([0.5, 1.0], np.random.default_rng(0), 3)
    assert list(info.value.dataset) == [0.5, 1.0]


def test_call_batch_rejects_wrong_batch_length():
    def m(d, rng, size=None):
        return np.zeros(3)

    with pytest.raises(MechanismError, match="returned 3 outputs for size=5"):
        MechanismSpec.from_function(m, epsilon=1).call_batch([0.0], np.random.default_rng(0), 5)


def test_mechanism_cannot_corrupt_the_dataset():
    def mutating(d, rng):
        d[:] = 99.0
        return float(d.sum())

    data = np.array([0.1, 0.2])
    MechanismSpec.from_function(mutating, epsilon=1).call_batch(data, np.random.default_rng(0), 2)
    assert data.tolist() == [0.1, 0.2]


def test_same_seed_same_children():
    a = [g.random() for g in spawn_generators(root_sequence(7), 3)]
    b = [g.random() for g in spawn_generators(root_sequence(7), 3)]
    assert a == b and len(set(a)) == 3


def test_every_public_name_resolves():
    for name in dpaudit.__all__:
        assert getattr(dpaudit, name) is not None, name


def test_names_in_a_declaration_are_read_where_the_module_binds_them_once(tmp_path):
    """``domain=(LO, HI)`` and ``EPS, DELTA = 0.5, 1e-5`` were refused ("not readable from the
    source … give --domain"): a tuple of names and a tuple assignment are read now, and a name
    bound more than once (a tuple assignment, a loop, a ``global`` in a function) still is not."""
    from dpaudit.execution.declared import read_declaration

    def read(body):
        path = tmp_path / "m.py"
        path.write_text("import dpaudit\n" + body + "\n@dpaudit.mechanism(epsilon=EPS, delta=DELTA, "
                        "domain=(LO, HI), size=10)\ndef f(data, rng):\n    return 0.0\n")
        return read_declaration(str(path), "f")

    got = read("EPS, DELTA = 0.5, 1e-5\nLO, HI = -1.0, 1.0\n")
    assert got.literal == {"epsilon": 0.5, "delta": 1e-5, "domain": (-1.0, 1.0), "size": 10}
    assert not got.opaque
    for rebinding in ("EPS, X = 5.0, 1\n", "for EPS in (5.0,):\n    pass\n",
                      "def g():\n    global EPS\n    EPS = 5.0\n"):
        got = read("EPS, DELTA = 0.5, 1e-5\nLO, HI = -1.0, 1.0\n" + rebinding)
        assert "epsilon" in got.opaque and "epsilon" not in got.literal, rebinding
        assert got.literal["domain"] == (-1.0, 1.0)
