"""Exact losses from the replay (dpaudit/replay/exact.py, docs/math.md#exact-losses-from-the-replay):
where the release reveals each noised value, the loss of the noise is exact and refutes; where it
does not (a sparse vector, a report-noisy-max, a sum or a clip or a sort of noisy values), the pair
is left to the sampling. The replay is deterministic from its seed: these are exact checks, not
statistical ones (no α); the correct mechanisms are run on 5 seeds each."""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np
import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process
from scipy import integrate, stats

from dpaudit.replay import replay_audit
from dpaudit.replay.accounting import gdp_epsilon, laplace_delta, laplace_epsilon_at
from dpaudit.replay.exact import exact_loss
from dpaudit.results import Verdict

SEED = 20261122
HERE = __file__


def _line(marker: str) -> int:
    with open(HERE, encoding="utf-8") as fh:
        for i, text in enumerate(fh, start=1):
            if text.rstrip().endswith(f"# site: {marker}"):
                return i
    raise AssertionError(marker)


def _audit(f, seed=SEED, **kw):
    claim = dict(epsilon=1.0, neighbours="add-remove", domain=(0.0, 5.0), size=8, seed=seed)
    claim.update(kw)
    return replay_audit(f, **claim)


def unclipped_sum(data, rng):
    return np.sum(data) + rng.laplace(scale=1.0)  # site: unclipped


def sparse_vector(data, rng):
    """AboveThreshold (Dwork and Roth 2014, Algorithm 1) with sensitivity-1 counts: ε-DP."""
    x = np.clip(data, 0.0, 5.0)
    rho = rng.laplace(scale=2.0)
    for i, t in enumerate((0.5, 1.5, 2.5, 3.5, 4.5)):
        if float(np.sum(x >= t)) + rng.laplace(scale=4.0) >= 3.0 + rho:
            return i
    return -1


def report_noisy_max(data, rng):
    """Report noisy max of 4 counts with Laplace(2/ε) (Dwork and Roth 2014, Claim 3.9): ε-DP."""
    x = np.clip(data, 0.0, 5.0)
    counts = np.array([np.sum(x >= t) for t in (1.0, 2.0, 3.0, 4.0)], dtype=float)
    return int(np.argmax(counts + rng.laplace(scale=2.0, size=4)))


def test_an_unclipped_sum_is_refuted_with_its_exact_epsilon_at_its_line():
    r = _audit(unclipped_sum)
    assert r.verdict is Verdict.REFUTED
    (f,) = r.of("exact_loss_exceeded")
    assert f.severity == "violation"
    assert f.site.path == HERE and f.site.line == _line("unclipped")
    # one record of the domain's top, 5, added: |Δ|/b = 5 exactly
    assert f.values["epsilon_exact"] == 5.0 and f.values["exact"] is True
    assert "exactly ε = 5" in f.message and "no sampling" in f.message
    assert not r.of("composition_excess")


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", [sparse_vector, report_noisy_max])
@pytest.mark.parametrize("seed", range(5))
def test_a_sparse_vector_and_a_report_noisy_max_are_never_refuted_this_way(mechanism, seed):
    r = _audit(mechanism, seed=seed)
    assert r.verdict is not Verdict.REFUTED, r
    assert not r.of("exact_loss_exceeded")


@pytest.mark.slow
def test_composition_is_loose_on_them_and_stays_a_note():
    # a pair where a record moves every count: composition adds up 4 × 1/2 = 2 > 1
    r = _audit(report_noisy_max)
    notes = r.of("composition_excess")
    assert notes and notes[0].values["epsilon_supported"] > 1.0


def _sorted(data, rng):
    counts = np.array([np.sum(data >= 2.5), 100.0 + np.sum(data < 2.5), 300.0])
    return np.sort(counts + rng.laplace(scale=0.5, size=3))


def _overwritten(data, rng):
    y = np.array([np.sum(data), np.sum(data)]) + rng.laplace(scale=0.5, size=2)
    y[1] = 7.0
    return y


def _clipped_after(data, rng):
    return np.clip(np.sum(data) + rng.laplace(scale=1.0), 0.0, 10.0)


def _sum_of_two(data, rng):
    return (np.sum(data) + rng.laplace(scale=1.0)) + (np.sum(data) + rng.laplace(scale=1.0))


def _escaped(data, rng):
    rho = float(rng.laplace(scale=2.0))    # noise taken out of the tracking, then branched on
    if np.sum(data) + float(rng.laplace(scale=4.0)) >= 3.0 + rho:
        return np.sum(data) + rng.laplace(scale=0.5)
    return -1.0


def _ratio(data, rng):
    return (np.sum(data) + rng.laplace(scale=1.0)) / (len(data) + rng.laplace(scale=1.0))


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", [_sorted, _overwritten, _clipped_after, _sum_of_two, _escaped, _ratio])
def test_a_release_not_shown_injective_is_left_to_the_sampling(mechanism):
    r = _audit(mechanism)
    assert not r.of("exact_loss_exceeded"), r


