"""The library-independent parts of dpaudit.adapters (no DP library needed): OpenDP metric and
measure names to relations and claims, ρ-zCDP to (ε, δ), the missing-library error, the
LibrarySpec, and the suite's skipping of audits whose package is missing."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

import numpy as np
import pytest

from dpaudit.adapters.common import (
    LibrarySpec,
    MissingLibrary,
    claim_for_measure,
    make_spec,
    relation_for_metric,
    require,
    zcdp_epsilon,
)
from dpaudit.claims import Neighbours
from dpaudit.errors import InvalidArgument, UsageError


@pytest.mark.parametrize("metric, d_in, relation, scale", [
    ("SymmetricDistance()", 1, Neighbours.ADD_REMOVE, 1.0),
    ("SymmetricDistance()", 2, Neighbours.REPLACE, 1.0),
    ("InsertDeleteDistance()", 1, Neighbours.ADD_REMOVE, 1.0),
    ("ChangeOneDistance()", 1, Neighbours.REPLACE, 1.0),
    ("HammingDistance()", 1, Neighbours.REPLACE, 1.0),
    ("DiscreteDistance()", 1, Neighbours.REPLACE, 1.0),
    ("AbsoluteDistance(T=f64)", 1, Neighbours.LINF, 1.0),
    ("AbsoluteDistance(T=i32)", 3, Neighbours.LINF, 3.0),
    ("LInfDistance(T=f64)", 0.5, Neighbours.LINF, 0.5),
    ("L1Distance(T=f64)", 2.0, Neighbours.L1, 2.0),
])
def test_metric_maps_to_relation(metric, d_in, relation, scale):
    assert relation_for_metric(metric, d_in) == (relation, scale)


@pytest.mark.parametrize("metric, d_in, needle", [
    ("SymmetricDistance()", 3, "d_in"),
    ("ChangeOneDistance()", 2, "d_in"),
    ("SymmetricDistance()", True, "d_in"),
    ("AbsoluteDistance(T=f64)", 0, "d_in"),
    ("AbsoluteDistance(T=f64)", math.inf, "d_in"),
    ("L2Distance(T=f64)", 1, "input metric"),
])
def test_metric_without_a_relation_is_a_clear_error(metric, d_in, needle):
    with pytest.raises(InvalidArgument, match=needle):
        relation_for_metric(metric, d_in)


def test_pure_measure_claims_the_map_exactly():
    eps, delta, text = claim_for_measure("MaxDivergence", 1.000000009313226, None)
    assert (eps, delta) == (1.000000009313226, 0.0)  # not rounded: the claim the library makes
    assert "1.000000009313226" in text


def test_approximate_measure_claims_its_pair():
    assert claim_for_measure("Approximate(MaxDivergence)", (0.5, 1e-6), None)[:2] == (0.5, 1e-6)


def test_zcdp_measure_needs_a_delta_and_converts():
    with pytest.raises(InvalidArgument, match="delta"):
        claim_for_measure("ZeroConcentratedDivergence", 0.5, None)
    eps, delta, text = claim_for_measure("ZeroConcentratedDivergence", 0.5, 1e-3)
    assert delta == 1e-3 and eps == zcdp_epsilon(0.5, 1e-3) and "ρ-zCDP" in text


def test_unknown_measure_is_a_clear_error():
    with pytest.raises(InvalidArgument, match="output measure"):
        claim_for_measure("RenyiDivergence", 1.0, None)


def _cks(rho: float, delta: float) -> float:
    """Canonne-Kamath-Steinke's ε(δ) minimised on a dense grid of α (an independent computation)."""
    alpha = 1.0 + np.exp(np.linspace(-12.0, 12.0, 400_001))
    vals = alpha * rho + np.log1p(-1.0 / alpha) + (math.log(1.0 / delta) - np.log(alpha)) / (alpha - 1.0)
    return float(vals.min())


