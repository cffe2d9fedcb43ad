"""The replay engine (dpaudit/replay/): each finding kind on a tiny mechanism, call sites in this
file, the call budget, the ERROR path, and the record's common keys. Fixed seeds, no retries."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpaudit.replay import RecordingGenerator, primitive, replay_audit, replay_pair
from dpaudit.results import Verdict

SEED = 20261122
HERE = __file__


def _line(marker: str) -> int:
    """The line of this file that carries ``# site: marker``."""
    with open(HERE, encoding="utf-8") as fh:
        for i, text in enumerate(fh, start=1):
            if text.rstrip().endswith(f"# site: {marker}"):
                return i
    raise AssertionError(marker)


def _audit(f, **kw):
    claim = dict(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=6, seed=SEED)
    claim.update(kw)
    return replay_audit(f, **claim)


def _one(result, kind):
    found = result.of(kind)
    assert found, f"no {kind} in {result}"
    return found[0]


@primitive(sensitivity="sens", epsilon="eps", input="x", distribution="laplace")
def laplace_primitive(x, sens, eps, rng):
    return x + rng.laplace(scale=sens / eps)


# -- the finding kinds ------------------------------------------------------------------------------

def test_a_declared_sensitivity_exceeded_refutes_at_the_call_site():
    def unclipped_sum(data, rng):
        np.clip(data, 0.0, 0.5)                                      # clipped, then not used
        return float(laplace_primitive(data.sum(), 0.5, 1.0, rng))  # site: unclipped

    r = _audit(unclipped_sum)
    assert r.verdict is Verdict.REFUTED
    f = _one(r, "sensitivity_exceeded")
    assert f.severity == "violation"
    assert f.site.path == HERE and f.site.line == _line("unclipped")
    assert f.values["sensitivity"] == 0.5 and f.values["shift"] > 0.5
    assert "declared sensitivity exceeded" in f.message and "excess" in f.message


@pytest.mark.slow
def test_data_dependent_control_flow_names_where_the_runs_part():
    def branchy(data, rng):
        if len(data) > 3:
            return data.sum() + rng.laplace(scale=1.0)   # site: big
        return data.sum() + rng.laplace(scale=2.0)       # site: small

    r = _audit(branchy)
    assert r.verdict is Verdict.INCONCLUSIVE
    f = _one(r, "data_dependent_control_flow")
    assert f.severity == "finding"
    assert f.site.line in (_line("big"), _line("small"))
    assert {f.values["D"]["site"]["line"], f.values["D_prime"]["site"]["line"]} == \
        {_line("big"), _line("small")}
    assert "data-dependent control flow" in f.message


@pytest.mark.slow
def test_a_data_dependent_noise_scale_is_a_finding_of_its_own():
    def mean_with_own_n(data, rng):
        n = max(len(data), 1)
        return data.sum() / n + rng.laplace(scale=1.0 / n)   # site: scale

    r = _audit(mean_with_own_n)
    # the release reveals the noised value, so the exact loss of two Laplace laws of different
    # scales decides: unbounded (tests/unit/test_replay_exact.py); the finding is still named
    assert r.verdict is Verdict.REFUTED and r.of("exact_loss_exceeded")
    f = _one(r, "data_dependent_noise_scale")
    assert f.site.line == _line("scale")
    assert "scale" in f.values["parameters"]


@pytest.mark.slow
def test_a_noisy_value_rescaled_by_the_data_is_a_noise_scale_finding():
    def divided_after_noise(data, rng):
        noisy = np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0)
        return noisy / max(len(data), 1)                  # site: rescale

    r = _audit(divided_after_noise)
    f = _one(r, "data_dependent_noise_scale")
    assert f.site.line == _line("rescale")
    assert f.values["operation"] in ("divide", "true_divide") and "divided by" in f.message


@pytest.mark.slow
def test_an_accounting_excess_by_composition_is_a_note_only():
    def double_spend(data, rng):
        s = np.clip(data, 0, 1).sum()
        # the sum of two noisy values: not injective, so composition stays an upper bound
        return (s + rng.laplace(scale=1.0)) + (len(data) + rng.laplace(scale=1.0))

    r = _audit(double_spend)
    assert r.verdict is Verdict.NOT_REFUTED
    f = _one(r, "composition_excess")
    assert f.severity == "note"
    assert f.values["epsilon_supported"] == pytest.approx(2.0)
    assert "not an ε lower bound" in f.message
    assert r.accounting["composition"]["epsilon"] == pytest.approx(2.0)
    assert not r.of("exact_loss_exceeded")


