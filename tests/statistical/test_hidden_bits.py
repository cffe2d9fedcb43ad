"""Data written into the bits of an output (a hostile review's finding, 2026-12-06): a noisy value
whose middle mantissa bits carry the data, or a noisy count with |D| mod 2 in bit 4, passed as NOT
REFUTED, since no threshold, interval or rounding cell of the value holds such an event. The
float64 question now screens each mantissa bit (the integer logic each bit of a wide integer) on
its fitting sample, and validates the bits that differ most.

α: each mechanism below sets a bit deterministically from the data, so the event has probability
0 on one dataset and 1 (or 1/2) on the other; at the samples given a refutation fails with
probability below 1e-50. One fixed seed each, no retry."""

from __future__ import annotations

import numpy as np
import pytest

import dpaudit
from dpaudit.estimators.floats import revealing_bits
from dpaudit.estimators.scores import IntBit
from dpaudit.execution.base import InProcessExecutor
from dpaudit.report.findings import HIDDEN_BIT_FIX, float_fix

pytestmark = pytest.mark.statistical

CLAIM = dict(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)


@dpaudit.mechanism(**CLAIM)
def bit20(data, rng):
    """Laplace noise whose mantissa bit 20 is |D| mod 2."""
    b = np.array([rng.laplace(scale=1.0)]).view(np.uint64)
    b[:] = (b & ~np.uint64(1 << 20)) | (np.uint64(len(data) % 2) << np.uint64(20))
    return float(b.view(np.float64)[0])


@dpaudit.mechanism(**CLAIM)
def payload(data, rng):
    """Laplace noise whose mantissa bits 8..39 carry round(sum · 10⁶): the sum, to 10⁻⁶."""
    b = np.array([rng.laplace(scale=1.0)]).view(np.uint64)
    mask = np.uint64(0xFFFFFFFF) << np.uint64(8)
    word = np.uint64(int(round(float(np.sum(data)) * 1e6)) & 0xFFFFFFFF) << np.uint64(8)
    b[:] = (b & ~mask) | word
    return float(b.view(np.float64)[0])


@dpaudit.mechanism(**CLAIM)
def count_bit4(data, rng):
    """A count with two-sided geometric noise of scale 10⁷ whose bit 4 is |D| mod 2."""
    n = int(rng.geometric(1e-7)) - int(rng.geometric(1e-7))
    return (n & ~16) | ((len(data) % 2) << 4)


@dpaudit.mechanism(**CLAIM)
def bit49(data, rng):
    """Laplace noise whose mantissa bit 49 (the third from the top) is |D| mod 2: a comb of
    intervals in every binade, no threshold's event."""
    b = np.array([rng.laplace(scale=1.0)]).view(np.uint64)
    b[:] = (b & ~np.uint64(1 << 49)) | (np.uint64(len(data) % 2) << np.uint64(49))
    return float(b.view(np.float64)[0])


@pytest.mark.parametrize("mech", [bit20, payload, bit49], ids=["bit 20", "bits 8-39", "bit 49"])
def test_a_payload_in_the_mantissa_is_refuted_and_named_a_hidden_bit(mech):
    r = dpaudit.audit(mech, samples=40_000, seed=7, executor=InProcessExecutor())
    f = r.findings["float"]
    assert r.refuted and f.refuted and f.epsilon_lower_bound > 4
    ev = f.counterexample.event
    assert ev["reason"] == "hidden-bit" and ev["family"] == "bit" and 0 <= ev["bit"] < 52
    assert "(a hidden bit: " in ev["text"]
    assert float_fix(f.to_record(), r.to_record()) == HIDDEN_BIT_FIX
    # the report's sentence names the bit, not the binade and trailing zeros of porosity
    from dpaudit.report import make_run, render_html

    html = render_html(make_run([r.to_record()], seed=7, started=0, finished=1, command="c", git=False),
                       plots=False)
    assert f"(the value of mantissa bit {ev['bit']}, a bit the data sets)" in html