def test_affine_maps_of_the_noise_are_followed():
    def scaled(data, rng):
        z = rng.laplace(size=2)
        return 3.0 * (z * 0.5 + np.array([np.sum(data), 2 * np.sum(data)]))

    (f,) = _audit(scaled, domain=(0.0, 1.0)).of("exact_loss_exceeded")
    # inputs in the draw's units: 2·s and 4·s, s moved by 1 → 2 + 4
    assert f.values["epsilon_exact"] == pytest.approx(6.0)


def test_gaussian_noise_gives_its_exact_profile_and_no_finite_pure_epsilon():
    def gauss(data, rng):
        return np.sum(data) + rng.normal(scale=4.0)

    (f,) = _audit(gauss, delta=1e-5).of("exact_loss_exceeded")
    assert f.values["epsilon_exact"] == pytest.approx(gdp_epsilon(5.0 / 4.0, 1e-5))
    (g,) = _audit(gauss, domain=(0.0, 1.0)).of("exact_loss_exceeded")
    assert math.isinf(g.values["epsilon_exact"]) and "no finite ε" in g.message


@pytest.mark.slow
def test_a_correct_gaussian_sum_is_not_refuted():
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5))  # Dwork and Roth 2014, Theorem A.1, Δ = ε = 1

    def gauss(data, rng):
        return np.sum(np.clip(data, 0.0, 1.0)) + rng.normal(scale=sigma)

    assert _audit(gauss, delta=1e-5).verdict is Verdict.NOT_REFUTED


def test_the_laplace_profile_is_the_hockey_stick_divergence():
    for a, eps in ((2.0, 0.5), (5.0, 1.0), (0.7, 0.2)):
        p, q = stats.laplace(loc=a), stats.laplace(loc=0.0)
        hockey, _ = integrate.quad(lambda y: max(p.pdf(y) - math.exp(eps) * q.pdf(y), 0.0), -40, 40,
                                   points=[0.0, a], limit=200)
        assert laplace_delta(eps, a) == pytest.approx(hockey, rel=1e-6)
        assert laplace_delta(laplace_epsilon_at(a, laplace_delta(eps, a)), a) == pytest.approx(laplace_delta(eps, a))
    assert laplace_delta(3.0, 2.0) == 0.0


def test_the_losses_add_up_at_delta_zero_and_stay_lower_bounds_above():
    assert exact_loss([("laplace", 1.5), ("laplace", 2.5)], 1.0, 0.0)["epsilon"] == 4.0
    at = exact_loss([("laplace", 1.5), ("laplace", 2.5)], 1.0, 1e-3)
    assert at["exact"] is False and laplace_epsilon_at(2.5, 1e-3) <= at["epsilon"] <= 4.0
    assert math.isinf(exact_loss([("laplace", 1.0), ("gaussian", 0.1)], 1.0, 0.0)["epsilon"])


def _dpaudit(cwd, *args):
    proc = in_process(*args, cwd=cwd)  # the command's entry point in this process
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


UNCLIPPED = '''import numpy as np
import dpaudit


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 5.0), size=10)
def noisy_sum(data, rng):
    total = np.sum(data)  # forgot np.clip(data, 0, 1)
    return total + rng.laplace(scale=1.0)
'''


@pytest.mark.slow
def test_check_replay_and_the_default_stage_refute_the_unclipped_sum_at_its_line(tmp_path):
    mech = tmp_path / "unclipped.py"
    mech.write_text(UNCLIPPED)
    alone = dpaudit_process("check", mech, "--replay", "--json", tmp_path / "r.json", cwd=tmp_path)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert "REFUTED" in alone.stdout and "unclipped.py:8" in alone.stdout and "exactly ε = 5" in alone.stdout
    staged = _dpaudit(tmp_path, "check", mech, "--samples", "2000", "--json", tmp_path / "s.json")
    assert staged.returncode == 1, staged.stdout + staged.stderr
    rec = json.loads((tmp_path / "s.json").read_text())["results"][0]
    assert rec["verdict"] == "refuted" and rec["decided_by"] == "replay"
    assert rec["location"]["line"] == 8
    line = staged.stdout.splitlines()[0]
    assert "exact privacy loss ε = 5" in line and line.index("unclipped.py:8") < line.index("the sampling:")


# -- a noise scale that follows the data: the exact profile of two laws ------------------------

def mean_scaled_by_size(data, rng):
    """smartnoise-core#356's shape: a mean with Laplace noise of scale 1/n, n of this dataset."""
    x = np.clip(np.asarray(data, dtype=float), 0.0, 5.0)
    n = max(len(x), 1)
    return float(np.sum(x)) / n + rng.laplace(scale=5.0 / n)  # site: scaled


def gaussian_scaled_by_size(data, rng):
    """A sum with Gaussian noise enough for (1, 1e-5) on its own (σ = 30 > 5·√(2 ln 1.25e5)),
    divided by the dataset's size: the noise of the release is rescaled by the data."""
    x = np.clip(np.asarray(data, dtype=float), 0.0, 5.0)
    n = max(len(x), 1)
    return (np.sum(x) + rng.normal(scale=30.0)) / n