def test_two_released_noisy_values_refute_with_the_sum_of_their_losses():
    def double_spend(data, rng):
        s = np.clip(data, 0, 1).sum()
        return (s + rng.laplace(scale=1.0), len(data) + rng.laplace(scale=1.0))

    r = _audit(double_spend)
    assert r.verdict is Verdict.REFUTED
    f = _one(r, "exact_loss_exceeded")
    assert f.severity == "violation"
    assert f.values["epsilon_exact"] == pytest.approx(2.0) and f.values["exact"] is True
    assert not r.of("composition_excess")


def test_a_correct_laplace_sum_has_no_finding():
    def laplace_sum(data, rng):
        return float(np.clip(data, 0.0, 1.0).sum() + rng.laplace(scale=1.0))

    r = _audit(laplace_sum)
    assert r.verdict is Verdict.NOT_REFUTED
    assert r.findings == ()
    assert r.accounting["composition"]["epsilon"] == pytest.approx(1.0)
    row = r.accounting["calls"][0]
    assert row["distribution"] == "laplace" and row["input_observed"] == "arithmetic"


@pytest.mark.slow
def test_a_correct_gaussian_mean_has_no_finding():
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) / 1.0

    def gaussian_mean(data, rng):
        return (np.clip(data, 0.0, 1.0).sum() + rng.normal(0.0, sigma)) / 6.0   # public n

    r = _audit(gaussian_mean, delta=1e-5)
    assert r.verdict is Verdict.NOT_REFUTED
    assert r.findings == ()
    comp = r.accounting["composition"]
    assert comp["epsilon"] < 1.0 and "exact Gaussian" in comp["conversion"]
    assert comp["rho"] == pytest.approx(comp["mu"] ** 2 / 2)


@pytest.mark.slow
def test_data_released_without_noise_is_confirmed_by_a_perturbed_replay():
    def half_noised(data, rng):
        out = np.clip(np.asarray(data, dtype=float), -1.0, 1.0)
        out[:3] = out[:3] + rng.laplace(scale=1.0, size=3)
        return out                                         # site: release

    r = _audit(half_noised, neighbours="linf", domain=(-1.0, 1.0), size=6, epsilon=6.0)
    f = _one(r, "unnoised_release")
    assert f.site.line == _line("release")
    assert all(c["coordinate"] >= 3 for c in f.values["coordinates"])


def test_a_release_without_noise_is_placed_at_the_return_that_ran():
    """With two return lines the site is the one the call returned from (read by a profile hook;
    a function with one return line has it read from its bytecode)."""
    def two_returns(data, rng):
        out = np.clip(np.asarray(data, dtype=float), -1.0, 1.0)
        if len(out) > 100:
            return out + rng.laplace(scale=1.0, size=len(out))   # site: never
        out[:3] = out[:3] + rng.laplace(scale=1.0, size=3)
        return out                                                # site: ran

    r = _audit(two_returns, neighbours="linf", domain=(-1.0, 1.0), size=6, epsilon=6.0)
    f = _one(r, "unnoised_release")
    assert f.site.line == _line("ran") != _line("never")


@pytest.mark.slow
def test_noise_of_scale_zero_is_a_release_without_noise():
    def zero_noise(data, rng):
        return np.clip(data, 0, 1).sum() + rng.laplace(scale=0.0)   # site: zero

    f = _one(_audit(zero_noise), "unnoised_release")
    assert f.site.line == _line("zero") and f.values["scale"] == 0.0


@pytest.mark.slow
def test_one_draw_added_to_two_moving_values_is_noise_reuse():
    def reused(data, rng):
        z = rng.laplace(scale=2.0)
        return (np.clip(data, 0, 1).sum() + z, len(data) + z)   # site: reuse

    f = _one(_audit(reused), "noise_reuse")
    assert f.site.line == _line("reuse")


@pytest.mark.slow
def test_a_public_constant_added_twice_to_one_draw_is_not_reuse():
    def threshold_twice(data, rng):
        rho = rng.laplace(scale=2.0)
        x = np.clip(data, 0, 1)
        a = x.sum() + rng.laplace(scale=4.0) >= 3.0 + rho
        b = x.sum() + rng.laplace(scale=4.0) >= 3.0 + rho
        return (bool(a), bool(b))

    assert not _audit(threshold_twice).of("noise_reuse")


