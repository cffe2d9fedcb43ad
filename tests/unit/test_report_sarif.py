"""SARIF 2.1.0: the object model a code-scanning consumer accepts, one result per refuted claim.

There is no jsonschema dependency, so :func:`validate_sarif` checks the properties SARIF 2.1.0
(OASIS, §3) requires of each object dpaudit writes, and those GitHub code scanning needs
(https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning):
``version``, ``$schema``, ``runs[].tool.driver.name``, rules with ids, results with ``message.text``
and ``ruleId`` matching ``rules[ruleIndex]``, ``level`` in its enum, and physical locations with a
relative ``artifactLocation.uri`` and a ``region.startLine`` >= 1.
"""

import json
import textwrap
from urllib.parse import urlsplit

import pytest

from dpaudit.report import make_run, render_sarif

LEVELS = {"none", "note", "warning", "error"}
KINDS = {"notApplicable", "pass", "fail", "review", "open", "informational"}


def _message(m, where):
    assert isinstance(m, dict) and (isinstance(m.get("text"), str) or isinstance(m.get("id"), str)), where
    if "text" in m:
        assert m["text"].strip(), where


def validate_sarif(log):
    """Raise AssertionError at the first property that breaks the SARIF 2.1.0 object model."""
    log = json.loads(json.dumps(log, allow_nan=False))  # must be plain JSON
    assert log["version"] == "2.1.0"
    assert isinstance(log["$schema"], str) and "sarif-schema-2.1.0" in log["$schema"]
    assert isinstance(log["runs"], list) and log["runs"]
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        assert isinstance(driver["name"], str) and driver["name"]
        rules = driver.get("rules", [])
        ids = [r["id"] for r in rules]
        assert all(isinstance(i, str) and i for i in ids) and len(set(ids)) == len(ids)
        for r in rules:
            for key in ("shortDescription", "fullDescription", "help"):
                if key in r:
                    _message(r[key], f"rule {r['id']} {key}")
            if "defaultConfiguration" in r:
                assert r["defaultConfiguration"].get("level", "warning") in LEVELS
        for inv in run.get("invocations", []):
            assert isinstance(inv["executionSuccessful"], bool)
        assert isinstance(run["results"], list)
        for res in run["results"]:
            _message(res["message"], "result message")
            assert isinstance(res["ruleId"], str)
            if "ruleIndex" in res:
                assert 0 <= res["ruleIndex"] < len(rules) and rules[res["ruleIndex"]]["id"] == res["ruleId"]
            assert res.get("level", "warning") in LEVELS and res.get("kind", "fail") in KINDS
            assert isinstance(res["locations"], list) and res["locations"]
            for loc in res["locations"]:
                phys = loc.get("physicalLocation")
                if phys is not None:
                    uri = phys["artifactLocation"]["uri"]
                    assert isinstance(uri, str) and uri and " " not in uri
                    split = urlsplit(uri)
                    assert split.scheme in ("", "file")
                    if not split.scheme:
                        assert phys["artifactLocation"].get("uriBaseId") == "%SRCROOT%"
                    region = phys.get("region", {})
                    assert isinstance(region.get("startLine", 1), int) and region.get("startLine", 1) >= 1
                for ll in loc.get("logicalLocations", []):
                    assert isinstance(ll.get("fullyQualifiedName", ""), str)
            for fp in res.get("partialFingerprints", {}).values():
                assert isinstance(fp, str)
            for sup in res.get("suppressions", []):
                assert sup["kind"] in ("inSource", "external")
                assert sup.get("status", "accepted") in ("accepted", "underReview", "rejected")
    return True


def rec(verdict, kind="audit", **extra):
    r = {"kind": kind, "target": "m.py:noisy", "verdict": verdict, "elapsed_s": 0.1, "reproduce": "dpaudit check m.py",
         "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}, "epsilon_lower_bound": 2.0,
         "confidence": 0.9, "samples": 10}
    r.update(extra)
    return r


