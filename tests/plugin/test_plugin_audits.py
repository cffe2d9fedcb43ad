"""The plugin on real audits: items run the auditor, and the ``dpaudit_audit`` fixture audits a
user's own mechanism inside a test.

Sampled audits here use small budgets at the suite's 99.9% confidence; the broken variants are off
by a factor 4 in ε, far beyond what such budgets can miss (each check is deterministic given the
fixed seed; α = 0.001 per correct mechanism). They run pytest in a subprocess: an in-process
inner run would import numpy's extension modules a second time.
"""

import textwrap

import pytest

AUDITS = textwrap.dedent('''\
    from dpaudit.spec import MechanismSpec
    from dpaudit.suite import sampled

    def noisy_count(data, rng, size=None):
        return data.clip(0, 1).sum() + rng.laplace(scale=1.0, size=size)

    def too_little_noise(data, rng, size=None):
        return data.clip(0, 1).sum() + rng.laplace(scale=0.25, size=size)

    def spec(f):
        return MechanismSpec.from_function(f, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4,
                                           float_events=False)  # models over the reals

    AUDITS = [
        sampled("count.sampled", lambda: spec(noisy_count), samples=20_000),
        sampled("count.broken", lambda: spec(too_little_noise), samples=20_000, expected="refuted"),
        sampled("count.mislabelled", lambda: spec(too_little_noise), samples=20_000,
                description="a broken mechanism wrongly expected to pass"),
    ]
''')

USER_TESTS = textwrap.dedent('''\
    import dpaudit

    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4, float_events=False)
    def private_sum(data, rng, size=None):
        return data.sum() + rng.laplace(scale=1.0, size=size)

    def leaky_sum(data, rng, size=None):
        return data.sum() + rng.laplace(scale=0.25, size=size)

    def test_private(dpaudit_audit):
        result = dpaudit_audit(private_sum, samples=20_000)
        assert result.verdict.value == "not_refuted"

    def test_leaky(dpaudit_audit):
        dpaudit_audit(leaky_sum, epsilon=1.0, domain=(0, 1), size=4, samples=20_000)

    def test_leaky_is_caught(dpaudit_audit):  # the verdict as it is printed
        dpaudit_audit(leaky_sum, epsilon=1.0, domain=(0, 1), size=4, samples=20_000, expect="REFUTED")

    def test_missing_claim(dpaudit_audit):
        dpaudit_audit(leaky_sum, samples=20_000)

    def test_no_such_verdict(dpaudit_audit):
        dpaudit_audit(leaky_sum, epsilon=1.0, domain=(0, 1), size=4, expect="maybe")
''')


def test_audit_items_run_the_auditor_and_explain_failures(pytester):
    pytester.makepyfile(**{"audits/counts": AUDITS})
    result = pytester.runpytest_subprocess("--dpaudit", "audits", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*count.sampled PASSED*", "*count.broken PASSED*", "*count.mislabelled FAILED*",
        "*dpaudit audit count.mislabelled: expected NOT REFUTED, got REFUTED*",
        "*claim:     ε = 1 (pure DP), add-remove neighbours*",
        "*D:*", "*D':*", "*event S:*", "*P?M(D) in S? = * ?*, *?; P?M(D') in S? = * ?*, *?",
        "*reproduce: dpaudit audit audits/counts.py --id count.mislabelled --seed 20261122*",
    ])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.slow
def test_fixture_audits_a_users_mechanism(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-v", "--dpaudit-json", "fixture.json")
    result.assert_outcomes(passed=2, failed=3)
    out = result.stdout.str()
    assert "test_private PASSED" in out and "test_leaky_is_caught PASSED" in out
    result.stdout.fnmatch_lines([
        # named as dpaudit check names it (the fixture runs the check pipeline)
        "*dpaudit: test_user.py:leaky_sum: expected NOT REFUTED, got REFUTED*",
        "*finding:   ε ≥ * at *% confidence (claimed ε = 1) from * samples (the logic finding's; the run drew * at 95% over its findings)*",
        "*dpaudit: test_user.py:leaky_sum: no privacy claim: add --epsilon E*",
        # one line, where an enum's ValueError printed pytest's whole traceback
        "*dpaudit: expect must be one of refuted, not_refuted, *, got 'maybe'*",
    ])
    assert "Traceback" not in out
    import json
    run = json.loads((pytester.path / "fixture.json").read_text())
    assert [r["verdict"] for r in run["results"]] == ["not_refuted", "refuted", "refuted"]
    assert run["results"][1]["location"]["line"] == 7


FLOAT_TESTS = textwrap.dedent('''\
    import numpy as np
    import dpaudit
    from dpaudit.spec import MechanismSpec

    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4)
    def textbook(data, rng, size=None):
        return np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0, size=size)

    def test_idealised_spec_keeps_its_policy_when_a_claim_is_overridden(dpaudit_audit):
        r = dpaudit_audit(MechanismSpec.from_function(textbook).idealised(), size=5, samples=20_000)
        assert r.float_policy == "off" and r.findings["float"].verdict is None

    def test_the_keyword_overrides_the_decorator(dpaudit_audit):
        r = dpaudit_audit(textbook, float="warn", samples=20_000)
        assert r.float_policy == "warn" and r.findings["float"].refuted

    def test_the_default_refutes_the_porous_textbook_sum(dpaudit_audit):
        r = dpaudit_audit(textbook, samples=20_000, expect="refuted")
        assert r.decided_by == "float" and not r.findings["logic"].refuted
''')


@pytest.mark.slow
def test_the_fixture_follows_the_float_policy_rule(pytester):
    # α: the logic verdicts asserted are NOT REFUTED for a correct mechanism at the plugin's
    # 95% (fixed seed, no retry: wrong with probability ≤ 0.05 by design); the float64 refutation
    # of x + Laplace has ε_LB far above 1 in every run
    pytester.makepyfile(test_floats=FLOAT_TESTS)
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=3)
    pytester.makepyprojecttoml('[tool.dpaudit]\nfloat = "warn"\n')
    result = pytester.runpytest_subprocess("-v", "-k", "default_refutes")
    result.assert_outcomes(failed=1)  # the project's policy comes before the decorator's
    result.stdout.fnmatch_lines(["*expected REFUTED, got NOT REFUTED*"])


