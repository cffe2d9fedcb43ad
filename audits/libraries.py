"""Audits of OpenDP, diffprivlib and python-dp, each target with the library's own claim.

Every target is one line through :mod:`dpaudit.adapters`: the library's function or measurement
with its own parameters, audited under the neighbour notion the library's analysis implies. These
audits need the ``dpaudit[libraries]`` extra; where a library is missing its audits are SKIPPED
(listed as such, never counted as passed).

Correct targets are expected NOT REFUTED at 99.9%. Each deliberate misuse (a control) is expected
REFUTED; its true ε is derived analytically in ``TRUE_EPSILON`` (the ε_LB it reaches is compared
with it in benchmarks/libraries.py):

* ``diffprivlib.sum.add-remove`` / ``diffprivlib.count_nonzero.add-remove``: ``tools.sum`` and
  ``count_nonzero`` clamp their output to [lower·n, upper·n] with n = the array size. Under
  add-remove the two datasets have n and n − 1 records, and the output lies in (upper·(n − 1),
  upper·n] with positive probability on one and zero on the other: true ε = ∞ (the bound reached
  is limited only by the sample count).
* ``*.histogram.replace``: a histogram whose bins get noise of sensitivity 1 (right for one record
  added or removed) claimed for one record replaced: two bins move by 1 in opposite directions and
  the quadrant event {bin_a ≥ c_a, bin_b ≤ c_b} has probability ratio e^{ε}·e^{ε}: true ε = 2ε.
* ``*.sensitivity-halved``: Laplace noise calibrated to sensitivity 0.5 on a sum of records in
  [0, 1] (sensitivity 1): scale Δ/(2ε) for a shift of Δ, true ε = 2ε.
* ``*.clamping-skipped``: noise calibrated to records in [0, 1] while the records really lie in
  [0, 2] (nothing clamps them; OpenDP trusts its input domain): the sum moves by 2, true ε = 2ε.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.suite import sampled

OPENDP, DIFFPRIVLIB, PYDP = ("opendp",), ("diffprivlib",), ("pydp",)


# -- OpenDP ----------------------------------------------------------------------------------------

def _dp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _floats(lo: float = 0.0, hi: float = 1.0, size=None):
    dp = _dp()
    return dp.vector_domain(dp.atom_domain(bounds=(lo, hi)), size=size), dp.symmetric_distance()


def _ints():
    dp = _dp()
    return dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()


def opendp_sum_laplace(**kw):
    from dpaudit.adapters import opendp

    dp = _dp()
    return opendp.target(_floats() >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0), **kw)


def opendp_count():
    from dpaudit.adapters import opendp

    dp = _dp()
    return opendp.target(_ints() >> dp.t.then_count() >> dp.m.then_laplace(scale=1.0))


def opendp_histogram(**kw):
    from dpaudit.adapters import opendp

    dp = _dp()
    return opendp.target(_ints() >> dp.t.then_count_by_categories(categories=[0, 1], null_category=False)
                         >> dp.m.then_laplace(scale=1.0), **kw)


def opendp_sized_mean():
    from dpaudit.adapters import opendp

    dp = _dp()
    return opendp.target(_floats(size=10) >> dp.t.then_mean() >> dp.m.then_laplace(scale=0.1), d_in=2)


def opendp_randomized_response():
    from dpaudit.adapters import opendp

    return opendp.target(_dp().m.make_randomized_response_bool(prob=0.75))


def opendp_gaussian_zcdp():
    from dpaudit.adapters import opendp

    dp = _dp()
    return opendp.target(_floats() >> dp.t.then_sum() >> dp.m.then_gaussian(scale=1.0), delta=1e-3)


# -- diffprivlib -----------------------------------------------------------------------------------

def dpl(name: str, **params):
    from dpaudit.adapters import diffprivlib

    return lambda: diffprivlib.target(name, **params)


def _dpl_sum_half_sensitivity(data, random_state):
    """A noisy sum of records in [0, 1] with diffprivlib's Laplace told sensitivity 0.5 (it is 1)."""
    from diffprivlib.mechanisms import Laplace

    total = float(np.clip(data, 0.0, 1.0).sum())
    return Laplace(epsilon=1.0, sensitivity=0.5, random_state=random_state).randomise(total)


def dpl_sensitivity_halved():
    from dpaudit.adapters import diffprivlib

    return diffprivlib.wrap(_dpl_sum_half_sensitivity, epsilon=1.0, neighbours="add-remove", domain=(0, 1),
                            name="sum of records in [0, 1] + mechanisms.Laplace(epsilon=1, sensitivity=0.5)")