def test_one_result_per_refuted_claim_at_the_mechanism_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "my mech.py").write_text(textwrap.dedent("""\
        import dpaudit


        def helper():
            pass


        def noisy(data, rng):
            return data.sum()
        """))
    records = [
        rec("refuted", target="pkg/my mech.py:noisy"),                          # line from the file
        rec("refuted", kind="sensitivity", target="f", location={"path": "pkg/s.py", "line": 42}),
        rec("not_refuted"), rec("proved", kind="formal"), rec("error", error="boom"),
        rec("refuted", kind="formal", target="l2-2d", id="ctrl", expected="refuted"),
    ]
    log = render_sarif(make_run(records, seed=1, started=0, finished=1, command="dpaudit check", git=False))
    assert validate_sarif(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    # one rule per record kind (seven: audit, exact, sensitivity, formal, curve, one-run, replay;
    # and the seed claims' of mechanisms/), one per finding of an audit, then the replay audit's per
    # finding kind (its first, DPA006, is the replay kind's own)
    assert len(rules) == 26 and len({r["id"] for r in rules}) == 26
    assert [r["id"] for r in rules[8:10]] == ["dpaudit/logic", "dpaudit/float64"]
    assert [r["id"] for r in rules[10:12]] == ["DPA008", "DPA009"]
    results = run["results"]
    assert len(results) == 3
    first = results[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"] == {"uri": "pkg/my%20mech.py", "uriBaseId": "%SRCROOT%"}
    assert first["region"]["startLine"] == 8
    second = results[1]["locations"][0]["physicalLocation"]
    assert second["artifactLocation"]["uri"] == "pkg/s.py" and second["region"]["startLine"] == 42
    assert rules[results[1]["ruleIndex"]]["name"] == "SensitivityBoundRefuted"
    assert "REFUTED" in results[0]["message"]["text"] and "dpaudit check m.py" in results[0]["message"]["text"]
    assert results[2]["suppressions"][0]["status"] == "accepted"  # an expected control finding
    assert "locations" in results[2] and "physicalLocation" not in results[2]["locations"][0]


def test_validator_catches_broken_logs():
    """The validator itself can fail (so the test above means something)."""
    good = render_sarif(make_run([rec("refuted", location={"path": "a.py", "line": 3})], seed=1, started=0,
                                 finished=1, command="c", git=False))
    assert validate_sarif(good)
    breakers = [
        lambda g: g.update(version="2.0.0"),
        lambda g: g["runs"][0]["tool"]["driver"].pop("name"),
        lambda g: g["runs"][0]["results"][0].update(level="fatal"),
        lambda g: g["runs"][0]["results"][0].update(ruleIndex=3),
        lambda g: g["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"].update(startLine=0),
        lambda g: g["runs"][0]["results"][0].pop("message"),
    ]
    for breaker in breakers:
        bad = json.loads(json.dumps(good))
        breaker(bad)
        try:
            validate_sarif(bad)
        except (AssertionError, KeyError):
            continue
        raise AssertionError("validator accepted a broken log")


def test_no_refutation_means_no_results_but_a_valid_log():
    log = render_sarif(make_run([rec("not_refuted")], seed=1, started=0, finished=1, command="c", git=False))
    assert validate_sarif(log) and log["runs"][0]["results"] == []


@pytest.mark.parametrize("verdict, successful, level", [
    ("error", False, "error"), ("interrupted", False, "error"), ("inconclusive", True, "warning")])
def test_a_run_that_decided_nothing_is_not_a_clean_run(verdict, successful, level):
    # an empty result list alone read as a clean scan: code scanning must see the run failed, or
    # decided nothing, in the invocation's notifications
    log = render_sarif(make_run([rec(verdict, error="ZeroDivisionError" if verdict == "error" else None)],
                                seed=1, started=0, finished=1, command="c", git=False))
    assert validate_sarif(log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is successful
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == level and "this is not a pass" in note["message"]["text"]
    assert verdict.upper() in note["message"]["text"]


def test_a_decided_run_has_no_such_notification():
    log = render_sarif(make_run([rec("not_refuted"), rec("refuted", location={"path": "a.py", "line": 3})],
                                seed=1, started=0, finished=1, command="c", git=False))
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is True and "toolExecutionNotifications" not in invocation


def seed_claim(verdict, **extra):
    r = {"kind": "seed-claim", "target": "S1-eq7-density", "verdict": verdict, "recorded_verdict": "refuted",
         "seed_paper": "001", "source": "Chen, Pal and Golubchik (2016) eq (7)", "statement": "p(x|α) = ((1+α)/(1−α)) α^{|x|} is a pmf on ℤ",
         "spec": "docs/math.md#geometric", "errata": ["E9"], "observed": 100.67, "bound": 1.0, "detail": "sums to 100.67",
         "elapsed_s": 0.01, "reproduce": "dpaudit audit audits/seed_claims.py --id x --seed 1",
         "recheck": "python -c 'recheck'", "location": {"path": "mechanisms/seed001_claims.py", "line": 330}}
    r.update(extra)
    return r


def test_a_refuted_seed_claim_is_a_suppressed_note_at_its_definition():
    """A paper's statement refuted as recorded is no defect in code: an accepted suppression, level note."""
    records = [seed_claim("refuted", id="seed001/s1-eq7-density", expected="refuted"),
               seed_claim("refuted"),                                          # a module record: recorded refuted
               seed_claim("refuted", id="seed001/held", expected="not_refuted", recorded_verdict="not_refuted"),
               seed_claim("not_refuted", id="seed001/ok", expected="not_refuted", recorded_verdict="not_refuted")]
    log = render_sarif(make_run(records, seed=1, started=0, finished=1, command="dpaudit audit", git=False))
    assert validate_sarif(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == 3
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == "DPA005"
        assert rules[res["ruleIndex"]]["name"] == "SeedStatementRefuted"
        phys = res["locations"][0]["physicalLocation"]
        assert phys["artifactLocation"] == {"uri": "mechanisms/seed001_claims.py", "uriBaseId": "%SRCROOT%"}
        assert phys["region"]["startLine"] == 330
        assert "Chen, Pal and Golubchik (2016) eq (7): p(x|α)" in res["message"]["text"] and res["properties"]["errata"] == ["E9"]
    for res in results[:2]:
        assert res["level"] == "note" and res["suppressions"][0]["status"] == "accepted"
        just = res["suppressions"][0]["justification"]
        assert "a statement of Chen, Pal and Golubchik (2016) eq (7)" in just and "E9, docs/math.md#e9" in just and "not a defect in this code" in just
    assert results[2]["level"] == "error" and "suppressions" not in results[2]   # the recorded verdict broke
    seed_rule = next(r for r in rules if r["name"] == "SeedStatementRefuted")
    assert seed_rule["defaultConfiguration"]["level"] == "note"