CURVE_TESTS = textwrap.dedent('''\
    import dpaudit

    @dpaudit.mechanism(mu=1.0, neighbours="linf", domain=(0, 1), size=1)
    def too_little_noise(data, rng, size=None):
        return data[0] + rng.normal(0.0, 0.5, size=size)

    @dpaudit.mechanism(mu=1.0, neighbours="linf", domain=(0, 1), size=1)
    def gaussian(data, rng, size=None):
        return data[0] + rng.normal(0.0, 1.0, size=size)

    def test_a_declared_curve_is_audited_over_the_curve(dpaudit_audit):
        r = dpaudit_audit(too_little_noise, samples=20_000, expect="refuted")
        assert r.mu_lower_bound > 1.0

    def test_a_correct_curve_passes(dpaudit_audit):
        dpaudit_audit(gaussian, samples=20_000)

    def test_the_keyword_states_the_curve(dpaudit_audit):
        dpaudit_audit(gaussian, mu=0.5, samples=20_000, expect="refuted")

    def test_a_refuted_curve_fails_the_test(dpaudit_audit):
        dpaudit_audit(too_little_noise, samples=20_000)
''')


@pytest.mark.slow
def test_the_fixture_audits_a_curve_claim(pytester):
    # α: the refuted mechanism is 2-GDP against 1-GDP (far beyond the 5%); the correct one is
    # exactly 1-GDP, NOT REFUTED with probability ≥ 0.95 by design (fixed seed, no retry)
    pytester.makepyfile(test_curves=CURVE_TESTS)
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*too_little_noise: expected NOT REFUTED, got REFUTED*",
                                 "*finding:   the mechanism's δ(ε) ≥ * μ ≥ *"])


SAME_RECORD_TESTS = textwrap.dedent('''\
    import json

    import dpaudit

    def leaky_sum(data, rng, size=None):
        return data.clip(0, 1).sum() + rng.laplace(scale=0.5, size=size)

    CLAIM = dict(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3, samples=20_000, seed=7)

    def test_the_fixture(dpaudit_audit):
        dpaudit_audit(leaky_sum, expect="refuted", **CLAIM)

    def test_dpaudit_check():
        checked = dpaudit.check(leaky_sum, replay_stage=False, **CLAIM)
        with open("check.json", "w", encoding="utf-8") as f:
            json.dump(checked.to_record(), f)
''')


def _timeless(value):
    """A record without its timings (seconds spent, per call, estimated)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items()
                if not k.endswith("_s") and "seconds" not in k}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


@pytest.mark.slow
def test_the_fixture_writes_the_record_dpaudit_check_writes(pytester):
    # the fixture runs the check pipeline: for a function and a seed its record is dpaudit.check's
    # with the replay stage off in both (the fixture's default), timings aside; both as a report
    # writes them (record_of: the fields every report reads)
    import json

    from dpaudit.report.model import record_of

    pytester.makepyfile(test_same=SAME_RECORD_TESTS)
    result = pytester.runpytest_subprocess("-v", "--dpaudit-json", "fixture.json")
    result.assert_outcomes(passed=2)
    fixture = json.loads((pytester.path / "fixture.json").read_text(encoding="utf-8"))["results"]
    assert len(fixture) == 1 and fixture[0].pop("expected") == "refuted"
    assert fixture[0].pop("id") == "test_same.py::test_the_fixture"
    check = json.loads((pytester.path / "check.json").read_text(encoding="utf-8"))
    assert check["verdict"] == "refuted" and "replay" not in check
    assert check["target"] == "test_same.py:leaky_sum" and "--no-replay" in check["reproduce"]
    assert _timeless(fixture[0]) == _timeless(record_of(check))