# -- python-dp -------------------------------------------------------------------------------------

def pydp(name: str, **params):
    from dpaudit.adapters import pydp as adapter

    return lambda: adapter.target(name, **params)


def _pydp_noisy_sum(sensitivity: float, upper: float):
    def noisy_sum(data):
        from pydp.algorithms.numerical_mechanisms import LaplaceMechanism

        total = float(np.clip(data, 0.0, upper).sum())
        return LaplaceMechanism(epsilon=1.0, sensitivity=sensitivity).add_noise(total)

    return noisy_sum


def pydp_sensitivity_halved():
    from dpaudit.adapters import pydp as adapter

    return adapter.wrap(_pydp_noisy_sum(0.5, 1.0), epsilon=1.0, neighbours="add-remove", domain=(0, 1),
                        name="sum of records in [0, 1] + LaplaceMechanism(epsilon=1, sensitivity=0.5)")


def pydp_clamping_skipped():
    from dpaudit.adapters import pydp as adapter

    return adapter.wrap(_pydp_noisy_sum(1.0, 2.0), epsilon=1.0, neighbours="add-remove", domain=(0, 2),
                        name="unclamped sum of records in [0, 2] + LaplaceMechanism(epsilon=1, sensitivity=1)")


#: the true ε of every control, derived in the module docstring
TRUE_EPSILON = {
    "diffprivlib.sum.add-remove": math.inf,
    "diffprivlib.count_nonzero.add-remove": math.inf,
    "diffprivlib.histogram.replace": 2.0,
    "diffprivlib.sensitivity-halved": 2.0,
    "opendp.histogram.replace": 2.0,
    "opendp.clamping-skipped": 2.0,
    "pydp.sensitivity-halved": 2.0,
    "pydp.clamping-skipped": 2.0,
}