@pytest.mark.slow
def test_a_nan_through_a_clamp_is_found_with_nonfinite_records():
    def nan_clamp(data, rng):
        total = 0.0
        for e in data:
            total += e if not (e > 1.0 or e < -1.0) else (1.0 if e > 1.0 else -1.0)
        return float(laplace_primitive(total, 1.0, 1.0, rng))   # site: nan

    assert not _audit(nan_clamp, domain=(-1.0, 1.0)).refuted
    r = _audit(nan_clamp, domain=(-1.0, 1.0), nonfinite=True)
    f = _one(r, "sensitivity_exceeded")
    assert f.site.line == _line("nan") and "NaN" in f.message


def test_noise_the_replay_cannot_see_is_a_limit():
    def own_generator(data, rng):
        return float(data.sum() + np.random.default_rng().laplace(scale=1.0))

    r = _audit(own_generator, budget=40)
    assert r.verdict is Verdict.INCONCLUSIVE
    assert {"no_noise_intercepted", "outside_randomness"} <= r.kinds()
    assert not r.noise_intercepted


@pytest.mark.slow
def test_the_exponential_mechanism_is_accounted_exactly():
    def exponential(data, rng):
        u = np.array([np.sum(np.clip(data, 0, 1) >= t) for t in (0.0, 0.5)], dtype=float)
        w = np.exp((u - u.max()) / 2.0)
        return int(rng.choice(2, p=w / w.sum()))

    r = _audit(exponential)
    assert r.verdict is Verdict.NOT_REFUTED and not r.of("composition_excess")
    assert r.accounting["calls"][0]["distribution"] == "categorical"
    assert 0.0 < r.accounting["composition"]["epsilon"] <= 1.0


@pytest.mark.slow
def test_poisson_subsampling_is_frozen_record_by_record():
    def dpsgd(data, rng):
        batch = np.clip(data[rng.random(len(data)) < 0.5], 0, 1)
        return (batch.sum() + rng.normal(scale=1.0)) / 3.0

    r = _audit(dpsgd, delta=1e-5, epsilon=5.0)
    assert r.verdict is Verdict.NOT_REFUTED
    assert "per_record_draws" in r.kinds()
    assert r.accounting["composition"]["mu"] <= 1.0 + 1e-12


@pytest.mark.slow
def test_a_sparse_vector_is_not_refuted():
    def above_threshold(data, rng):
        rho = rng.laplace(scale=2.0)
        for i, t in enumerate((0.2, 0.5, 0.8)):
            if np.sum(np.clip(data, 0, 1) >= t) + rng.laplace(scale=4.0) >= 2.0 + rho:
                return i
        return -1

    r = _audit(above_threshold)
    assert r.verdict is not Verdict.REFUTED
    assert not [f for f in r.findings if f.severity == "violation"]


# -- cost, errors, records ---------------------------------------------------------------------------

@pytest.mark.slow
def test_the_default_budget_bounds_the_calls_at_200():
    calls = {"n": 0}

    def counted(data, rng):
        calls["n"] += 1
        return float(np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0))

    r = _audit(counted, size=10)
    assert r.budget == 200
    assert r.calls == calls["n"] <= 200
    calls["n"] = 0
    small = _audit(counted, budget=30)
    assert small.calls == calls["n"] <= 30


def test_a_mechanism_that_raises_is_an_error_result_not_a_traceback():
    def broken(data, rng):
        if len(data) == 0:
            raise ZeroDivisionError("no records")
        return data.sum() + rng.laplace(scale=1.0)

    r = _audit(broken)
    assert r.verdict is Verdict.ERROR
    assert "ZeroDivisionError: no records" in r.error
    assert r.failed_on == ()
    rec = r.to_record()
    assert rec["verdict"] == "error" and rec["failed_on"] == []