@pytest.mark.parametrize("rho, delta", [(0.5, 1e-3), (0.1, 1e-6), (2.0, 1e-5), (1e-4, 1e-9), (5.0, 0.1)])
def test_zcdp_epsilon_matches_a_grid_minimum_and_beats_bun_steinke(rho, delta):
    eps = zcdp_epsilon(rho, delta)
    assert eps == pytest.approx(_cks(rho, delta), rel=1e-7)
    assert eps <= rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)) + 1e-12


def test_zcdp_epsilon_known_values():
    # OpenDP 0.16's make_zCDP_to_approxDP gives the same numbers (tests/unit/test_adapters_libraries.py)
    assert zcdp_epsilon(0.5, 1e-3) == pytest.approx(3.5365618461689596, rel=1e-9)
    assert zcdp_epsilon(2.0, 1e-5) == pytest.approx(10.724824112939174, rel=1e-9)


@pytest.mark.parametrize("rho, delta", [(0, 1e-3), (-1, 1e-3), (math.inf, 1e-3), (0.5, 0.0), (0.5, 1.0)])
def test_zcdp_epsilon_rejects_bad_arguments(rho, delta):
    with pytest.raises(InvalidArgument):
        zcdp_epsilon(rho, delta)


def test_missing_library_names_the_install_command():
    with pytest.raises(MissingLibrary) as info:
        require("dpaudit_no_such_library_xyz")
    assert isinstance(info.value, UsageError)
    assert "pip install 'dpaudit[libraries]'" in str(info.value)


def test_missing_library_message_names_the_tested_version():
    assert "python-dp 1.1.5" in str(MissingLibrary("pydp"))


def _noisy(data, rng, size=None):
    return float(np.sum(data)) + rng.laplace(size=size)


def test_library_spec_keeps_its_library_through_replace():
    spec = make_spec("diffprivlib", _noisy, label="f", epsilon=1.0, delta=0.0, neighbours="replace",
                     domain=(0, 1), size=5, claim_text="ε-DP", notion="replace", own_randomness=False)
    assert isinstance(spec, LibrarySpec)
    assert spec.library["name"] == "diffprivlib" and spec.library["own_randomness"] is False
    assert spec.neighbours is Neighbours.REPLACE and spec.size == 5 and spec.name.startswith("diffprivlib ")
    moved = dataclasses.replace(spec, size=7)
    assert isinstance(moved, LibrarySpec) and moved.library == spec.library and moved.size == 7
    assert moved.with_claim(2.0).library == spec.library


def test_library_spec_takes_the_notions_users_speak():
    spec = make_spec("diffprivlib", _noisy, label="f", epsilon=0.5, delta=0.0, neighbours="bounded",
                     domain=(0, 1), size=5, claim_text="ε-DP", notion="replace", own_randomness=False)
    assert spec.neighbours is Neighbours.REPLACE and spec.epsilon == 0.5
    public = make_spec("diffprivlib", _noisy, label="f", epsilon=0.5, delta=0.0,
                       neighbours="add-remove-public-size", domain=(0, 1), size=5, claim_text="ε-DP",
                       notion="add-remove", own_randomness=False)
    # one record replaced is two add-remove steps: the stated ε = 0.5 is audited as 1.0 (group privacy)
    assert public.neighbours is Neighbours.REPLACE and public.epsilon == 1.0
    assert "audited as (1.0, 0.0) under replace" in public.library["claim"]


def test_library_spec_is_audited_like_any_spec():
    import dpaudit

    spec = make_spec("opendp", _noisy, label="f", epsilon=1.0, delta=0.0, neighbours="add-remove",
                     domain=(0, 1), size=3, claim_text="ε-DP", notion="add-remove", own_randomness=True)
    spec = spec.idealised()  # _noisy is float64 x + Laplace: a model over the reals here
    result = dpaudit.audit(spec, samples=20_000, confidence=0.999, seed=5)
    assert result.verdict.value == "not_refuted"
    assert 0.5 < result.epsilon_lower_bound <= 1.0 + 0.1