AUDITS = [
    # OpenDP 0.16: claims from Measurement.map(d_in) under its input metric and output measure
    sampled("opendp.sum-laplace", opendp_sum_laplace, samples=300_000, requires=OPENDP,
            description="float sum over [0, 1] + Laplace(1), SymmetricDistance d_in=1 (add-remove), ε = map(1)"),
    sampled("opendp.count", opendp_count, samples=200_000, requires=OPENDP,
            description="count + discrete Laplace(1), SymmetricDistance d_in=1 (add-remove)"),
    sampled("opendp.histogram", opendp_histogram, samples=40_000, requires=OPENDP,
            description="count_by_categories {0, 1} + discrete Laplace(1), add-remove"),
    sampled("opendp.sized-mean", opendp_sized_mean, samples=20_000, requires=OPENDP,
            description="mean of 10 records in [0, 1] (size known) + Laplace(0.1), d_in=2 (one record replaced)"),
    sampled("opendp.randomized-response", opendp_randomized_response, samples=100_000, requires=OPENDP,
            description="randomized response on a bool, p = 0.75, DiscreteDistance: ε = ln 3"),
    sampled("opendp.gaussian-zcdp", opendp_gaussian_zcdp, samples=20_000, requires=OPENDP,
            description="float sum + Gaussian(1): ρ-zCDP with ρ = 0.5, audited as (ε, δ) at δ = 1e-3"),
    sampled("opendp.histogram.replace", lambda: opendp_histogram(neighbours="replace"), samples=60_000,
            expected="refuted", requires=OPENDP,
            description="control: the histogram's map(1) (one record added/removed) claimed for one record replaced: true ε = 2"),
    sampled("opendp.clamping-skipped", lambda: opendp_sum_laplace(domain=(0.0, 2.0)), samples=80_000,
            expected="refuted", requires=OPENDP,
            description="control: sum declared over [0, 1] fed records in [0, 2] without then_clamp: true ε = 2"),
    # diffprivlib 0.6.6: epsilon/bounds as the library takes them; random_state from the audit's seed
    sampled("diffprivlib.mean", lambda: dpl("tools.mean", epsilon=1.0, bounds=(0, 1))().idealised(),
            samples=10_000, requires=DIFFPRIVLIB,
            description="tools.mean, bounds (0, 1): sensitivity (hi − lo)/n, one record replaced; "
                        "idealised (the claim over the reals: its doubles are porous, the next audit)"),
    sampled("diffprivlib.mean.float-porosity", dpl("tools.mean", epsilon=1.0, bounds=(0, 1)),
            samples=100_000, expected="refuted", requires=DIFFPRIVLIB,
            description="tools.mean as it ships, float64 outputs: mean + Laplace noise in doubles reaches "
                        "different sets of doubles from D and D' (Mironov 2012), so no ε holds on doubles"),
    sampled("diffprivlib.median", dpl("tools.median", epsilon=1.0, bounds=(0, 1)), samples=10_000,
            requires=DIFFPRIVLIB, description="tools.median (exponential mechanism over intervals), one record replaced"),
    sampled("diffprivlib.count_nonzero", dpl("tools.count_nonzero", epsilon=1.0), samples=10_000,
            requires=DIFFPRIVLIB, description="tools.count_nonzero, one record replaced (size public)"),
    sampled("diffprivlib.histogram", dpl("tools.histogram", epsilon=1.0, bins=2, range=(0, 1)), samples=10_000,
            requires=DIFFPRIVLIB, description="tools.histogram, 2 bins: geometric noise per bin, one record added or removed"),
    sampled("diffprivlib.laplace", dpl("mechanisms.Laplace", epsilon=1.0, sensitivity=1.0), samples=200_000,
            expected="refuted", requires=DIFFPRIVLIB,
            description="mechanisms.Laplace(epsilon=1, sensitivity=1) on one value: its float64 outputs are "
                        "porous (Mironov 2012), 0 and 1 reach different doubles (float-structure events)"),
    sampled("diffprivlib.geometric", dpl("mechanisms.Geometric", epsilon=1.0, sensitivity=1), samples=200_000,
            requires=DIFFPRIVLIB, description="mechanisms.Geometric(epsilon=1, sensitivity=1) on one integer value"),
    sampled("diffprivlib.sum.add-remove", dpl("tools.sum", epsilon=1.0, bounds=(0, 1), neighbours="add-remove"),
            samples=10_000, expected="refuted", requires=DIFFPRIVLIB,
            description="control: tools.sum under add-remove: the output is clamped to [0, n], so n leaks (true ε = ∞)"),
    sampled("diffprivlib.count_nonzero.add-remove", dpl("tools.count_nonzero", epsilon=1.0, neighbours="add-remove"),
            samples=10_000, expected="refuted", requires=DIFFPRIVLIB,
            description="control: tools.count_nonzero under add-remove: clamped to [0, n] (true ε = ∞)"),
    sampled("diffprivlib.histogram.replace",
            dpl("tools.histogram", epsilon=1.0, bins=2, range=(0, 1), neighbours="replace"), samples=40_000,
            expected="refuted", requires=DIFFPRIVLIB,
            description="control: tools.histogram claimed for one record replaced: two bins move (true ε = 2)"),
    sampled("diffprivlib.sensitivity-halved", dpl_sensitivity_halved, samples=100_000, expected="refuted",
            requires=DIFFPRIVLIB, description="control: mechanisms.Laplace told sensitivity 0.5 for a sum of sensitivity 1 (true ε = 2)"),
    # python-dp 1.1.5: its own randomness; one quick_result per dataset on a fresh algorithm
    sampled("pydp.laplace", pydp("LaplaceMechanism", epsilon=1.0, sensitivity=1.0), samples=300_000,
            requires=PYDP, description="LaplaceMechanism(epsilon=1, sensitivity=1).add_noise on one value"),
    sampled("pydp.count", pydp("Count", epsilon=1.0, dtype="float"), samples=400_000, requires=PYDP,
            description="Count(epsilon=1): one record added or removed"),
    sampled("pydp.bounded-sum", pydp("BoundedSum", epsilon=1.0, lower_bound=0, upper_bound=1, dtype="float"),
            samples=200_000, requires=PYDP, description="BoundedSum over [0, 1], one record added or removed"),
    sampled("pydp.bounded-mean", pydp("BoundedMean", epsilon=1.0, lower_bound=0, upper_bound=1, dtype="float"),
            samples=50_000, requires=PYDP, description="BoundedMean over [0, 1] (ε split between a sum and a count)"),
    sampled("pydp.median", pydp("Median", epsilon=1.0, lower_bound=0, upper_bound=1, dtype="float"),
            samples=20_000, requires=PYDP, description="Median over [0, 1] (a quantile tree)"),
    sampled("pydp.sensitivity-halved", pydp_sensitivity_halved, samples=100_000, expected="refuted", requires=PYDP,
            description="control: LaplaceMechanism told sensitivity 0.5 for a sum of sensitivity 1 (true ε = 2)"),
    sampled("pydp.clamping-skipped", pydp_clamping_skipped, samples=100_000, expected="refuted", requires=PYDP,
            description="control: LaplaceMechanism(sensitivity=1) on a sum of unclamped records in [0, 2] (true ε = 2)"),
]
