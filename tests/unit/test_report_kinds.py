"""Record kinds: one class per kind answers every renderer; unknown kinds still render; the
seed-claim kind is registered from the reference side, not by the generic harness."""

import json
import pathlib
import subprocess
import sys

import pytest

from dpaudit.report import make_run, render_html, render_junit, render_sarif
from dpaudit.report.kinds import (ExactAudit, FormalClaim, GenericRecord, RecordKind, SampledAudit, SarifRule,
                                  SensitivitySearch, kind_of, register_kind, registered_kinds)
from dpaudit.report import kinds as kinds_module
from dpaudit.results import error_record

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "reports" / "results.json"


def test_each_builtin_kind_has_its_class_and_a_distinct_sarif_rule():
    kinds = registered_kinds()
    assert kinds[:4] == (SampledAudit, ExactAudit, SensitivitySearch, FormalClaim)
    assert [k.kind for k in kinds[:4]] == ["audit", "exact", "sensitivity", "formal"]
    ids = [k.rule.id for k in kinds]
    assert len(set(ids)) == len(ids) and ids[:4] == ["DPA001", "DPA002", "DPA003", "DPA004"]
    assert all(k.description for k in kinds)


def test_seed_claim_kind_comes_from_the_reference_side_through_its_entry_point():
    """Re-rendering a saved result finds the seed-claim kind without anyone importing the reference
    package first, and the generic harness's source never names it."""
    code = ("import sys; from dpaudit.report.kinds import kind_of; "
            "k = kind_of({'kind': 'seed-claim', 'target': 't', 'verdict': 'refuted'}); "
            "print(type(k).__module__, k.rule.id)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["dpaudit.reference.seed_claim_record", "DPA005"]
    report_code = [p for p in (ROOT / "dpaudit" / "report").rglob("*") if p.suffix in (".py", ".j2")]
    naming = [str(p.relative_to(ROOT)) for p in report_code
              if "seed-claim" in p.read_text(encoding="utf-8") or "seed_paper" in p.read_text(encoding="utf-8")]
    assert naming == ["dpaudit/report/kinds/__init__.py"]  # its docstring's example of an entry point


def test_an_unknown_kind_renders_generically_in_every_format():
    rec = {"kind": "plugin-check", "target": "t", "verdict": "refuted", "statement": "x <b>y</b> holds",
           "elapsed_s": 0.1, "reproduce": "run it"}
    k = kind_of(rec)
    assert isinstance(k, GenericRecord) and k.claim_text() == "x <b>y</b> holds"
    run = make_run([rec], seed=1, started=0, finished=1, command="c", git=False)
    html = render_html(run, plots=False)
    assert "x &lt;b&gt;y&lt;/b&gt; holds" in html and "<b>y</b>" not in html
    assert 'type="dpaudit.Refuted"' in render_junit(run)
    (res,) = render_sarif(run)["runs"][0]["results"]
    assert res["ruleId"] == "DPA001" and res["level"] == "error"


def test_registering_a_kind_is_one_class_and_a_taken_kind_is_refused(monkeypatch):
    monkeypatch.setattr(kinds_module, "KINDS", kinds_module.KINDS.copy())  # leave the registry as found

    class Custom(RecordKind):
        kind = "test-custom-kind"
        description = "a custom check"
        rule = SarifRule("DPA099", "CustomRefuted", "short", "full")

        def claim_text(self):
            return f"custom claim on {self.rec['target']}"

    register_kind(Custom)
    register_kind(Custom)  # the same class again is a no-op
    rec = {"kind": "test-custom-kind", "target": "z", "verdict": "not_refuted"}
    assert kind_of(rec).claim_text() == "custom claim on z"
    assert Custom in registered_kinds()

    class Impostor(Custom):
        pass

    with pytest.raises(ValueError, match="already registered"):
        register_kind(Impostor)
    with pytest.raises(TypeError):
        register_kind(dict)


def test_junit_outcomes_are_honest_for_every_verdict():
    base = {"kind": "audit", "target": "t", "claim": {"epsilon": 1, "delta": 0, "neighbours": "replace"}}
    status = {v: kind_of({**base, "verdict": v}).junit_outcome().status
              for v in ("refuted", "not_refuted", "proved", "inconclusive", "error")}
    assert status == {"refuted": "failure", "not_refuted": "passed", "proved": "passed",
                      "inconclusive": "skipped", "error": "error"}
    assert kind_of({**base, "verdict": "inconclusive"}).junit_outcome().message.startswith("INCONCLUSIVE (not a pass)")
    control = kind_of({**base, "verdict": "refuted", "expected": "refuted"}).junit_outcome()
    mismatch = kind_of({**base, "verdict": "not_refuted", "expected": "refuted"}).junit_outcome()
    assert control.status == "passed" and mismatch.status == "failure"
    assert mismatch.type == "dpaudit.ExpectationMismatch"


def test_error_records_have_one_constructor_and_render_their_cause():
    rec = error_record("audit", "m.py:f", "LoadError: no function", reproduce="dpaudit check m.py")
    assert rec["verdict"] == "error" and rec["samples"] == 0 and rec["claim"] is None
    assert kind_of(rec).finding_text() == "the check could not run: LoadError: no function"
    assert kind_of(rec).claim_text() == "m.py:f"
    died = error_record("sensitivity", "s", "died", elapsed_s=None, id="x", expected="not_refuted")
    assert died["id"] == "x" and died["expected"] == "not_refuted" and "samples" not in died
    assert kind_of(died).junit_outcome().status == "failure"


def test_every_record_of_the_committed_report_has_a_registered_kind():
    run = json.loads(COMMITTED.read_text(encoding="utf-8"))
    kinds = {type(kind_of(r)).__name__ for r in run["results"]}
    assert "GenericRecord" not in kinds
    assert {"SampledAudit", "ExactAudit", "SensitivitySearch", "FormalClaim", "SeedClaimRecord"} <= kinds
    for r in run["results"]:
        k = kind_of(r)
        assert k.claim_text() and k.finding_text() and k.facts()[0][0] == "target"


def test_an_interrupted_audit_is_never_described_as_no_violation_found():
    from dpaudit.report.kinds.audit import plain_sentence

    rec = {"kind": "audit", "verdict": "interrupted", "samples": 0, "stages_finished": ["replay (NOT REFUTED)"],
           "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}}
    text = plain_sentence(rec)
    assert "No violation" not in text and "interrupted" in text and "not a pass" in text
    assert "replay (NOT REFUTED)" in text


def test_an_interrupted_audit_names_what_its_sampling_had_done():
    from dpaudit.report.kinds.audit import plain_sentence

    looks = [{"look": 1, "samples": 1765, "alpha": 0.005, "epsilon_lb": 0.48},
             {"look": 2, "samples": 7544, "alpha": 0.005, "epsilon_lb": 0.89}]
    rec = {"kind": "audit", "verdict": "interrupted", "samples": 21309, "looks_finished": looks,
           "stages_finished": [], "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}}
    text = plain_sentence(rec)
    assert "drawn 21,309 samples; the best of its 2 finished early look(s): ε ≥ 0.89 at 99.5% " \
           "confidence (look 2)" in text and "not a pass" in text
    assert "no early look had finished" in plain_sentence({**rec, "looks_finished": []})
    assert "refutes the claim" not in text
    # a finished look above the claim refutes it (its α is part of the run's): said so
    above = plain_sentence({**rec, "claim": {**rec["claim"], "epsilon": 0.5}})
    assert "above the claimed ε = 0.5: that look refutes the claim at the run's confidence" in above
