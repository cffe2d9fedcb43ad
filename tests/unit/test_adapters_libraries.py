"""The adapters against the real libraries (the ``dpaudit[libraries]`` extra). Each library's tests
run only where it is installed; elsewhere pytest reports them as skipped with the reason (the
library-independent logic is tested in test_adapters.py, which needs none of them)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import dpaudit
from dpaudit.adapters.common import LibrarySpec
from dpaudit.claims import Neighbours
from dpaudit.errors import InvalidArgument, UsageError


def _draw(spec, seed, k=6, data=(0.2, 0.9, 0.5)):
    return list(spec.call_batch(np.asarray(data), np.random.default_rng(seed), k))


# -- OpenDP ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dp():
    prelude = pytest.importorskip("opendp.prelude", reason="opendp is not installed (dpaudit[libraries])")
    prelude.enable_features("contrib")
    return prelude


@pytest.fixture(scope="module")
def odp(dp):
    from dpaudit.adapters import opendp

    return opendp


def _space(dp, lo=0.0, hi=1.0, size=None):
    return dp.vector_domain(dp.atom_domain(bounds=(lo, hi)), size=size), dp.symmetric_distance()


def test_opendp_claim_is_the_privacy_map_under_its_metric(dp, odp):
    m = _space(dp) >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0)
    spec = odp.target(m)
    assert isinstance(spec, LibrarySpec)
    assert spec.epsilon == m.map(1) and spec.epsilon > 1.0  # OpenDP's float slack is kept, unrounded
    assert spec.neighbours is Neighbours.ADD_REMOVE
    assert (spec.domain.lo, spec.domain.hi, spec.size) == (0.0, 1.0, 10)
    assert spec.library["name"] == "opendp" and spec.library["version"] == "0.16.0"
    assert spec.library["own_randomness"] is True


def test_opendp_sized_domain_at_distance_two_is_one_record_replaced(dp, odp):
    m = _space(dp, size=4) >> dp.t.then_mean() >> dp.m.then_laplace(scale=0.25)
    spec = odp.target(m, d_in=2)
    assert spec.neighbours is Neighbours.REPLACE and spec.size == 4 and spec.epsilon == m.map(2)
    with pytest.raises(InvalidArgument, match="d_in=2"):
        odp.target(m, d_in=1)
    with pytest.raises(InvalidArgument, match="size=5"):
        odp.target(m, d_in=2, size=5)


def test_opendp_zcdp_is_converted_as_opendp_converts_it(dp, odp):
    m = _space(dp) >> dp.t.then_sum() >> dp.m.then_gaussian(scale=1.0)
    spec = odp.target(m, delta=1e-3)
    own = dp.c.make_zCDP_to_approxDP(m).map(1).epsilon(1e-3)
    assert spec.delta == 1e-3 and spec.epsilon == pytest.approx(own, rel=1e-9)
    # without delta, the measurement states its claim as its curve: dpaudit.audit refuses the
    # placeholder point, dpaudit.curve_audit reads ρ
    curve = odp.target(m)
    assert curve.library["curve"] == {"rho": pytest.approx(m.map(1))}
    with pytest.raises(UsageError, match="curve_audit"):
        dpaudit.audit(curve, samples=1000)


def test_opendp_batch_draws_k_outputs_of_the_measurement(dp, odp):
    spec = odp.target(dp.m.make_randomized_response_bool(prob=0.75))
    assert spec.neighbours is Neighbours.REPLACE and spec.size == 1
    assert spec.epsilon == pytest.approx(math.log(3.0), rel=1e-12)
    out = list(spec.call_batch(np.asarray([1.0]), np.random.default_rng(0), 2_500))
    assert len(out) == 2_500 and all(isinstance(v, bool) for v in out)
    # P[True | input True] = 0.75: 2,500 draws lie within 5 standard errors (α < 1e-6)
    assert abs(np.mean(out) - 0.75) < 5 * math.sqrt(0.75 * 0.25 / 2_500)


def test_opendp_rejects_what_dpaudit_cannot_audit(dp, odp):
    with pytest.raises(InvalidArgument, match="Measurement"):
        odp.target(lambda x: x)
    m = _space(dp) >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0)
    with pytest.raises(InvalidArgument, match="d_in"):
        odp.target(m, d_in=3)
    # text records: dpaudit's datasets are numbers (was an ERROR blaming the measurement)
    with pytest.raises(InvalidArgument, match=r"records of type String .* integer codes"):
        odp.target(dp.m.make_randomized_response(categories=["a", "b", "c"], prob=0.6))


# -- diffprivlib -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dpl():
    pytest.importorskip("diffprivlib", reason="diffprivlib is not installed (dpaudit[libraries])")
    from dpaudit.adapters import diffprivlib

    return diffprivlib


def test_diffprivlib_notions_follow_its_sensitivity_analysis(dpl):
    assert dpl.target("tools.mean", epsilon=1, bounds=(0, 1)).neighbours is Neighbours.REPLACE
    assert dpl.target("tools.sum", epsilon=1, bounds=(0, 1)).neighbours is Neighbours.REPLACE
    assert dpl.target("tools.histogram", epsilon=1, bins=2, range=(0, 1)).neighbours is Neighbours.ADD_REMOVE
    spec = dpl.target("tools.sum", epsilon=0.5, bounds=(-1, 2), neighbours="add-remove")
    assert spec.neighbours is Neighbours.ADD_REMOVE and spec.library["notion"] == "replace"
    assert (spec.domain.lo, spec.domain.hi, spec.epsilon) == (-1.0, 2.0, 0.5)


def test_diffprivlib_is_reproducible_from_the_seed(dpl):
    spec = dpl.target("tools.mean", epsilon=1.0, bounds=(0, 1))
    assert spec.library["own_randomness"] is False
    first, again, other = _draw(spec, 7), _draw(spec, 7), _draw(spec, 8)
    assert first == again and first != other
    assert all(0.0 <= v <= 1.0 for v in first)  # LaplaceTruncated stays in the bounds


def test_diffprivlib_mechanism_sees_values_within_its_sensitivity(dpl):
    spec = dpl.target("mechanisms.Geometric", epsilon=1.0, sensitivity=3)
    assert spec.neighbours is Neighbours.LINF and spec.size == 1
    assert (spec.domain.lo, spec.domain.hi) == (0.0, 2.0)
    out = _draw(spec, 1, k=200, data=(2.0,))
    assert all(isinstance(v, int) for v in out)
    bounded = dpl.target("mechanisms.LaplaceTruncated", epsilon=1.0, sensitivity=2.0, lower=0, upper=10)
    assert (bounded.domain.lo, bounded.domain.hi) == (0.0, 5.0)
    assert all(0.0 <= v <= 10.0 for v in _draw(bounded, 1, k=200, data=(5.0,)))


def test_diffprivlib_histogram_output_is_the_counts(dpl):
    spec = dpl.target("tools.histogram", epsilon=1.0, bins=3, range=(0, 1))
    out = _draw(spec, 3, k=4)
    assert all(isinstance(v, tuple) and len(v) == 3 for v in out)


def test_diffprivlib_bad_targets_are_clear_errors(dpl):
    with pytest.raises(InvalidArgument, match="tools.mean"):
        dpl.target("tools.nosuch", epsilon=1)
    with pytest.raises(InvalidArgument, match="bounds="):
        dpl.target("tools.mean", epsilon=1)
    with pytest.raises(InvalidArgument, match="epsilon="):
        dpl.target("tools.mean", bounds=(0, 1))
    with pytest.raises(InvalidArgument, match="random_state"):
        dpl.target("tools.mean", epsilon=1, bounds=(0, 1), random_state=3)
    # the library's own refusals, one line naming the target (were its ValueError, TypeError)
    with pytest.raises(InvalidArgument, match=r"^diffprivlib mechanisms.Laplace: the library refused .*ValueError"):
        dpl.target("mechanisms.Laplace", epsilon=0, sensitivity=1)
    with pytest.raises(InvalidArgument, match=r"refused its parameters: TypeError: .*'foo'"):
        dpl.target("mechanisms.Laplace", epsilon=1, sensitivity=1, foo=3)


def test_diffprivlib_wrap_hands_over_a_seeded_random_state(dpl):
    def noisy(data, random_state):
        from diffprivlib.mechanisms import Laplace

        return Laplace(epsilon=1.0, sensitivity=1.0, random_state=random_state).randomise(float(data.sum()))

    spec = dpl.wrap(noisy, epsilon=1.0)
    assert _draw(spec, 4) == _draw(spec, 4) != _draw(spec, 5)


# -- python-dp -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pdp():
    pytest.importorskip("pydp", reason="python-dp is not installed (dpaudit[libraries])")
    from dpaudit.adapters import pydp

    return pydp


def test_pydp_claims_add_remove_and_its_own_randomness(pdp):
    spec = pdp.target("BoundedSum", epsilon=0.7, lower_bound=0, upper_bound=2, dtype="float")
    assert spec.neighbours is Neighbours.ADD_REMOVE and spec.epsilon == 0.7
    assert (spec.domain.lo, spec.domain.hi) == (0.0, 2.0)
    assert spec.library["name"] == "python-dp" and spec.library["own_randomness"] is True
    first, again = _draw(spec, 1, k=20), _draw(spec, 1, k=20)
    assert len(first) == 20 and first != again  # the same seed, other numbers: its own generator


def test_pydp_count_counts_the_records(pdp):
    out = _draw(pdp.target("Count", epsilon=2.0, dtype="float"), 0, k=2_000, data=(0.1,) * 7)
    # Laplace(1/2) noise, rounded: the mean is 7 within 5 standard errors (α < 1e-6)
    assert abs(np.mean(out) - 7.0) < 5 * math.sqrt(2 * 0.5 ** 2 + 1 / 12) / math.sqrt(2_000)


def test_pydp_bad_targets_are_clear_errors(pdp):
    with pytest.raises(InvalidArgument, match="BoundedSum"):
        pdp.target("NoSuch", epsilon=1)
    with pytest.raises(InvalidArgument, match="lower_bound"):
        pdp.target("BoundedMean", epsilon=1)
    for name, params in (("Count", {}), ("LaplaceMechanism", {"sensitivity": 1})):  # C++ RuntimeErrors
        with pytest.raises(InvalidArgument, match=rf"^python-dp {name}: the library refused .*Epsilon"):
            pdp.target(name, epsilon=0, **params)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")
def test_pydp_noise_is_duplicated_by_fork(pdp):
    """Why the adapter never runs python-dp on a fork pool: two processes forked after a draw
    draw the same noise (its generator's buffer is copied)."""
    from pydp.algorithms.numerical_mechanisms import LaplaceMechanism

    mech = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    mech.add_noise(0.0)
    seen = []
    for _ in range(2):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.write(w, repr([mech.add_noise(0.0) for _ in range(3)]).encode())
            os._exit(0)
        os.close(w)
        os.waitpid(pid, 0)
        seen.append(os.read(r, 4096).decode())
        os.close(r)
    assert seen[0] == seen[1]


@pytest.mark.slow
def test_opendp_zcdp_curve_is_audited_over_the_curve(dp, odp):
    # OpenDP's Gaussian at scale 4 is 1/32-zCDP and NOT REFUTED as its curve (α = 0.05 by design,
    # fixed seed); its lower curve at ε = 0 stays below the Gaussian's exact δ(0) ≈ 0.0995
    m = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=4.0)
    r = dpaudit.curve_audit(odp.target(m, d_in=1.0), samples=100_000, seed=3)
    rec = r.to_record()
    assert rec["verdict"] == "not_refuted" and rec["claim"]["text"] == "0.03125-zCDP"
    assert rec["grid"]["delta_lower_bound"][0] < 0.0995 + 0.005
