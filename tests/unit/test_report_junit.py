"""JUnit XML: parses, one test case per claim, honest outcomes, controls judged by expectation."""

import xml.etree.ElementTree as ET

from dpaudit.report import make_run, render_junit


def rec(verdict, target="m", **extra):
    r = {"kind": "audit", "target": target, "verdict": verdict, "elapsed_s": 0.5, "reproduce": "dpaudit check m.py",
         "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}, "epsilon_lower_bound": 1.2,
         "confidence": 0.95, "samples": 100}
    r.update(extra)
    return r


def cases(run):
    root = ET.fromstring(render_junit(run).encode("utf-8"))
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    return root, suite, suite.findall("testcase")


def outcome(case):
    for tag in ("failure", "error", "skipped"):
        if case.find(tag) is not None:
            return tag
    return "passed"


def test_one_case_per_claim_with_honest_outcomes():
    records = [rec("refuted"), rec("not_refuted"), rec("proved", kind="formal"), rec("inconclusive", kind="formal"),
               rec("error", error="mechanism raised ValueError")]
    run = make_run(records, seed=1, started=0, finished=1, command="c", git=False)
    root, suite, tcs = cases(run)
    assert len(tcs) == len(records) == int(suite.get("tests")) == int(root.get("tests"))
    assert [outcome(c) for c in tcs] == ["failure", "passed", "passed", "skipped", "error"]
    assert suite.get("failures") == "1" and suite.get("errors") == "1" and suite.get("skipped") == "1"
    assert tcs[3].find("skipped").get("message").startswith("INCONCLUSIVE (not a pass)")
    assert "not a proof" in tcs[1].find("system-out").text
    assert "ε ≥ 1.2" in tcs[0].find("failure").get("message")
    assert "reproduce: dpaudit check m.py" in tcs[0].find("failure").text


def test_under_fail_on_inconclusive_an_inconclusive_case_fails():
    # the exit code failed the job while the file showed every case passed or skipped
    records = [rec("inconclusive", kind="formal"), rec("not_refuted")]
    run = make_run(records, seed=1, started=0, finished=1, command="c", git=False,
                   fail_on_inconclusive=True)
    root, suite, tcs = cases(run)
    assert [outcome(c) for c in tcs] == ["failure", "passed"]
    assert suite.get("failures") == "1" == root.get("failures") and suite.get("skipped") == "0"
    fail = tcs[0].find("failure")
    assert fail.get("type") == "dpaudit.Inconclusive"
    assert fail.get("message").startswith("failing under --fail-on-inconclusive: INCONCLUSIVE (not a pass)")
    plain = make_run(records, seed=1, started=0, finished=1, command="c", git=False)
    assert "fail_on_inconclusive" not in plain and [outcome(c) for c in cases(plain)[2]] == ["skipped", "passed"]


def test_controls_pass_when_the_expected_verdict_is_met():
    records = [rec("refuted", id="broken", expected="refuted"), rec("not_refuted", id="ok", expected="refuted")]
    _, _, tcs = cases(make_run(records, seed=1, started=0, finished=1, command="c", git=False))
    assert [outcome(c) for c in tcs] == ["passed", "failure"]
    assert "expected REFUTED, got NOT REFUTED" in tcs[1].find("failure").get("message")
    assert tcs[0].get("name").startswith("broken [")


def test_hostile_text_still_parses():
    bad = 'x\x00\x07<a>&"\'\ufffe'
    run = make_run([rec("refuted", target=bad, reproduce=bad)], seed=1, started=0, finished=1,
                   command=bad, git=False)
    _, _, tcs = cases(run)
    assert len(tcs) == 1 and "<a>&" in tcs[0].get("name")


def seed_claim(verdict, expected, **extra):
    r = {"id": f"seed001/{verdict}-{expected}", "kind": "seed-claim", "target": "S1-eq7-density", "verdict": verdict,
         "expected": expected, "recorded_verdict": expected, "seed_paper": "001", "source": "Chen, Pal and Golubchik (2016) eq (7)",
         "statement": "p(x|α) = ((1+α)/(1−α)) α^{|x|} is a pmf on ℤ", "spec": "docs/math.md#geometric", "errata": ["E9"],
         "observed": 100.67, "bound": 1.0, "detail": "sums to 100.67", "elapsed_s": 0.01,
         "reproduce": "dpaudit audit audits/seed_claims.py --id x --seed 1", "recheck": "python -c 'recheck'",
         "location": {"path": "mechanisms/seed001_claims.py", "line": 330}}
    r.update(extra)
    return r


def test_seed_claims_are_cases_judged_by_their_expected_verdict():
    records = [seed_claim("refuted", "refuted"), seed_claim("not_refuted", "not_refuted"),
               seed_claim("refuted", "not_refuted"), seed_claim("error", "refuted", error="ZeroDivisionError")]
    root, suite, tcs = cases(make_run(records, seed=1, started=0, finished=1, command="c", git=False))
    assert len(tcs) == 4 == int(suite.get("tests")) == int(root.get("tests"))
    assert [outcome(c) for c in tcs] == ["passed", "passed", "failure", "failure"]
    assert suite.get("failures") == "2" and suite.get("errors") == "0"
    assert all(c.get("classname") == "dpaudit.seed-claim" and c.get("file") == "mechanisms/seed001_claims.py"
               for c in tcs)
    assert "Chen, Pal and Golubchik (2016) eq (7): p(x|α)" in tcs[0].get("name")
    out = tcs[0].find("system-out").text
    assert "REFUTED: the claim is false" in out and "sums to 100.67" in out and "re-check: python -c 'recheck'" in out
    assert "not a proof" in tcs[1].find("system-out").text
    assert "expected NOT REFUTED, got REFUTED" in tcs[2].find("failure").get("message")
