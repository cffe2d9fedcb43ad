"""The HTML report: self-contained, escaped, honest about verdicts, with inline SVG plots."""

import datetime as dt
from html.parser import HTMLParser

import numpy as np
import pytest

from dpaudit.claims import Neighbours, PureDP
from dpaudit.report import make_run, render_html
from dpaudit.results import AuditResult, Counterexample, Interval, Verdict

T0 = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.timezone.utc)
HOSTILE = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>'


class Tags(HTMLParser):
    """Collect every start tag with its attributes, and the text per result section."""

    def __init__(self):
        super().__init__()
        self.tags, self.sections, self._section = [], {}, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "section" and attrs.get("id"):
            self._section = attrs["id"]
            self.sections[self._section] = ""

    def handle_endtag(self, tag):
        if tag == "section":
            self._section = None

    def handle_data(self, data):
        if self._section:
            self.sections[self._section] += data


def parse(text):
    p = Tags()
    p.feed(text)
    return p


def sampled(target="noisy_sum", verdict=Verdict.REFUTED, details=None, event_text="output > 0.5"):
    cx = Counterexample((0.0, 1.0), (0.0,), {"kind": "threshold", "text": event_text, "threshold": 0.5,
                                             "side": ">"},
                        0.4, 0.1, Interval(0.35, 0.45), Interval(0.08, 0.12))
    return AuditResult(target, PureDP(1.0), Neighbours.ADD_REMOVE, verdict, 1.4, None, 0.95,
                       10_000, cx, f"dpaudit check m.py:{target}", 1.0, details=details or {})


def run_of(*records):
    return make_run(list(records), seed=5, started=T0, finished=T0, command="dpaudit check m.py", git=False)


