"""The claim read from the source's decorator (dpaudit/execution/declared.py): parts computed
from OpenDP's map at different input distances are refused, before anything is recomputed."""

import pytest

from dpaudit.errors import LoadError
from dpaudit.execution.declared import SourceDeclaration, reconcile


def _source(epsilon: str, delta: str) -> SourceDeclaration:
    # the recipes are never run here: the refusal comes first (no OpenDP needed)
    computed = {"epsilon": (epsilon, "__claim__ = 0"), "delta": (delta, "__claim__ = 0")}
    return SourceDeclaration(True, {"neighbours": "linf", "domain": (0.0, 1.0), "size": 1},
                             ("epsilon", "delta"), 7, computed)


def test_an_epsilon_and_a_delta_from_maps_at_two_distances_are_refused():
    # epsilon=meas.map(2)[0], delta=meas.map(1)[1] paired the ε of one distance with the δ of
    # another, and was audited as written
    with pytest.raises(LoadError, match=r"line 7: the claim's parts come from the map at different "
                                        r"input distances \(delta at d_in = 1, epsilon at d_in = 2\)"):
        reconcile(_source("meas.map(2)[0]", "meas.map(1)[1]"), {}, path="mech.py")


def test_one_distance_is_not_refused_here():
    from dpaudit.execution.declared import _mixed_d_in  # private: the rule alone, no OpenDP to run

    assert _mixed_d_in(_source("meas.map(1)[0]", "meas.map(1)[1]")) is None
    assert _mixed_d_in(_source("meas.map(1.0)[0]", "meas.map(1.0)[1]")) is None
    assert _mixed_d_in(_source("meas.map(1)[0]", "meas.map(1.0)[1]")) is None  # one distance


def test_a_computed_field_must_be_the_map_of_its_measure():
    # (dpaudit.execution.declared._wrong_measure: no OpenDP needed) the measure, by the whole name
    # OpenDP 0.16 gives it, says what the number is; only a proven mismatch is refused
    from dpaudit.execution.declared import _wrong_measure  # private: the rule, without OpenDP

    assert _wrong_measure("epsilon", "m.map(1)", 0.5, "MaxDivergence") is None
    assert _wrong_measure("rho", "m.map(1)", 0.5, "ZeroConcentratedDivergence") is None
    for name in ("epsilon", "delta"):  # an approximate-DP map's parts, in 0.16's and older names
        for measure in ("Approximate(MaxDivergence)", "FixedSmoothedMaxDivergence", "SmoothedMaxDivergence"):
            assert _wrong_measure(name, "m.map(1)[0]", 1.0, measure) is None
    assert _wrong_measure("epsilon", "m.map(1)", 0.5, None) is None  # no map: nothing to say
    assert "write rho=m.map(1)" in _wrong_measure("epsilon", "m.map(1)", 0.5, "ZeroConcentratedDivergence")
    assert "not zCDP" in _wrong_measure("rho", "m.map(1)", 0.5, "MaxDivergence")
