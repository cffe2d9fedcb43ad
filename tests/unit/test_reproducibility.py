"""A mechanism that draws its own randomness is detected before the audit: the record says so,
the reproduce line says so, and the verdict still holds (two runs with one seed agree)."""

import numpy as np
import pytest

import dpaudit
from dpaudit.execution.base import InProcessExecutor
from dpaudit.reproduce import OWN_RANDOMNESS_NOTE, reruns_alike


def _own(scale):
    @dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=4, float_events=False)
    def own_rng(data, rng, size=None):
        return data.sum() + np.random.default_rng().laplace(scale=scale, size=size)
    return own_rng


@dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=4, float_events=False)
def seeded(data, rng, size=None):
    return data.sum() + rng.laplace(scale=1.0, size=size)


@pytest.mark.slow
def test_a_mechanism_ignoring_its_rng_is_reported_and_keeps_its_verdict():
    """Broken (true ε = 4, claimed 1) and loose (true ε = 1, claimed 2): verdicts far from the
    line, so both runs agree whatever the mechanism's own draws (fixed seed, no retries)."""
    for mech, epsilon, verdict in ((_own(0.25), 1.0, "refuted"), (_own(1.0), 2.0, "not_refuted")):
        records = [dpaudit.audit(mech, epsilon=epsilon, samples=20_000, seed=5,
                                 executor=InProcessExecutor()).to_record() for _ in range(2)]
        assert [r["verdict"] for r in records] == [verdict, verdict]
        for r in records:
            assert r["reproducible"] is False
            assert r["reproduce"].endswith(f"# {OWN_RANDOMNESS_NOTE}")


def test_a_seeded_mechanism_reruns_exactly():
    a, b = (dpaudit.audit(seeded, samples=20_000, seed=5, executor=InProcessExecutor()) for _ in range(2))
    assert a.reproducible is True and "#" not in a.reproduce
    assert a.to_record()["epsilon_lower_bound"] == b.to_record()["epsilon_lower_bound"]


def test_the_rerun_check_compares_every_kind_of_output():
    def spec_of(f):
        return dpaudit.MechanismSpec.from_function(f, epsilon=1.0)

    ex = InProcessExecutor()
    assert reruns_alike(spec_of(lambda d, rng: ("a" if rng.random() < 0.5 else "b", 1)), ex, 1)
    assert reruns_alike(spec_of(lambda d, rng: float("nan")), ex, 1)  # NaN is an output like any other
    assert reruns_alike(spec_of(lambda d, rng: rng.normal(size=3)), ex, 1)
    assert not reruns_alike(spec_of(lambda d, rng: str(np.random.default_rng().integers(1 << 30))), ex, 1)
    assert not reruns_alike(spec_of(lambda d, rng: np.random.default_rng().normal(size=3)), ex, 1)


@pytest.mark.slow
def test_own_randomness_is_seen_through_a_fork_pool_and_sampled_in_one_process():
    """Forked workers start from one copy of a global generator's state. Drawn in two fresh
    workers, the two rerun-check batches agreed (the mechanism passed as reproducible), and the
    audit's workers repeated each other's noise (samples that are not independent draws)."""
    from dpaudit.auditor import _independent  # private: the auditor's check of its workers' noise
    from dpaudit.execution.fork import ForkExecutor

    if not ForkExecutor.available():
        return  # nothing forks here, so nothing copies a state
    drawn = []  # filled only where the mechanism runs in this process

    @dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=4, float_events=False)
    def global_noise(data):
        y = float(data.sum() + np.random.laplace())
        drawn.append(y)
        return y

    with ForkExecutor(2) as ex:
        assert not reruns_alike(dpaudit.MechanismSpec.from_function(global_noise), ex, 1)
        assert isinstance(_independent(ex, False), InProcessExecutor)
        assert _independent(ex, True) is ex and _independent(ex, None) is ex
        drawn.clear()
        r = dpaudit.audit(global_noise, samples=4_000, seed=5, executor=ex)
    assert r.reproducible is False
    assert len(drawn) >= r.samples > 0 and len(set(drawn)) == len(drawn)  # all drawn here, none twice


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0.0, 1.0), size=10)
def spread_scaled_own_noise(data, rng=None):
    """Noise scaled to the records' spread, drawn from numpy's global state (diffprivlib's mean
    with bounds taken from the data): constant on equal records, its own randomness otherwise."""
    x = np.asarray(data, dtype=float)
    return float(x.mean() + (x.max() - x.min()) * np.random.laplace())


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0.0, 1.0), size=10)
def spread_scaled_seeded(data, rng):
    x = np.asarray(data, dtype=float)
    return float(x.mean() + (x.max() - x.min()) * rng.laplace())


def test_the_rerun_check_is_not_fooled_by_a_dataset_whose_output_is_constant():
    # on records all 0.5 both give 0.5 every call; on spread records only the seeded one reruns
    own = dpaudit.MechanismSpec.from_function(spread_scaled_own_noise)
    seeded = dpaudit.MechanismSpec.from_function(spread_scaled_seeded)
    assert reruns_alike(own, InProcessExecutor(), seed=5) is False
    assert reruns_alike(seeded, InProcessExecutor(), seed=5) is True
