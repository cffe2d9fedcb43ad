"""Values past what floats and reprs hold are results, not internal errors: an int of 5000 digits
as an output (its repr is refused past 4300 digits), a Fraction beyond float64, a claim of ε = 1000
(e^ε overflows). Each was ``internal error in dpaudit`` (exit 4). Fixed seed; the leaking int is
refuted at the run's 95% (its outputs on D and D' never meet, α = 5%)."""

from fractions import Fraction

import dpaudit
from dpaudit.execution.base import InProcessExecutor


def _audit(f, epsilon=1.0):
    return dpaudit.audit(f, epsilon=epsilon, neighbours="add-remove", domain=(0, 1), size=3,
                         samples=2_000, seed=3, executor=InProcessExecutor())


def test_a_huge_int_output_is_an_atom_named_by_its_size():
    r = _audit(lambda data, rng: 10 ** 5000 + int(data.sum() > 0))
    assert r.verdict.value == "refuted"
    assert "<an int of 16610 bits, …00000" in r.counterexample.event["text"]  # …000000 or …000001


def test_a_fraction_beyond_float64_is_an_error_not_the_infinity_it_rounds_to():
    """A Fraction is audited as the double it rounds to, so one that is not a double (here far
    beyond float64) is the mechanism's ERROR: its numerator could carry the data (NOT REFUTED)."""
    r = _audit(lambda data, rng: Fraction(10 ** 4000 + 1, 3))
    assert r.verdict.value == "error" and "not a double" in r.error


def test_a_claim_whose_exp_overflows_has_a_verdict_and_no_power_statement():
    """ε = 1000 is out of every budget's reach (about e^1000 samples): INCONCLUSIVE, saying so,
    with no overflow on the way."""
    r = _audit(lambda data, rng: float(data.sum() + rng.laplace()), epsilon=1000.0)
    assert r.verdict.value == "inconclusive" and r.error is None
    assert "no budget dpaudit can draw brings it within reach" in r.findings["logic"].reason


def test_patterns_over_a_domain_as_wide_as_the_doubles_are_finite():
    """hi − lo = inf made every midpoint, step and grid NaN: NaN records, numpy warnings."""
    import warnings

    import numpy as np

    from dpaudit.claims import Domain
    from dpaudit.neighbours._common import backgrounds

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = list(backgrounds(Domain(-1.7e308, 1.7e308), 10))
    assert len(made) > 10 and all(np.isfinite(x).all() for _, x in made)
    # an ordinary domain keeps its exact values (seeded results depend on them)
    spread = dict(backgrounds(Domain(-10.0, 10.0), 5))["spread"]
    assert spread.tolist() == np.linspace(-10.0, 10.0, 5).tolist()


def test_a_result_holding_a_huge_int_output_reads_back_through_the_api():
    # dpaudit check raises Python's int-to-text limit for its run; through the Python API a
    # result whose event holds 10**5000 + 1 raised on repr() and json.dumps(to_record())
    import json

    import dpaudit

    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3)
    def huge(data, rng):
        return 10 ** 5000 + (1 if len(data) > 1 else 0)

    r = dpaudit.audit(huge, samples=4000, seed=1)
    assert r.verdict.value == "refuted"
    assert "an int of 16610 bits" in json.dumps(r.to_record()) and repr(r)


def test_a_set_holding_a_decimal_nan_beside_a_number_is_audited():
    # sorting it raised decimal.InvalidOperation (a signalling comparison): an internal error
    from decimal import Decimal

    r = _audit(lambda data, rng: {Decimal("NaN"), int(data.sum() > 0)})
    assert r.verdict.value == "refuted", r.error
