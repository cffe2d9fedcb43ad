"""The numeric corners in the sampled core's pair search (dpaudit.auditing.core): scored on a
budget of their own after the other phases, so the structured patterns and the search keep their
samples per pair, their pairs and their records; fixed by the claim and the seed."""

import numpy as np
import pytest

import dpaudit
from dpaudit.auditing import core
from dpaudit.auditing import sampled as engine
from dpaudit.curves import curve_audit
from dpaudit.search.pairs import candidates
from dpaudit.spec import MechanismSpec


def laplace_sum(data, rng, size=None):
    m = 1 if size is None else size
    out = np.clip(data, 0.0, 1.0).sum() + rng.laplace(scale=1.0, size=m)
    return out if size is not None else float(out[0])


CLAIM = dict(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10, float_policy="off")


def _phases(monkeypatch, corners: bool, samples: int) -> dict:
    if not corners:
        monkeypatch.setattr(engine, "corner_pairs", lambda spec, seed: [])
    r = dpaudit.audit(laplace_sum, samples=samples, seed=3, early_stop=False, **CLAIM)
    monkeypatch.undo()
    return r.details["phases"]


@pytest.mark.parametrize("samples", [100_000, pytest.param(2_000_000, marks=pytest.mark.slow)])
def test_the_corners_leave_the_patterns_and_the_search_as_they_were(monkeypatch, samples):
    without = _phases(monkeypatch, False, samples)
    with_corners = _phases(monkeypatch, True, samples)
    assert "corners" not in without
    for phase in ("patterns", "levels", "search", "refine"):
        assert with_corners.get(phase) == without.get(phase), phase
    rec = with_corners["corners"]
    per = 2 * rec["samples_per_pair"]
    assert rec["samples_per_pair"] == without["patterns"]["samples_per_pair"]
    assert 0 < rec["pairs"] <= rec["of"] and rec["samples"] == rec["pairs"] * per
    budget = int(core.CORNER_SHARE * int(core.SEARCH_SHARE * samples))
    assert rec["samples"] <= budget and (rec["pairs"] == rec["of"] or budget - rec["samples"] < per)


def test_the_corner_pairs_are_the_candidates_without_the_structured_patterns():
    spec = MechanismSpec.from_function(laplace_sum, **{k: v for k, v in CLAIM.items() if k != "float_policy"})
    pairs = core.corner_pairs(spec, 5)
    assert [p.key for p in pairs] == [p.key for p in candidates("add-remove", (0.0, 1.0), 10, 5,
                                                               structured=False)]
    assert pairs and pairs[0].label.startswith("float rounding")
    assert any("smallest subnormal" in p.label for p in pairs)
    assert [p.key for p in core.corner_pairs(spec, 5)] == [p.key for p in pairs]  # fixed by the seed


def test_the_curve_audit_scores_the_corners_too():
    r = curve_audit(laplace_sum, mu=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10,
                    samples=200_000, seed=7)
    assert r.details["phases"]["corners"]["pairs"] > 0


@pytest.mark.slow
def test_a_corner_enters_the_race_only_by_beating_the_best_pair_by_the_search_margin():
    """On a correct Laplace sum no corner scores a clear gain over the structured patterns (every
    pair's loss is at most ε), so none is noted for the race; each one scored counts in ``pairs``."""
    r = dpaudit.audit(laplace_sum, samples=2_000_000, seed=3, early_stop=False, **CLAIM)
    rec = r.details["phases"]["corners"]
    assert rec["pairs"] > 0 and rec["entered"] == 0 and rec["goal"] is not None
    spec = MechanismSpec.from_function(laplace_sum, **{k: v for k, v in CLAIM.items() if k != "float_policy"})
    corner_labels = {p.label for p in core.corner_pairs(spec, 3)}
    raced = {label for rnd in r.details["phases"]["select"] for label, _ in rnd["honest_projection"]}
    assert raced and not raced & corner_labels
