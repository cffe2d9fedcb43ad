"""The sampled audit scores the numeric corners (dpaudit.auditing.core, dpaudit.search.pairs): a
black-box mechanism whose privacy fails only at a corner is refuted, its corrected twin is not.

The mechanism (benchmarks/corner_bugs/relu_clip_sum.py) sums records of [0, 2^60] clipped at 1
with the clip written x − max(x − 1, 0): in float64 a record at 2^53 + 2 contributes 2, so the
snapped Laplace(1/ε) sum is 2ε-DP, not ε-DP, and only there (every structured pattern's record
contributes 0 or 1). The structured patterns alone leave it NOT REFUTED at this seed and budget.

α: each audit holds at its family-wise confidence 0.95, so the control (ε-DP) is refuted with
probability at most 0.05; the buggy one is a power check at a fixed seed (no retries): its true
ε is 2, twice the claim.
"""

import importlib.util
from pathlib import Path

import pytest

import dpaudit

pytestmark = [pytest.mark.statistical, pytest.mark.slow]  # two audits at the default budget, about 6 s each

FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "corner_bugs" / "relu_clip_sum.py"
SEED = 20261122
CORNER = "the float above 2^53: 10 records, one removed"


def _module():
    spec = importlib.util.spec_from_file_location("relu_clip_sum", FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_bug_at_a_numeric_corner_is_refuted_and_named_by_its_corner():
    r = dpaudit.audit(_module().buggy, seed=SEED)
    assert r.refuted and r.epsilon_lower_bound > 1.0
    assert r.details["pair_label"] == CORNER
    big = 2.0 ** 53 + 2
    cx = r.counterexample
    assert big in list(cx.dataset) + list(cx.neighbour)
    corners = r.details["phases"]["corners"]
    assert corners["pairs"] > 0 and corners["samples"] == 2 * corners["pairs"] * corners["samples_per_pair"]


def test_the_same_sum_with_its_clip_fixed_is_not_refuted():
    r = dpaudit.audit(_module().fixed, seed=SEED)
    assert not r.refuted and r.details["phases"]["corners"]["pairs"] > 0