def test_the_record_has_the_common_keys_and_is_json():
    def laplace_sum(data, rng):
        return float(np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0))

    r = _audit(laplace_sum, budget=40)
    rec = json.loads(json.dumps(r.to_record(), allow_nan=False))
    for key in ("kind", "target", "verdict", "elapsed_s", "reproduce", "error"):
        assert key in rec
    assert rec["kind"] == "replay" and rec["claim"]["neighbours"] == "add-remove"
    assert rec["reproduce"].startswith("dpaudit.replay_audit(") and f"seed={SEED}" in rec["reproduce"]


@pytest.mark.slow
def test_a_finding_record_names_the_pair_and_a_line_that_replays_it():
    def mean_with_own_n(data, rng):
        n = max(len(data), 1)
        return data.sum() / n + rng.laplace(scale=1.0 / n)

    r = _audit(mean_with_own_n)
    f = _one(r, "data_dependent_noise_scale")
    assert (f.dataset, f.neighbour, f.kind) in r.candidates()
    again = replay_pair(mean_with_own_n, f.dataset, f.neighbour, epsilon=1.0,
                        neighbours="add-remove", domain=(0.0, 1.0))
    assert "data_dependent_noise_scale" in again.kinds()
    assert f.to_record()["site"]["line"] == f.site.line


@pytest.mark.slow
def test_the_same_seed_gives_the_same_audit():
    def laplace_mean(data, rng):
        return float(np.clip(data, 0, 1).sum() / 6.0 + rng.laplace(scale=0.1))

    a, b = _audit(laplace_mean), _audit(laplace_mean)
    assert (a.calls, a.pairs, a.accounting) == (b.calls, b.pairs, b.accounting)
    assert [f.message for f in a.findings] == [f.message for f in b.findings]


# -- the pieces outside an audit ------------------------------------------------------------------

def test_a_primitive_outside_an_audit_is_the_function_itself():
    rng = np.random.default_rng(3)
    expected = 5.0 + np.random.default_rng(3).laplace(scale=2.0)
    assert laplace_primitive(5.0, 1.0, 0.5, rng) == expected


def test_the_recording_generator_is_a_generator_and_plain_outside_a_run():
    g = RecordingGenerator(np.random.PCG64(7))
    plain = np.random.Generator(np.random.PCG64(7))
    assert isinstance(g, np.random.Generator)
    assert g.laplace(scale=2.0) == plain.laplace(scale=2.0)
    assert np.array_equal(g.choice(10, size=3), plain.choice(10, size=3))
    assert all(isinstance(c, RecordingGenerator) for c in g.spawn(2))


def test_bad_arguments_raise_invalid_argument():
    from dpaudit.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        primitive(sensitivity="missing")(lambda x: x)
    with pytest.raises(InvalidArgument):
        _audit(lambda data, rng: 0.0, nonfinite="yes")
    with pytest.raises(InvalidArgument):
        _audit(lambda data, rng: 0.0, budget=2)


def test_diffprivlib_mechanisms_are_recorded_without_edits():
    pytest.importorskip("diffprivlib")
    from diffprivlib.mechanisms import Laplace

    def lower_bound_twice(data, rng):
        mech = Laplace(epsilon=1.0, sensitivity=max(abs(0.0), abs(0.0)) ** 2,
                       random_state=int(rng.integers(2**31)))
        return mech.randomise(float(np.sum(np.clip(data, 0, 1) ** 2)))   # site: dpl

    r = _audit(lower_bound_twice, neighbours="replace")
    f = _one(r, "sensitivity_exceeded")
    assert f.site.line == _line("dpl") and f.values["method"] == "Laplace"
    assert "diffprivlib" in r.libraries
    assert Laplace.randomise.__name__ == "randomise" and not hasattr(Laplace.randomise, "__wrapped__")


@pytest.mark.slow
def test_the_check_command_helper_writes_a_replay_record_or_an_error_record():
    from types import SimpleNamespace

    from dpaudit.replay.command import run_replay
    from dpaudit.spec import MechanismSpec

    def laplace_sum(data, rng):
        return float(np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0))

    def broken(data, rng):
        raise ZeroDivisionError("division by zero")

    settings = SimpleNamespace(seed=SEED)
    claim = {"epsilon": 1.0, "neighbours": "add-remove", "domain": (0.0, 1.0), "size": 4}
    spec = MechanismSpec.from_function(laplace_sum, name="f.py:laplace_sum", **claim)
    rec = run_replay(spec, settings, "f.py:laplace_sum", func=laplace_sum, isolation="none").to_record()
    assert (rec["kind"], rec["verdict"], rec["target"], rec["isolation"]) == \
        ("replay", "not_refuted", "f.py:laplace_sum", "none")
    assert rec["reproduce"].startswith("dpaudit check f.py:laplace_sum --replay --epsilon=1 ")
    spec = MechanismSpec.from_function(broken, name="f.py:broken", **claim)
    failed = run_replay(spec, settings, "f.py:broken", func=broken).to_record()
    assert failed["verdict"] == "error" and "ZeroDivisionError" in failed["error"]
    assert failed["reproduce"].startswith("dpaudit check f.py:broken --replay")


