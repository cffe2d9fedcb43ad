"""Soundness of the curve audit: a correct mechanism is refuted at most at the stated rate.

α of the test: each curve audit of a correct mechanism at 95% confidence refutes it with
probability at most 0.05 (every bound of its band holds at once with probability ≥ 0.95, and a
refutation needs one to fail), so the number of refutations among 20 independent seeded audits
is stochastically at most Bin(20, 0.05), and P(Bin(20, 0.05) > 3) = 0.0159. A sound audit
fails each of the two soundness tests below with probability below 1.6%; the seeds are fixed and
nothing is retried. The 100-audit versions (limit 10, α = 0.0115) run in
``benchmarks/size_and_power.py``, which imports them from here.

The mechanism is the Gaussian mechanism with σ = 1 on a pair at distance 1, audited against its
own exact curve (1-GDP): the claim is tight at every ε, the hardest case for soundness. The test
must also be able to fail: the same 100 audits with a deliberately broken band (the lower curve
taken from the validation frequencies themselves, no confidence bound) refute far more often
than 3 times in 20 (94 of 100 when written).
"""

import multiprocessing
import os

import numpy as np
import pytest

from dpaudit.curves import audit as engine
from dpaudit.curves import band as bands
from dpaudit.curves import curve_audit

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

LIMIT = 3
AUDITS = 20
SEEDS = range(1000, 1000 + AUDITS)
SAMPLES = 20_000


def gauss(data, rng, size=None):
    """Exactly 1-GDP on linf neighbours of size 1 (sensitivity 1, σ = 1)."""
    return data[0] + rng.normal(0.0, 1.0, size=size)


_TASK: dict = {}


def _refuted(seed: int) -> bool:
    r = curve_audit(gauss, mu=1.0, neighbours="linf", domain=(0, 1), size=1, samples=SAMPLES,
                    confidence=0.95, seed=seed, band=_TASK["band"])
    assert r.error is None
    return r.refuted


def refuted_seeds(band: str, seeds: range = SEEDS) -> list[bool]:
    """Whether each seeded audit refutes the correct claim, in seed order. The audits are
    independent and each is seeded, so they run in two forked processes (a fork inherits any
    monkeypatched code); the results are the ones a single process gives."""
    _TASK["band"] = band
    with multiprocessing.get_context("fork").Pool(min(2, os.cpu_count() or 1)) as pool:
        return list(pool.map(_refuted, seeds, chunksize=5))


def refutations(band: str, seeds: range = SEEDS) -> int:
    return sum(refuted_seeds(band, seeds))


def test_correct_gaussian_refuted_at_most_3_of_20_cp_band():
    assert refutations("cp") <= LIMIT


def test_correct_gaussian_refuted_at_most_3_of_20_dkw_band():
    assert refutations("dkw") <= LIMIT


def _plug_in(thresholds, orientation, x_d, x_p, n_d, n_p, alpha):
    """BROKEN on purpose: the validation frequencies as their own bounds (no confidence)."""
    a, b = np.asarray(x_d, dtype=float) / n_d, np.asarray(x_p, dtype=float) / n_p
    return bands.events_of(np.asarray(thresholds, dtype=float), a, b,
                         {"a_lo": a, "a_hi": a, "b_lo": b, "b_hi": b},
                         np.asarray(orientation, dtype=int), n_d, n_p, "cp", alpha)


def break_band(monkeypatch) -> None:
    monkeypatch.setattr(engine, "cp_events", _plug_in)


def test_the_test_can_fail_a_band_without_confidence_refutes_often(monkeypatch):
    """Power of the test against the mistake it guards against: a lower curve that is no
    confidence bound. α as above (this asserts the opposite, > 3, of a count that is far above)."""
    break_band(monkeypatch)
    assert refutations("cp") > LIMIT
