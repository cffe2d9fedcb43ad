"""One set of numbers: every format (terminal, JSON, Markdown, HTML, JUnit, SARIF) shows a finding's
bound with that finding's own confidence and sample count, and the terminal names whose they are
where the run's own differ; records print by their shortest exact repr, and D and D′ are shown
around the record that differs, marked, however they are cut. Records are built by hand (the
fixtures of test_report_findings), so no audit runs here."""

import io
import json

import pytest

from dpaudit.progress import Progress
from dpaudit.report import make_run, render_html, render_junit, render_markdown, render_sarif
from dpaudit.report.formatting import pair_records, record
from dpaudit.report.kinds.audit import counterexample_text

from test_report_findings import record as fixture


def _run(rec):
    return make_run([rec], seed=1, started=0, finished=1, command="dpaudit check f.py", git=False)


def _terminal(rec):
    out = io.StringIO()
    Progress(stream=io.StringIO(), out=out, enabled=False).finish(rec)
    return out.getvalue()


def _record():
    """The issue's numbers: the run drew 61,722 samples at 95% family-wise; the logic finding's
    bound holds at 99.78% on its 13,500 validation samples."""
    rec = fixture("both")
    rec["samples"], rec["confidence"] = 61722, 0.95
    rec["findings"]["logic"]["samples"], rec["findings"]["logic"]["confidence"] = 13500, 0.9978
    return rec


@pytest.mark.slow
def test_every_format_gives_the_finding_its_own_confidence_and_samples():
    rec = _record()
    run = _run(rec)
    formats = {"terminal": _terminal(rec), "markdown": render_markdown(run), "html": render_html(run),
               "junit": render_junit(run), "sarif": json.dumps(render_sarif(run), ensure_ascii=False)}
    for name, text in formats.items():
        assert "99.78% confidence" in text, name
        # the run's 95% is never given as the confidence of the logic finding's bound
        assert "ε ≥ 1.73 at 95% confidence" not in text, name
    assert "13,500 samples" in formats["terminal"] and "13,500 samples" in formats["markdown"]
    finding = json.loads(json.dumps(rec))["findings"]["logic"]
    assert (finding["confidence"], finding["samples"]) == (0.9978, 13500)


def test_the_terminal_says_whose_the_run_numbers_are():
    line = _terminal(_record()).splitlines()[0]
    assert ("ε ≥ 1.73 at 99.78% confidence (claimed ε = 1) from 13,500 samples (the logic finding's; "
            "the run drew 61,722 at 95% over its findings)") in line


def test_a_record_without_findings_keeps_its_own_numbers():
    line = _terminal(fixture("old")).splitlines()[0]
    assert "at 95% confidence (claimed ε = 1) from 61,284 samples; counterexample" in line


@pytest.mark.parametrize("value, text", [(1e-12, "1e-12"), (0.1, "0.1"), (2.0 ** -40, "9.094947017729282e-13"),
                                         (1 / 3, "0.3333333333333333"), (0, "0.0"), (float("nan"), "nan"),
                                         (float("-inf"), "-inf"), (5e-324, "5e-324")])
def test_records_print_by_their_shortest_exact_repr(value, text):
    assert record(value) == text
    if value == value:
        assert float(text) == value


def test_d_and_d_prime_are_shown_around_the_differing_record_whatever_the_cut():
    d = [i / 7 for i in range(50)]
    replaced = d[:37] + [1e-12] + d[38:]
    a, b = pair_records(d, replaced)
    assert f"⟨{d[37]!r}⟩" in a and "⟨1e-12⟩" in b
    assert a.endswith("(50 records)") and a.startswith("[…, ")
    added = d[:3] + [0.5] + d[3:]
    a, b = pair_records(d, added)
    assert "⟨0.5⟩" in b and "⟨" not in a and a.startswith("[0.0, ")
    last = pair_records(d, d[:-1])
    assert last[0].endswith(f"⟨{d[-1]!r}⟩] (50 records)")  # the last record, removed: no cut after it
    cx = counterexample_text({"dataset": d, "neighbour": replaced, "event": {"text": "output > 1"}})
    assert "⟨1e-12⟩" in cx and "event output > 1" in cx


def test_a_short_pair_is_shown_whole_with_its_record_marked():
    assert pair_records([1.0, 2.0 ** -40], [2.0 ** -40]) == ("[⟨1.0⟩, 9.094947017729282e-13]", "[9.094947017729282e-13]")
    assert pair_records([], [1.0]) == ("[]", "[⟨1.0⟩]")


def test_a_confidence_below_one_never_reads_100_percent():
    # --confidence 0.999999999 printed "at 100% confidence"
    from dpaudit.report.formatting import percent

    assert [percent(c) for c in (0.95, 0.975, 0.9955, 0.999999999)] == ["95", "97.5", "99.55", "99.9999999"]
    assert percent(None) == "—" and percent(1.0) == "100"