def test_a_payload_in_a_wide_integer_is_refuted_by_the_logic():
    r = dpaudit.audit(count_bit4, samples=40_000, seed=7, executor=InProcessExecutor())
    # refuted by the betting look, plainly, from its 2,500 samples (a sampled look of 3,200
    # had bounded it above 4; the betting look's bound is its confidence sequence's)
    assert r.refuted and r.findings["logic"].refuted and r.epsilon_lower_bound > 3
    assert r.strength.p_value <= 1e-3
    ev = r.counterexample.event
    assert ev["score"] == {"kind": "integer-bit", "bit": 4}


def test_honest_noise_has_no_revealing_bit():
    # α: two samples of 5,000 from one law; each of the 52 bits passes the 4-sd screen with
    # probability 6e-5, so some bit with probability about 0.003. Fixed seed, no retry.
    rng = np.random.default_rng(20261206)
    a, b = rng.laplace(size=5000), rng.laplace(size=5000)
    assert revealing_bits(a, b) == []
    ia = rng.geometric(1e-7, 5000) - rng.geometric(1e-7, 5000)
    ib = rng.geometric(1e-7, 5000) - rng.geometric(1e-7, 5000)
    assert revealing_bits(ia.astype(float), ib.astype(float), integer=True) == []
    # the screen can fail: a count whose bit 4 is fixed on one sample is found
    assert revealing_bits(ia.astype(float), (ib | 16).astype(float), integer=True) == [4]


def test_the_integer_bit_score_reads_twos_complement_and_leaves_non_integers_out():
    s = IntBit(4)
    y = np.array([16.0, 15.0, -16.0, -1.0, np.nan, np.inf])
    out = s(y)
    assert out[:4].tolist() == [1.0, 0.0, 1.0, 1.0] and np.isnan(out[4:]).all()


# ------------------------------------------------------------------ the report's plots

KEY = "$" + "{" * 2000 + "x" + "}" * 2000 + "$"


@dpaudit.mechanism(**CLAIM)
def keyed(data, rng):
    """A dict output whose key is mathtext that recursed matplotlib's parser (hostile review)."""
    return {KEY: float(len(data) % 2) + float(rng.laplace(scale=0.01)), "other": 1.0}


def test_a_key_written_as_mathtext_is_drawn_as_text_and_the_report_is_written():
    from dpaudit.report import make_run, render_html

    r = dpaudit.audit(keyed, samples=20_000, seed=7, executor=InProcessExecutor())
    assert r.refuted
    html = render_html(make_run([r.to_record()], seed=7, started=0, finished=1, command="c", git=False))
    assert html.count("<svg") >= 1  # the plots are there, their text not parsed as mathtext
    assert "{{{{{" in html  # the key as the text it is


def test_a_weak_payload_is_screened_beside_the_bits_a_shifted_value_moves():
    # α: 20,000 values a side, fixed seed, no retry. A Laplace at 100 against 101 moves its top
    # mantissa bits (honestly: a value event); a payload in bit 20, 1 with probability 0.45 on
    # one side and 0.55 on the other (z ≈ 14 within its strata), must still get a slot
    # (unconditional frequencies ranked it behind bits 48 and 46, and two slots held those)
    rng = np.random.default_rng(20261206)
    a, b = 100 + rng.laplace(size=20_000), 101 + rng.laplace(size=20_000)

    def with_bit(x, k, ones):
        u = x.copy().view(np.uint64)
        u[:] = (u & ~np.uint64(1 << k)) | (ones.astype(np.uint64) << np.uint64(k))
        return u.view(np.float64)

    pa = with_bit(a, 20, rng.random(20_000) < 0.45)
    pb = with_bit(b, 20, rng.random(20_000) < 0.55)
    assert 20 in revealing_bits(pa, pb)
    assert 20 not in revealing_bits(a, b)  # the same values without the payload
