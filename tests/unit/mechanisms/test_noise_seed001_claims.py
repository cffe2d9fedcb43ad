"""The Chen, Pal and Golubchik (2016) claims: every check reproduces the verdict we record, and records are JSON-ready."""

import json

import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.results import Verdict
from dpaudit.reference.claims import evaluate, noise


@pytest.mark.slow
def test_every_recorded_verdict_is_reproduced():
    checks = [c.evaluate() for c in noise.claims()]
    assert len(checks) == len(noise.claims()) >= 20
    disagree = [(c.claim.id, c.evidence.detail) for c in checks if not c.agrees]
    assert not disagree
    refuted = {c.claim.id for c in checks if c.evidence.verdict is Verdict.REFUTED}
    # docs/math.md#errata: E8 (eq 6), E9 (eq 7), E10 (eq 10), E11 (eq 18), E12 (Lemma 1 for the staircase, eq 23)
    assert {"s001-eq6-density", "s001-eq7-density", "s001-eq10-density", "s001-eq18", "s001-lemma1-staircase",
            "s001-eq23"} <= refuted
    for c in checks:
        if c.evidence.verdict is Verdict.REFUTED:
            assert c.evidence.counterexample, c.claim.id
    rec = [c.to_record() for c in checks]
    json.dumps(rec, allow_nan=False)
    assert {r["kind"] for r in rec} == {"seed-claim"} and all(r["error"] is None for r in rec)


def test_unknown_claim_id():
    with pytest.raises(InvalidArgument, match="^claim_id must be one of s001-eq6-density"):
        evaluate("s001-eq99")


def test_both_claim_modules_share_one_set_of_types_and_record_keys(monkeypatch):
    """Seeds 000-004 use the types of mechanisms/claims/types.py; a record points at its claim's line."""
    from pathlib import Path

    from dpaudit.reference.claims import exponential, noise, types

    assert all(type(c) is types.SeedClaim for c in (*noise.claims(), *exponential.claims()))
    root = Path(__file__).resolve().parents[3]
    monkeypatch.chdir(root)
    a, b = evaluate("s001-eq7-density")[0], evaluate("s004-eq21-sign")[0]
    assert type(a) is type(b) is types.ClaimCheck and type(a.evidence) is type(b.evidence) is types.ClaimEvidence
    ra, rb = a.to_record(), b.to_record()
    assert set(ra) == set(rb) and ra["seed"] == ra["seed_paper"] == "001" and rb["seed_paper"] == "004"
    for rec, module in ((ra, "noise"), (rb, "exponential")):
        assert rec["reproduce"] == rec["recheck"] and "from dpaudit.reference.claims import evaluate" in rec["recheck"]
        loc = rec["location"]
        assert loc["path"] == f"mechanisms/claims/{module}.py"
        line = (root / loc["path"]).read_text(encoding="utf-8").splitlines()[loc["line"] - 1]
        assert f'("{rec["target"]}"' in line


def test_a_numeric_check_never_proves():
    from dpaudit.reference.claims.types import ClaimEvidence, SeedClaim

    with pytest.raises(InvalidArgument, match="never proves"):
        SeedClaim("x", "001", "S1", "s", Verdict.PROVED, "docs/math.md#oblivious-noise", (), lambda: None)
    with pytest.raises(InvalidArgument, match="never proves"):
        ClaimEvidence(Verdict.PROVED, 1.0, 1.0, "d")
    claim = SeedClaim("x", "001", "S1", "s", Verdict.NOT_REFUTED, "docs/math.md#oblivious-noise", (),
                      lambda: ClaimEvidence(Verdict.REFUTED, 2.0, 1.0, "d", {"a": 1}))
    check = claim.evaluate()
    rec = check.to_record()
    assert not check.agrees and rec["verdict"] == "refuted" and rec["recorded_verdict"] == "not_refuted"
    assert rec["recheck"] == "" and "location" not in rec   # no evaluator: nothing to re-run or point at