@primitive(sensitivity=1.0, epsilon=0.5, delta=1e-5, input="x", distribution="gaussian")
def gaussian_primitive(x, rng):
    return x + rng.normal(scale=9.7)   # σ = sqrt(2 ln(1.25/δ))/ε for Δ = 1: (0.5, 1e-5)-DP


def test_a_declared_primitive_within_its_sensitivity_up_to_rounding_spends_what_it_declares():
    """A correct (ε, δ) primitive on a clipped sum: on the float-rounding pair (one record 1.0
    among ½-ulp ones) its input moves by 1 + 2⁻⁵² of the sensitivity 1, which the sensitivity
    check allows as rounding, and the accounting called an ε = inf spent (a diffprivlib
    Gaussian's "accounting excess by composition … ε = inf" note on correct code)."""
    def clipped_sum(data, rng):
        return float(gaussian_primitive(np.clip(data, 0.0, 1.0).sum(), rng))

    r = _audit(clipped_sum, epsilon=0.5, delta=1e-5, size=10)
    assert not r.of("composition_excess") and not r.of("sensitivity_exceeded"), r.findings


def test_a_composition_note_just_above_the_claim_shows_the_digits_that_differ():
    """A noise scale 10⁻⁷ short of 1/ε: the note read "supports ε = 1 on this pair, above the
    claimed ε = 1" (six digits of 1.0000001)."""
    def nearly(data, rng):
        return float(np.clip(data, 0.0, 1.0).sum() + rng.laplace(scale=0.9999999))

    f = _one(_audit(nearly), "composition_excess")
    assert "supports ε = 1.0000001 on this pair, above the claimed ε = 1:" in f.message, f.message


def test_no_noise_intercepted_says_the_sampled_audit_decides():
    """A constant release (no noise at all): the limit told the user to "audit it by sampling
    (dpaudit check without --replay)" in the stage of a dpaudit check that then did just that,
    and said the noise "comes from elsewhere" where there was none."""
    result = _audit(lambda data, rng: float("nan"))
    message = _one(result, "no_noise_intercepted").message
    assert "any noise the mechanism adds comes from elsewhere" in message
    assert "the sampled audit decides" in message and "without --replay" not in message


def test_a_composition_note_names_delta_when_delta_is_what_exceeds():
    # a diffprivlib GaussianAnalytic at (1, 0.01) under a claim of (1, 1e-4): the note said
    # "above the claimed ε = 1" beside ε = 1
    from types import SimpleNamespace

    from dpaudit.replay.compare import _composition_note  # private: the note's text alone

    notes = []
    _composition_note(SimpleNamespace(epsilon=1.0, delta=0.01), [], [], 1.0, 1e-4, notes)
    assert len(notes) == 1 and "supports ε = 1, δ = 0.01 on this pair, above the claimed δ = 0.0001 " \
        "(at ε = 1)" in notes[0].message
    notes = []
    _composition_note(SimpleNamespace(epsilon=2.0, delta=0.0), [], [], 1.0, 0.0, notes)
    assert "above the claimed ε = 1:" in notes[0].message


def test_an_output_of_integer_noise_is_not_called_a_release_without_noise():
    # a correct geometric count on a log scale: the perturbed replay moves floats only, so the
    # output stayed put and was "data released without noise" (INCONCLUSIVE, and a line on
    # every default check); a record with an integer draw confirms nothing that way now
    import math

    def log_count(data, rng):
        p = 1 - math.exp(-1.0)
        noisy = len(data) + int(rng.geometric(p)) - int(rng.geometric(p))
        return math.log(noisy) if noisy > 0 else float("nan")

    r = _audit(log_count, size=10)
    assert not r.of("unnoised_release") and r.verdict is Verdict.NOT_REFUTED
