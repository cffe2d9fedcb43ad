"""The Markdown summary: findings first, honest wording, hostile strings escaped, size capped."""

from dpaudit.report import make_run, render_markdown
from dpaudit.report.markdown import MAX_ROWS, code, escape

HOSTILE = "<script>x</script> | *bold* [link](http://e.vil) `tick`"


def rec(target="m.py:f", verdict="not_refuted", **extra):
    r = {"kind": "audit", "target": target, "verdict": verdict, "elapsed_s": 0.5,
         "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}, "epsilon_lower_bound": 0.9,
         "confidence": 0.95, "samples": 1000, "reproduce": f"dpaudit check {target}"}
    r.update(extra)
    return r


def run_of(*records):
    return make_run(list(records), seed=4, started=0, finished=1, command="dpaudit check m.py", git=False)


def test_findings_list_refuted_errors_and_mismatches_with_their_reproduce_line():
    text = render_markdown(run_of(rec("a.py:ok"), rec("b.py:leak", "refuted", epsilon_lower_bound=2.5),
                                  rec("c.py:ctl", "refuted", expected="refuted"),
                                  rec("d.py:miss", "not_refuted", expected="refuted"),
                                  {"kind": "audit", "target": "e.py:f", "verdict": "error", "error": "boom"}))
    assert text.startswith("## dpaudit: 2 refuted, 2 not refuted, 1 error\n")
    findings = text.split("### Findings (3)")[1].split("<details>")[0]
    assert "b.py:leak" in findings and "d.py:miss" in findings and "e.py:f" in findings
    assert "c.py:ctl" not in findings and "a.py:ok" not in findings  # a control met, a pass
    assert "`dpaudit check b.py:leak`" in findings and "ε ≥ 2.5 at 95% confidence" in findings
    assert "(expected REFUTED, MISMATCH)" in findings and "the check could not run: boom" in findings
    assert "it is not a proof" in text and "INCONCLUSIVE is not a pass" in text
    assert text.count("\n| ") == 1 + 5  # header and one row per result


def test_a_clean_run_says_nothing_was_refuted_without_claiming_proof():
    text = render_markdown(run_of(rec()))
    assert "No claim refuted, no error, nothing inconclusive." in text
    assert "proved" not in text.lower().replace("only proved proves", "")


def test_hostile_strings_cannot_inject_markup():
    text = render_markdown(run_of(rec(HOSTILE, "refuted", reproduce="run ``x`` now")))
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "[link](" not in text and "\\[link\\]" in text and "\\*bold\\*" in text and "\\|" in text
    assert "```run ``x`` now```" in text
    assert escape("a\nb") == "a b" and code("`x`") == "`` `x` ``"


def test_rows_are_capped_for_a_pull_request_comment():
    text = render_markdown(run_of(*[rec(f"m{i}.py:f", "refuted") for i in range(MAX_ROWS + 7)]))
    assert "… and 7 more (see the JSON result)" in text and "… and 7 more rows" in text
    assert len(text) < 65_536


def test_a_refuted_finding_says_how_its_pair_was_found_and_a_hostile_label_is_escaped():
    """``details.pair_label`` (the HTML report shows it among the facts) is told under a refuted
    finding: "the float above 2^53: 10 records, one removed" explains a counterexample of huge
    records; a finding that does not refute says nothing of its pair."""
    refuted = rec("b.py:leak", "refuted", epsilon_lower_bound=2.5,
                  details={"pair_label": "the float above 2^53: 10 records, one removed"})
    held = rec("a.py:ok", details={"pair_label": "the float above 2^53: 10 records, one removed"})
    hostile = rec("c.py:f", "refuted", details={"pair_label": HOSTILE})
    text = render_markdown(run_of(refuted, held, hostile))
    assert text.count("- pair found by: the float above 2^53: 10 records, one removed") == 1
    assert "- pair found by: &lt;script&gt;" in text and "<script>" not in text


def test_one_result_is_one_result():
    md = render_markdown(run_of(rec()))
    assert "1 result · " in md and "All 1 result</summary>" in md and "1 results" not in md
    md = render_markdown(run_of(rec(), rec("m.py:g")))
    assert "2 results · " in md and "All 2 results</summary>" in md