def test_hostile_strings_are_inert():
    """A page with <script> in a name, a docstring, an output, an error and the event is inert."""
    rec = sampled(target=HOSTILE, event_text=HOSTILE).to_record()
    rec["description"] = HOSTILE
    rec["counterexample"]["dataset"] = [HOSTILE]
    hist = {"histogram": {"atoms": [HOSTILE, "$\\frac{a}{$", "ok"], "p": [0.5, 0.3, 0.2], "q": [0.2, 0.3, 0.5]}}
    rec["details"] = hist
    err = {"kind": "audit", "target": HOSTILE, "verdict": "error", "error": HOSTILE, "reproduce": HOSTILE}
    text = render_html(run_of(rec, err))
    tags = parse(text).tags
    assert [t for t, _ in tags if t == "script"] == []
    assert [t for t, _ in tags if t == "img"] == []
    assert not any(k.startswith("on") for _, attrs in tags for k in attrs)
    assert "&lt;script&gt;" in text
    assert "<svg" in text  # the histogram with hostile atom labels was still drawn, escaped
    csp = [a for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"] and "script-src" not in csp[0]["content"]


def test_self_contained_no_external_resources():
    text = render_html(run_of(sampled(details=_plot_details())))
    for tag, attrs in parse(text).tags:
        for key in ("src", "href"):
            v = attrs.get(key) or ""
            assert not v.startswith(("http:", "https:", "//")), (tag, v)
        assert tag not in ("script", "iframe", "object", "embed")
        if tag == "link":
            assert attrs.get("href", "").startswith("data:")
    assert "<style>" in text


def _plot_details():
    rng = np.random.default_rng(0)
    return {"samples": {"d": rng.laplace(size=500).tolist(), "d_prime": (rng.laplace(size=500) + 1).tolist()},
            "bound_curve": {"threshold": np.linspace(-1, 2, 12).tolist(),
                            "epsilon_lower_bound": np.linspace(0.2, 1.3, 12).tolist(), "chosen": 0.5}}


def test_verdicts_are_never_promoted():
    """NOT REFUTED is never shown as proved or passed; INCONCLUSIVE never as a pass."""
    formal = {"kind": "formal", "target": "c", "verdict": "inconclusive", "smt2": "(check-sat)\n"}
    text = render_html(run_of(sampled(verdict=Verdict.NOT_REFUTED), formal))
    sections = parse(text).sections
    assert "NOT REFUTED" in sections["r1"] and "not a proof" in sections["r1"]
    assert "PROVED" not in sections["r1"]
    assert "INCONCLUSIVE" in sections["r2"] and "not a pass" in sections["r2"]
    assert "PROVED" not in sections["r2"]
    for word in ("PASS", "Passed", "passed", "✔ OK"):
        assert word not in text


def test_result_section_shows_claim_bound_counterexample_plots_and_reproduce():
    text = render_html(run_of(sampled(details=_plot_details())))
    sec = parse(text).sections["r1"]
    for piece in ("ε = 1 (pure DP), add-remove neighbours", "ε lower bound", "1.4", "95% (family-wise)",
                  "10,000", "output > 0.5", "[0.35, 0.45]", "[0.08, 0.12]", "dpaudit check m.py:noisy_sum"):
        assert piece in sec, piece
    assert text.count("<svg") == 1 and "histograms of the outputs on D and on D′" in text
    assert "the ε lower bound each candidate threshold would give" in text and "clipped at 0" in text


@pytest.mark.slow
def test_missing_or_malformed_plot_data_degrades_to_no_plot():
    """Malformed histograms and curves are left out (no crash); what remains is the picture every
    counterexample has: P[M(D) ∈ S] against P[M(D′) ∈ S] with their intervals."""
    bad = [{"histogram": {"p": [1, 2], "q": [1]}}, {"samples": {"d": ["a"], "d_prime": [1]}},
           {"bound_curve": {"threshold": [1, 2], "epsilon_lower_bound": [1]}}, {"histogram": "x"}]
    text = render_html(run_of(*[sampled(details=b) for b in bad], sampled()))
    assert text.count('class="result') == 5 and text.count("<svg") == 5
    assert "histograms of" not in text and "threshold would give" not in text
    assert text.count("P[M(D) ∈ S] and P[M(D′) ∈ S] on the validation split") == 5
    no_cx = sampled(verdict=Verdict.NOT_REFUTED).to_record()
    no_cx["counterexample"] = None
    no_cx.pop("findings", None)
    assert "<svg" not in render_html(run_of(no_cx))


def test_formal_proof_text_and_run_metadata_are_shown():
    smt = "(declare-const x Real)\n(assert (< x (- x)))\n(check-sat)\n"
    formal = {"kind": "formal", "target": "l1-helly-2d", "verdict": "proved", "smt2": smt,
              "id": "formal-l1", "expected": "proved", "reproduce": "dpaudit verify --claim l1-helly-2d"}
    run = run_of(formal)
    run["git_commit"] = "0123456789abcdef"
    text = render_html(run)
    assert "(assert (&lt; x (- x)))" in text
    assert "0123456789ab" in text and "numpy" in text and str(run["environment"]["numpy"]) in text
    assert "2026-11-22T07:00:00Z" in text and ">5<" in text.replace(" ", "")
    assert "expected PROVED" in text and "EXPECTED VERDICTS MET" in text


@pytest.mark.slow
def test_rendering_is_deterministic():
    run = run_of(sampled(details=_plot_details()))
    assert render_html(run) == render_html(run)


def test_discrete_outputs_get_bars_with_the_event_atoms_marked():
    rng = np.random.default_rng(1)
    rec = sampled(details={"samples": {"d": rng.integers(0, 5, 300).tolist(),
                                       "d_prime": rng.integers(1, 6, 300).tolist()}}).to_record()
    event = {"kind": "atoms", "atoms": [0, 1], "text": "output ∈ {0, 1}"}
    rec["counterexample"]["event"] = event
    if rec.get("findings"):
        rec["findings"]["logic"]["counterexample"]["event"] = event
    text = render_html(run_of(rec))
    assert text.count("<svg") == 1
    svg = text[text.index("<svg"):text.index("</svg>")]
    assert "event S" in svg and "M(D′)" in svg


def seed_claim(verdict="refuted", expected="refuted", statement="u = |#(x<r) − #(x>r)| <script>x</script>", **extra):
    """A suite record of kind seed-claim, as dpaudit.suite.run_one writes it."""
    rec = {"id": "seed004/s004-eq21-sign", "kind": "seed-claim", "target": "s004-eq21-sign", "verdict": verdict,
           "recorded_verdict": expected, "agrees": verdict == expected, "seed": 7, "seed_paper": "004",
           "source": "eq 2.1", "statement": statement, "spec": "docs/math.md#quantile-utility", "errata": ["E29"], "observed": 0.0,
           "bound": 4.0, "detail": "the density is highest on cell 0", "counterexample": {"mode_cell": 0},
           "elapsed_s": 0.01, "reproduce": "dpaudit audit audits/seed_claims.py --id seed004/s004-eq21-sign --seed 7",
           "recheck": "python -c \"from dpaudit.reference.seed_claims import evaluate_claims\"", "error": None,
           "expected": expected, "location": {"path": "mechanisms/seed_claims.py", "line": 310},
           "group": "audits/seed_claims.py: The seed papers' own statements", "description": "the EM-for-medians notes (2020), " + statement}
    rec.update(extra)
    return rec


def test_seed_claims_show_statement_source_spec_errata_evidence_and_recheck():
    held = seed_claim("not_refuted", "not_refuted", statement="eq 2.2 has change-one sensitivity ≤ 1",
                      id="seed004/s004-thm2", errata=[], detail="sensitivity = 1 over 3000 pairs")
    text = render_html(run_of(seed_claim(), held))
    page = parse(text)
    assert [t for t, _ in page.tags if t == "script"] == []
    sec = page.sections["r1"]
    assert "u = |#(x&lt;r) − #(x&gt;r)| &lt;script&gt;x&lt;/script&gt;" in text   # the statement, escaped
    for piece in ("Statement:", "the EM-for-medians notes (2020) eq 2.1: u = |#(x<r)", "docs/math.md#quantile-utility", "E29", "the EM-for-medians notes (2020)", "observed", "bound",
                  "The density is highest on cell 0", "(observed 0 against bound 4)", "mode_cell",
                  "mechanisms/seed_claims.py:310", "REFUTED (the re-check agrees)", "expected REFUTED",
                  "Re-check the statement alone", "from dpaudit.reference.seed_claims import evaluate_claims",
                  "dpaudit audit audits/seed_claims.py --id seed004/s004-eq21-sign --seed 7"):
        assert piece in sec, piece
    assert sec.count("u = |#(x<r)") == 1            # the description repeats the statement: shown once
    assert "recorded_verdict" not in sec and "recheck" not in sec   # no raw duplicates under details
    held_sec = page.sections["r2"]
    assert "NOT REFUTED" in held_sec and "not a proof" in held_sec and "PROVED" not in held_sec
    assert "errata (docs/math.md#errata)none" in held_sec.replace("\n", "")
    assert '<tr class="group"><th colspan="8">audits/seed_claims.py: The seed papers&#39; own statements' in text
    assert text.count('<tr class="group">') == 1 and '<td class="nowrap">seed-claim</td>' in text
    assert "Seed claims (evidence" in text and "Seed claims (evidence" not in render_html(run_of(sampled()))


def test_a_real_seed_claim_record_renders():
    from dpaudit.reference.claims import evaluate

    rec = evaluate("s001-eq7-density")[0].to_record()
    sec = parse(render_html(run_of(rec))).sections["r1"]
    assert "Chen, Pal and Golubchik (2016) eq (7): p(x|α)" in sec and "E9" in sec and "REFUTED" in sec and "100.6673" in sec


def test_every_verdict_has_a_coloured_badge_and_border():
    """A verdict whose badge has no background rule prints white text on white (the summary
    card of INTERRUPTED did): the template styles each verdict's badge and result border."""
    from importlib.resources import files

    css = (files("dpaudit.report") / "templates" / "report.html.j2").read_text()
    from dpaudit.report.findings import NOT_APPLICABLE

    # a finding with no question (float64 on integers) is NOT APPLICABLE: it had white on white
    assert f".badge.{NOT_APPLICABLE} {{ background: var(--{NOT_APPLICABLE}); }}" in css
    assert f"--{NOT_APPLICABLE}:#" in css
    for v in Verdict:
        assert f".badge.{v.value} {{ background: var(--{v.value}); }}" in css, v
        assert f"--{v.value}:#" in css, v
        if v is not Verdict.NOT_REFUTED:  # the default border colour of a result is its colour
            assert f"section.result.{v.value} {{ border-left-color: var(--{v.value}); }}" in css, v


def test_a_not_refuted_result_states_what_its_budget_could_have_shown():
    """The terminal line's "this budget cannot show ε above …" was only in the raw JSON of the
    HTML report: a reviewer could not tell a weak audit from a strong one there."""
    rec = dict(sampled(verdict=Verdict.NOT_REFUTED).to_record(),
               limits={"epsilon_ceiling": 7.201, "delta_floor": 0.005475})
    sec = parse(render_html(run_of(rec), plots=False)).sections["r1"]
    assert "this budget's reach" in sec
    assert "this budget cannot show ε above 7.201 nor δ below 0.005475" in sec


def test_a_reproduce_line_wraps_between_its_flags_never_inside_one():
    """A long line broke at a flag's own hyphens ('--call-timeout=2 --' then 'float=error'): a
    reader copying it by eye, or from a wrapped print, got a broken command."""
    rec = dict(sampled().to_record(), reproduce="dpaudit check m.py:f --call-timeout=2 --float=error")
    text = render_html(run_of(rec), plots=False)
    assert "<span>--call-timeout=2</span> <span>--float=error</span>" in text
    assert "pre.command span { white-space: nowrap; }" in text
    assert "dpaudit check m.py:f --call-timeout=2 --float=error" in parse(text).sections["r1"]


def test_a_replay_that_saw_no_noise_says_so_in_the_summary():
    # an OpenDP target's noise is drawn in Rust: "replay: INCONCLUSIVE" beside a REFUTED read as a
    # failed check
    from dpaudit.report.html import _stage_summary  # private: the summary's replay line

    stage = {"kind": "replay", "verdict": "inconclusive",
             "findings": [{"kind": "no_noise_intercepted", "severity": "limit"}]}
    (line,) = _stage_summary({"replay": stage})
    assert line["verdict"] == "inconclusive"
    assert line["verdict_label"] == "INCONCLUSIVE (no noise call seen; the sampling decides)"
    (other,) = _stage_summary({"replay": {**stage, "findings": []}})
    assert other["verdict_label"] == "INCONCLUSIVE"


def test_a_float_policy_no_result_used_says_so():
    from dpaudit.report.html import _policy_lines  # private: the header's policy lines

    counts = {"kind": "audit", "verdict": "not_refuted", "float_policy": "error",
              "findings": {"logic": {"question": "logic", "verdict": "not_refuted"},
                           "float": {"question": "float", "verdict": None,
                                     "reason": "outputs are integers or categories: there is no float64 question"}}}
    ((policy, meaning),) = _policy_lines([counts])
    assert policy == "error" and meaning.endswith("(no result here had a float64 question: no output held a real number)")
    reals = {**counts, "findings": {**counts["findings"], "float": {"question": "float", "verdict": "not_refuted"}}}
    assert _policy_lines([reals]) == [("error", "a porous float64 implementation refutes the claim")]


def test_the_float64_cells_chart_counts_the_kept_outputs_and_never_says_never():
    # the chart is drawn from the validation outputs the record keeps (the first few thousand);
    # its "never" for D′ stood beside a table of 0.04% (11 of 27,694) from all of them.
    # Fixed seed; the textbook float64 Laplace with its scale halved: refuted by both findings
    import numpy as np

    import dpaudit
    from dpaudit.report.findings import FLOAT, finding
    from dpaudit.report.plots import porosity_data, record_svgs

    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3)
    def half(data, rng, size=None):
        return float(np.sum(data)) + rng.laplace(0, 0.5, size=size)

    rec = dpaudit.audit(half, samples=20_000, seed=3).to_record()
    flt = finding(rec, FLOAT).rec
    po = porosity_data(flt)
    assert po is not None and po.kept_p > 0 and po.kept_q > 0
    svg = " ".join(s for _, s in record_svgs(flt, "t"))
    assert "never" not in svg and f"the first {min(po.kept_p, po.kept_q):,} a side" in svg