# -- the suite: audits that need a missing package are skipped, visibly ------------------------------

_SUITE_FILE = '''
"""Two audits, one of which needs a package that is not installed."""
import numpy as np
from dpaudit.spec import MechanismSpec
from dpaudit.suite import sampled


def noisy_sum(data, rng, size=None):
    return float(np.sum(data)) + rng.laplace(size=size)


def spec():
    return MechanismSpec.from_function(noisy_sum, epsilon=1.0, domain=(0, 1), size=3,
                                       float_events=False)  # a model over the reals


AUDITS = [
    sampled("plain", spec, samples=5_000),
    sampled("needs-lib", spec, samples=5_000, requires="dpaudit_no_such_library_xyz"),
]
'''


def _args(path, out, ids=None):
    return argparse.Namespace(paths=[str(path)], ids=ids, seed=1, out=str(out), html=None, json=None,
                              junit=None, sarif=None, exit_zero=False, quiet=False, jobs=1)


@pytest.mark.slow
def test_audit_needing_a_missing_package_is_skipped_not_passed(tmp_path, capsys):
    from dpaudit.suite import load_audits
    from dpaudit.suite.commands import run_audit

    path = tmp_path / "two.py"
    path.write_text(_SUITE_FILE)
    audits = load_audits([str(path)])
    assert [a.requires for a in audits] == [(), ("dpaudit_no_such_library_xyz",)]
    assert audits[1].missing() == ("dpaudit_no_such_library_xyz",) and audits[0].missing() == ()
    code = run_audit(_args(path, tmp_path / "out"))
    out = capsys.readouterr().out
    assert int(code) == 0
    # a package dpaudit has no adapter for is not in the [libraries] extra: its own install line
    assert "skip needs-lib  SKIPPED  requires dpaudit_no_such_library_xyz (not installed): " \
           "pip install dpaudit_no_such_library_xyz" in out and "dpaudit[libraries]" not in out
    assert "1 audits, 1 as expected, 0 not as expected, 1 SKIPPED (not run, not passed)" in out
    run = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [r["id"] for r in run["results"]] == ["plain"]
    assert run["summary"]["total"] == 1
    assert [s["id"] for s in run["skipped"]] == ["needs-lib"]
    assert run["skipped"][0]["requires"] == ["dpaudit_no_such_library_xyz"]
    html = (tmp_path / "out" / "index.html").read_text()
    assert "Skipped: 1 audit not run (not passed)" in html and ">needs-lib<" in html


def test_only_skipped_audits_is_nothing_to_audit(tmp_path, capsys):
    from dpaudit.exitcodes import ExitCode
    from dpaudit.suite.commands import run_audit

    path = tmp_path / "two.py"
    path.write_text(_SUITE_FILE)
    code = run_audit(_args(path, tmp_path / "out", ids=["needs-lib"]))
    assert code == ExitCode.NOTHING_TO_AUDIT
    assert "SKIPPED" in capsys.readouterr().out


@pytest.mark.slow
def test_pytest_plugin_skips_an_audit_whose_package_is_missing(pytester):
    pytester.makepyfile(**{"audits/two": _SUITE_FILE})
    result = pytester.runpytest_subprocess("--dpaudit", "audits", "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*requires dpaudit_no_such_library_xyz (not installed)*"])


def test_a_library_target_defaults_to_the_loop_budget():
    """Its batch form is a loop over library calls (0.1-1 ms each): the batch-form default of
    4·10⁶ samples made a correct target's audit take most of an hour."""
    from dpaudit.adapters.common import make_spec
    from dpaudit.auditor import DEFAULT_SAMPLES_LOOP, default_samples

    def batch(data, rng, size=None):
        return rng.laplace(size=size)

    spec = make_spec("diffprivlib", batch, label="t", epsilon=1.0, delta=0.0, neighbours="add-remove",
                     domain=(0, 1), size=3, claim_text="c", notion="n", own_randomness=False)
    assert default_samples(spec) == DEFAULT_SAMPLES_LOOP
