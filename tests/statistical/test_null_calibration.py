"""The null certificate's CI subset (benchmarks/null_calibration.py runs the full one at the
defaults): correct, tight mechanisms of every claim kind, each audited on an independent seed,
are refuted at most at the stated rate.

α of the test: every audit runs at 95% confidence, so each refutes its correct mechanism with
probability at most 0.05, and the refutations among the 24 audits below (4 per kind, six kinds,
independent seeds) are stochastically at most Bin(24, 0.05); P(Bin(24, 0.05) > 4) = 0.0060, so
a sound auditor fails this test with probability below 0.6%. Fixed seeds, no retries. The budget
is 100,000 samples per audit (not the default 4·10⁶, to fit CI), which still gives the sequential
audits three early looks (2,000, 8,000 and 32,000 samples) before the final one.

The test can fail: the same audits of the Laplace kind with the noise 25% too narrow (true ε 1.25
against the claim 1) are refuted more than 4 times in 6. The 120-audit version (20 per kind,
limit 12, α = 0.0072) and its control over 20 seeds run in ``benchmarks/size_and_power.py``.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import dpaudit

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

# benchmarks/ is on the path only for this import: it holds a distributed.py, and a Dask nanny
# spawned later in the same worker inherits sys.path and imported it as the distributed package
_BENCHMARKS = str(Path(__file__).resolve().parents[2] / "benchmarks")
sys.path.insert(0, _BENCHMARKS)
try:
    import null_calibration as nc  # noqa: E402
finally:
    sys.path.remove(_BENCHMARKS)

LIMIT = 4
PER_KIND = 4
#: the negative control's audits: the first seeds of the Laplace kind
CONTROL = 6
SAMPLES = 100_000
ROOT = 77_001


def verdict(kind: str, seed: int) -> str:
    f = {"pure_epsilon": nc.pure_epsilon, "approx_dp": nc.approx_dp, "snapped": nc.snapped,
         "discrete": nc.discrete}.get(kind)
    if f is not None:
        return dpaudit.audit(f, samples=SAMPLES, seed=seed).verdict.value
    claim = {"zcdp": {"rho": 0.5}, "gdp": {"mu": 1.0}}[kind]
    return dpaudit.curve_audit(nc.gaussian, samples=SAMPLES, seed=seed, **claim).verdict.value


def seeds(kind_index: int, per_kind: int = PER_KIND) -> list[int]:
    """The first ``per_kind`` of the kind's 20 seeds (spawned children: a prefix of the longer list)."""
    children = np.random.SeedSequence(ROOT).spawn(len(nc.KINDS))[kind_index].spawn(per_kind)
    return [int(c.generate_state(1)[0]) for c in children]


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=1, float_events=False)
def too_narrow(data, rng, size=None):
    return data.sum() + rng.laplace(0.0, 0.8, size=size)


def test_correct_tight_mechanisms_of_every_kind_refuted_at_most_4_of_24():
    verdicts = {kind: [verdict(kind, s) for s in seeds(j)] for j, kind in enumerate(nc.KINDS)}
    assert all(v != "error" for vs in verdicts.values() for v in vs)
    refuted = sum(v == "refuted" for vs in verdicts.values() for v in vs)
    assert refuted <= LIMIT, {k: vs.count("refuted") for k, vs in verdicts.items()}


def test_the_count_can_exceed_the_limit():
    refuted = sum(dpaudit.audit(too_narrow, samples=SAMPLES, seed=s).refuted for s in seeds(0, CONTROL))
    assert refuted > LIMIT