def smooth_laplace_median(data, rng):
    """The smooth-sensitivity median with Laplace noise (Nissim, Raskhodnikova and Smith 2007,
    Corollary 2.5 / Lemma 2.9, β from the corrected rule): (1, 1e-3)-DP with a noise scale that
    follows the data."""
    from mechanisms.smooth_mechanisms import SmoothLaplaceMedian

    m = SmoothLaplaceMedian(epsilon=1.0, delta=1e-3)
    return m.target(data) + m.noise_scale(data) * rng.laplace()


def test_a_laplace_scale_that_follows_the_data_has_no_finite_pure_epsilon():
    r = _audit(mean_scaled_by_size)
    assert r.verdict is Verdict.REFUTED
    (f,) = r.of("exact_loss_exceeded")
    assert f.site.line == _line("scaled")
    assert math.isinf(f.values["epsilon_exact"]) and f.values["exact"] is True
    assert f.values["scale"] != f.values["scale_prime"]
    assert "no finite ε" in f.message and "on D′" in f.message


def test_a_gaussian_rescaled_by_the_data_gets_the_exact_profile_of_its_two_laws():
    from dpaudit.replay.profiles import profile_epsilon

    r = _audit(gaussian_scaled_by_size, epsilon=1.0, delta=1e-5)
    assert r.verdict is Verdict.REFUTED
    (f,) = r.of("exact_loss_exceeded")
    (e,) = f.values["revealed"]
    p, q = tuple(e["law"]), tuple(e["law_prime"])
    assert p[2] != q[2]  # σ/n on each side
    assert f.values["epsilon_exact"] == pytest.approx(profile_epsilon(p, q, 1e-5), rel=1e-9)
    assert f.values["epsilon_exact"] > 1.0


@pytest.mark.parametrize("seed", range(3))
def test_a_correct_smooth_sensitivity_median_is_never_refuted_this_way(seed, monkeypatch):
    # exact, no sampling: on every pair the search tries, the two laws' exact profile at the
    # claimed ε is within the claimed δ, because the mechanism is (ε, δ)-DP on every pair
    import sys
    import os

    monkeypatch.syspath_prepend(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    sys.modules.pop("mechanisms", None)
    r = _audit(smooth_laplace_median, seed=seed, epsilon=1.0, delta=1e-3, neighbours="replace",
               domain=(0.0, 1.0), size=9)
    assert r.verdict is not Verdict.REFUTED, r
    assert not r.of("exact_loss_exceeded")


def test_the_profile_of_two_laws_is_the_hockey_stick_divergence():
    from scipy.integrate import quad
    from scipy.stats import laplace, norm

    from dpaudit.replay.profiles import profile_delta, profile_epsilon

    # one scale: the closed forms of Dwork and Roth (Laplace) and Balle and Wang (Gaussian)
    for a in (0.3, 1.0, 2.5):
        for eps in (0.0, 0.2, 0.9, 2.0):
            assert profile_delta(("laplace", 0.0, 1.0), ("laplace", a, 1.0), eps) == pytest.approx(
                laplace_delta(eps, a), rel=1e-9, abs=1e-15)
    assert profile_epsilon(("gaussian", 0.0, 1.0), ("gaussian", 1.0, 1.0), 1e-5) == pytest.approx(
        gdp_epsilon(1.0, 1e-5), rel=1e-9)
    # two scales: against numerical integration of (p − e^ε q)₊ in both directions
    for law, d in (("laplace", laplace), ("gaussian", norm)):
        p, q = (law, 0.0, 1.0), (law, 0.5, 0.7)
        for eps in (0.0, 0.3, 1.0):
            def h(a, b):
                return quad(lambda y: max(d.pdf(y, a[1], a[2]) - math.exp(eps) * d.pdf(y, b[1], b[2]), 0.0),
                            -60, 60, limit=500, points=[-1.0, 0.0, 0.5, 1.0])[0]
            assert profile_delta(p, q, eps) == pytest.approx(max(h(p, q), h(q, p)), abs=1e-7)
        assert math.isinf(profile_epsilon(p, q, 0.0))


def test_the_replay_engine_of_a_laplace_target_imports_no_scipy():
    """The replay engine runs in the sandbox child, a fresh process for each check: scipy.special
    costs it about 0.3 CPU s to import, so the exact profiles load it only for normal noise (the
    Laplace distribution functions are closed forms)."""
    import subprocess

    code = ("import sys\n"
            "from dpaudit.replay.profiles import profile_epsilon\n"
            "import dpaudit.replay.audit\n"
            "eps = profile_epsilon(('laplace', 0.0, 1.0), ('laplace', 1.0, 2.0), 1e-6)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy'}), eps > 0)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["[]", "True"], done.stdout + done.stderr[-2000:]
