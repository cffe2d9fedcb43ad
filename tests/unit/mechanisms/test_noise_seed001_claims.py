"""The seed-001 claims: every check reproduces the verdict we record, and records are JSON-ready."""

import json

import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.results import Verdict
from dpaudit.reference.seed001_claims import evaluate_seed001_claims, seed001_claims


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


def test_both_claim_modules_share_one_set_of_types_and_record_keys(monkeypatch):
    """Seeds 000-004 use the types of mechanisms.seed_claim_types; a record points at its claim's line."""
    from pathlib import Path

    from dpaudit.reference import seed001_claims as s1
    from dpaudit.reference import seed_claim_types as types
    from dpaudit.reference import seed_claims as s

    assert s1.Seed001Claim is s.SeedClaim is types.SeedClaim and s1.Seed001Check is s.ClaimCheck is types.ClaimCheck
    assert s1.ClaimEvidence is s.ClaimEvidence is types.ClaimEvidence
    root = Path(__file__).resolve().parents[3]
    monkeypatch.chdir(root)
    a, b = s1.evaluate_seed001_claims("S1-eq7-density")[0], s.evaluate_claims("s004-eq21-sign")[0]
    ra, rb = a.to_record(), b.to_record()
    assert set(ra) == set(rb) and ra["seed"] == ra["seed_paper"] == "001" and rb["seed_paper"] == "004"
    for rec, module in ((ra, "seed001_claims"), (rb, "seed_claims")):
        assert rec["reproduce"] == rec["recheck"] and f"from dpaudit.reference.{module} import" in rec["recheck"]
        loc = rec["location"]
        assert loc["path"] == f"mechanisms/{module}.py"
        line = (root / loc["path"]).read_text(encoding="utf-8").splitlines()[loc["line"] - 1]
        assert f'("{rec["target"]}"' in line


def test_a_numeric_check_never_proves():
    from dpaudit.reference.seed_claim_types import ClaimEvidence, SeedClaim

    with pytest.raises(InvalidArgument, match="never proves"):
        SeedClaim("x", "001", "S1", "s", Verdict.PROVED, "SPEC §2", (), lambda: None)
    with pytest.raises(InvalidArgument, match="never proves"):
        ClaimEvidence(Verdict.PROVED, 1.0, 1.0, "d")
    claim = SeedClaim("x", "001", "S1", "s", Verdict.NOT_REFUTED, "SPEC §2", (),
                      lambda: ClaimEvidence(Verdict.REFUTED, 2.0, 1.0, "d", {"a": 1}))
    check = claim.evaluate()
    rec = check.to_record()
    assert not check.agrees and rec["verdict"] == "refuted" and rec["recorded_verdict"] == "not_refuted"
    assert rec["recheck"] == "" and "location" not in rec   # no evaluator: nothing to re-run or point at