def test_a_paired_refutation_chart_says_its_bound_is_not_read_off_the_intervals():
    # the dashed line is e^ε·q_hi + δ from the two intervals shown; a paired bound refutes from
    # the pairs' joint counts, where p's interval can still reach the line (a reviewer read the
    # chart as contradicting the verdict)
    from dpaudit.report.plots import probabilities, record_svgs

    rec = {"verdict": "refuted", "claim": {"epsilon": 1.0, "delta": 0.127},
           "counterexample": {"p": 0.389, "q": 0.0828, "p_interval": [0.372, 0.406],
                              "q_interval": [0.0747, 0.0915]},
           "details": {"bound_method": "paired"}}
    pr = probabilities(rec)
    assert pr.paired and pr.p_interval[0] < pr.ceiling  # the case: p's lower end under the line
    assert not probabilities(dict(rec, details={"bound_method": "marginal"})).paired
    assert "the bound counts the pairs together" in " ".join(svg for _, svg in record_svgs(rec, "t"))


def test_a_replaced_record_among_equal_ones_is_marked_where_it_is():
    # D and D′ part at index 5 alone; the edit script deleted D's last (equal) record and
    # inserted D′'s sixth, so the HTML marked D's last record
    from dpaudit.report.kinds.base import dataset_views

    t = 9.094947017729282e-13
    d, dn = [1.0] + [t] * 9, [1.0] + [t] * 4 + [0.0] + [t] * 4
    views, words = dataset_views(d, dn)
    assert [m for _, m in views[0].items] == [m for _, m in views[1].items]
    assert [i for i, (_, m) in enumerate(views[0].items) if m] == [5]
    assert "the record replaced" in words


def test_a_dict_outputs_chart_names_the_key_as_the_text_does():
    # the text said "coordinate 'sum'" and the chart title "coordinate 1"
    from dpaudit.estimators.events import Event
    from dpaudit.estimators.scores import Coordinate
    from dpaudit.report.plots import probabilities

    event = Event(Coordinate(1, "sum"), "above", 0.5, None).to_record()
    assert event["coordinate"] == 1 and event["coordinate_name"] == "'sum'"
    rec = {"claim": {"epsilon": 1.0}, "counterexample": {"p": 0.6, "q": 0.2, "event": event}}
    assert probabilities(rec).title == "the event S on coordinate 'sum': D against D′"
