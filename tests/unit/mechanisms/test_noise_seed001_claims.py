"""The seed-001 claims: every check reproduces the verdict we record, and records are JSON-ready."""

import json

import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.results import Verdict
from mechanisms.seed001_claims import evaluate_seed001_claims, seed001_claims


def test_every_recorded_verdict_is_reproduced():
    checks = evaluate_seed001_claims()
    assert len(checks) == len(seed001_claims()) >= 20
    disagree = [(c.claim.id, c.evidence.detail) for c in checks if not c.agrees]
    assert not disagree
    refuted = {c.claim.id for c in checks if c.evidence.verdict is Verdict.REFUTED}
    # SPEC §8: E8 (eq 6), E9 (eq 7), E10 (eq 10), E11 (eq 18), E12 (Lemma 1 for the staircase, eq 23)
    assert {"S1-eq6-density", "S1-eq7-density", "S1-eq10-density", "S1-eq18", "S1-lemma1-staircase",
            "S1-eq23"} <= refuted
    for c in checks:
        if c.evidence.verdict is Verdict.REFUTED:
            assert c.evidence.counterexample, c.claim.id
    rec = [c.to_record() for c in checks]
    json.dumps(rec, allow_nan=False)
    assert {r["kind"] for r in rec} == {"seed-claim"} and all(r["error"] is None for r in rec)


def test_unknown_claim_id():
    with pytest.raises(InvalidArgument, match="^claim_id must be one of S1-eq6-density"):
        evaluate_seed001_claims("S1-eq99")
