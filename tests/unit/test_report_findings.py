"""Two findings per audit record: every renderer shows the logic and the float64 finding
apart, from records only. The records are built by hand following the record contract (both
refuted; float-only refuted under ``--float error``; float-only under ``--float warn``; a snapped
mechanism with float64 NOT REFUTED; integer outputs; ``--float off``; an ERROR record; an older
record without ``findings``), so no audit runs here.
"""

import copy
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from dpaudit.exitcodes import ExitCode, exit_code
from dpaudit.progress import Progress
from dpaudit.report import make_run, render_html, render_junit, render_markdown, render_sarif
from dpaudit.report.describe import one_line
from dpaudit.report.findings import porosity_text
from dpaudit.report.kinds import kind_of
from dpaudit.report.kinds.audit import plain_sentence

from test_report_sarif import validate_sarif

CLAIM = {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove", "domain": [0.0, 1.0], "size": 10}
D = [0.31, 0.87, 0.05, 0.66, 0.12, 0.94, 0.48, 0.23, 0.71, 0.39, 0.58, 0.02, 0.83, 0.27, 0.45, 0.91, 0.14, 0.6, 0.77]
D_PRIME = D[:7] + [1.0] + D[7:]      # one record added in the middle: 20 records
FLOAT_TEXT = ("outputs in (−0.03125, −0.015625] with exactly 6 trailing zero mantissa bits, and 1 more cell "
              "(12.1% of outputs on D, never on D′)")


def _samples(seed=3, shift=1.0):
    rng = np.random.default_rng(seed)
    a = rng.laplace(size=600)
    b = rng.laplace(size=600) + shift
    return {"d": a.tolist(), "d_prime": b.tolist()}


def logic_finding(verdict="refuted", eps_lb=1.73, alpha=0.025, samples=True):
    cx = {"dataset": D, "neighbour": D_PRIME,
          "event": {"text": "output > 0.9", "kind": "threshold", "side": "above", "threshold": 0.9, "lo": 0.9,
                    "hi": "inf"},
          "p": 0.62, "p_interval": [0.6, 0.64], "q": 0.1, "q_interval": [0.09, 0.11]}
    details = {"bound_method": "ratio", "alpha": alpha, "pair_label": "one record added", "projected_bound": 1.6,
               "validation": {"n_D": 15000, "n_D_prime": 15000, "in_event_D": 9300, "in_event_D_prime": 1500,
                              "both": None, "design": "independent"},
               "event_thresholds": [0.9], "candidates_validated": 3, "output_kind": "real scalar"}
    if samples:
        details["samples"] = _samples()
        t = np.linspace(-2.0, 3.0, 30)
        details["bound_curve"] = {"threshold": t.tolist(), "epsilon_lower_bound": (1.8 - (t - 0.9) ** 2).tolist(),
                                  "chosen": 0.9}
    return {"question": "logic", "verdict": verdict, "reason": None, "epsilon_lower_bound": eps_lb,
            "delta_lower_bound": None, "counterexample": cx if verdict != "error" else None,
            "p_value": 1e-12 if verdict == "refuted" else 0.4, "margin": eps_lb, "marginal": False, "power": None,
            "alpha": alpha, "confidence": 1 - alpha, "samples": 61284, "error": None, "details": details}


def float_finding(verdict="refuted", eps_lb=8.35, alpha=0.025, reason=None):
    if verdict == "not_applicable":
        return {"question": "float", "verdict": "not_applicable", "reason": reason, "epsilon_lower_bound": None,
                "delta_lower_bound": None, "counterexample": None, "p_value": None, "margin": None,
                "marginal": None, "power": None, "alpha": None, "confidence": None, "samples": None,
                "error": None, "details": {}}
    s = _samples()
    cx = {"dataset": [], "neighbour": [1.0],
          "event": {"text": FLOAT_TEXT, "kind": "float-structure", "family": "trailing", "reason": "porosity",
                    "side": "above",
                    "cells": ["outputs in (−0.03125, −0.015625] with exactly 6 trailing zero mantissa bits",
                              "outputs in [0.015625, 0.03125) whose last mantissa bit is 1"],
                    "cell_codes": [130246.0, 130176.0]},
          "p": 0.121, "p_interval": [0.115, 0.127], "q": 0.0, "q_interval": [0.0, 0.0002]}
    if verdict != "refuted":
        cx["p"], cx["p_interval"], cx["q"], cx["q_interval"] = 0.05, [0.045, 0.055], 0.04, [0.036, 0.044]
    details = {"bound_method": "ratio", "alpha": alpha, "pair_label": "empty vs one record at hi",
               "projected_bound": 7.9, "validation": {"n_D": 15000, "n_D_prime": 15000, "in_event_D": 1815,
                                                      "in_event_D_prime": 0, "both": None,
                                                      "design": "independent"},
               "event_thresholds": [], "samples": s}
    return {"question": "float", "verdict": verdict, "reason": None, "epsilon_lower_bound": eps_lb,
            "delta_lower_bound": None, "counterexample": cx, "p_value": 1e-30 if verdict == "refuted" else 0.5,
            "margin": eps_lb, "marginal": False, "power": None, "alpha": alpha, "confidence": 1 - alpha,
            "samples": 61284, "error": None, "details": details}


def _record(verdict, policy, decided_by, logic, flt, target="f.py:f"):
    top = {"logic": logic, "float": flt}[decided_by]
    rec = {"kind": "audit", "target": target, "claim": dict(CLAIM), "verdict": verdict, "method": "sampled",
           "epsilon_lower_bound": top["epsilon_lower_bound"], "delta_lower_bound": None, "confidence": 0.95,
           "samples": 61284, "counterexample": copy.deepcopy(top["counterexample"]),
           "reproduce": f"dpaudit check {target} --epsilon=1 --seed=1", "elapsed_s": 1.2, "error": None, "seed": 1,
           "p_value": top["p_value"], "margin": top["margin"], "marginal": top["marginal"], "power": None,
           "reproducible": True, "details": copy.deepcopy(top["details"]),
           "location": {"path": "f.py", "line": 3},
           "float_policy": policy, "decided_by": decided_by, "findings": {"logic": logic, "float": flt}}
    return rec


def record(case: str) -> dict:
    """One record of :data:`CASES`."""
    if case == "both":
        return _record("refuted", "error", "logic", logic_finding(), float_finding())
    if case == "float_only":
        return _record("refuted", "error", "float", logic_finding("not_refuted", 0.49), float_finding())
    if case == "float_warn":
        return _record("not_refuted", "warn", "logic", logic_finding("not_refuted", 0.49), float_finding())
    if case == "snapped":
        return _record("not_refuted", "error", "logic", logic_finding("not_refuted", 0.49),
                       float_finding("not_refuted", 0.9))
    if case == "integers":
        return _record("not_refuted", "error", "logic", logic_finding("not_refuted", 0.49),
                       float_finding("not_applicable", reason="outputs are integers: there is no float64 question"))
    if case == "float_off":
        return _record("not_refuted", "off", "logic", logic_finding("not_refuted", 0.49),
                       float_finding("not_applicable", reason="--float off: not asked"))
    if case == "error":
        err = {"kind": "audit", "target": "f.py:f", "verdict": "error", "claim": None, "epsilon_lower_bound": None,
               "delta_lower_bound": None, "confidence": None, "samples": 0, "counterexample": None,
               "reproduce": "dpaudit check f.py:f", "elapsed_s": 0.1,
               "error": "mechanism raised ZeroDivisionError: division by zero"}
        return err
    if case == "old":
        rec = _record("refuted", "error", "logic", logic_finding(), float_finding())
        for key in ("float_policy", "decided_by", "findings"):
            rec.pop(key)
        return rec
    raise KeyError(case)


CASES = ("both", "float_only", "float_warn", "snapped", "integers", "float_off", "error", "old")


def run_of(*records):
    return make_run(list(records), seed=1, started=0, finished=1, command="dpaudit check f.py", git=False)


def terminal(rec):
    out = io.StringIO()
    Progress(stream=io.StringIO(), out=out, enabled=False).finish(rec)
    return out.getvalue().rstrip("\n")


# -- the terminal line ------------------------------------------------------------------------------

def test_terminal_lines_follow_the_contract():
    claim = "ε = 1 (pure DP), add-remove neighbours, domain [0, 1], size 10"
    cell = "outputs in (−0.03125, −0.015625] with exactly 6 trailing zero mantissa bits … and 1 more cell"
    fix = "fix: snap the output to a grid (Mironov 2012) or use integer noise"
    both = terminal(record("both"))
    # the confidence and samples of the finding whose bound it is, as every format shows them, and
    # the run's own, named
    assert both.startswith(f"f.py:f: REFUTED (logic) — {claim}; ε ≥ 1.73 at 97.5% confidence (claimed ε = 1) "
                           "from 61,284 samples (the logic finding's; the run drew 61,284 at 95% over its findings)")
    # the float64 finding's own pair is named where it is not the line's counterexample
    # ... and, the logic refuted too, it is not called porous nor sent to snapping (LOGIC_FIRST)
    assert (f"; float64: refutes too (ε ≥ 8.35: on D = [], D′ = [⟨1.0⟩], {cell} (12.1% of outputs on D, "
            f"never on D′); fix: the logic first, then audit again") in both and "snap" not in both
    only = terminal(record("float_only"))
    assert only.startswith(f"f.py:f: REFUTED (float64 only; the logic is NOT REFUTED, ε ≥ 0.49) — {claim}; "
                           "ε ≥ 8.35 at 97.5% confidence")
    assert f"porosity: {cell} (12.1% of outputs on D, never on D′); {fix}" in only
    assert "float64: porous" not in only  # the float64 finding is the headline, not a tail
    warn = terminal(record("float_warn"))
    assert warn.startswith(f"f.py:f: NOT REFUTED (logic) — {claim}; ε ≥ 0.49")
    assert "; float64: porous (warning, --float warn) (ε ≥ 8.35: " in warn and fix in warn
    assert terminal(record("snapped")).startswith(f"f.py:f: NOT REFUTED — {claim}; ε ≥ 0.49")
    assert "; float64: porosity not found (ε ≥ 0.9)" in terminal(record("snapped"))
    assert "; float64: no question (outputs are integers)" in terminal(record("integers"))
    assert "; float64: not asked (--float off)" in terminal(record("float_off"))
    assert terminal(record("error")).startswith("f.py:f: ERROR — f.py:f; the check could not run: mechanism raised")
    old = terminal(record("old"))
    assert old.startswith(f"f.py:f: REFUTED — {claim}; ε ≥ 1.73 at 95% confidence") and "float64" not in old
    for case in CASES:
        assert terminal(record(case)).count("\n") == 0
        assert terminal(record(case)).startswith(one_line(record(case)))


def test_the_porosity_text_names_at_most_two_cells():
    """However long the core's event text, the renderer cuts after two cells and counts the rest."""
    cells = [f"outputs in [{2.0 ** -k:g}, {2.0 ** (1 - k):g}) whose last mantissa bit is 1" for k in range(3, 12)]
    older = {"kind": "float-structure", "reason": "porosity", "cell_codes": list(range(31)),
             "text": "; ".join(cells[:6]) + "; … (31 cells in all) (porosity: 40.19% of the outputs on D, never "
                     "on D′; float64 rounding leaves different sets of doubles reachable from D and D′, Mironov 2012)"}
    assert porosity_text(older) == (f"{cells[0]}; {cells[1]} … and 29 more cells "
                                    "(40.19% of the outputs on D, never on D′)")
    newer = {"kind": "float-structure", "reason": "porosity", "cell_codes": list(range(23)),
             "text": f"{cells[0]}; {cells[1]}; and 21 more cells (porosity: 38.95% of the outputs on D, never on D′)"}
    assert porosity_text(newer) == f"{cells[0]}; {cells[1]} … and 21 more cells (38.95% of the outputs on D, never on D′)"
    long_list = {"kind": "float-structure", "reason": "porosity", "text": "; ".join(cells) + " (12% of outputs on D, never on D′)"}
    assert porosity_text(long_list).count("outputs in") == 2 and "… and 7 more cells" in porosity_text(long_list)
    one = {"kind": "float-structure", "text": "outputs in [0.5, 1) whose last mantissa bit is 1"}
    assert porosity_text(one) == "outputs in [0.5, 1) whose last mantissa bit is 1"
    rec = record("float_only")
    rec["counterexample"]["event"] = older
    line = terminal(rec)
    assert line.count("whose last mantissa bit is 1") == 2 and "… and 29 more cells" in line


# -- plain sentences ---------------------------------------------------------------------------------

def test_each_finding_leads_with_a_plain_sentence():
    logic = kind_of(record("old")).lead()
    assert logic.startswith("On D the event “output > 0.9” is at least 5.64 times likelier than on D′ "
                            "(62% of outputs on D, 10% on D′, at 95% confidence); a claim of ε = 1 allows at most "
                            "2.72 times.")
    rec = record("float_only")
    flt = plain_sentence(dict(rec, question="float"))
    assert flt.startswith("The output's float64 bits tell D from D′: 12.1% of outputs on D fall in 2 float64 cells")
    assert "never reach" in flt and "a claim of ε = 1 allows at most 2.72 times" in flt
    assert "This is not a proof." in plain_sentence(record("snapped"))
    approx = record("old")
    approx["claim"] = dict(approx["claim"], delta=1e-6)
    approx["delta_lower_bound"] = 0.33
    text = plain_sentence(approx)
    assert "has probability at least 0.6" in text and "by 0.33" in text and "a gap of at most δ = 1e-06" in text
    # a paired bound is not p_lo − e^ε q_hi of the intervals shown: the sentence says what it is
    approx["details"] = dict(approx.get("details") or {}, bound_method="paired")
    text = plain_sentence(approx)
    assert "counted on pairs drawn with the same randomness, P[D] − e^ε·P[D′] is at least 0.33" in text
    assert "times its probability on D′" not in text and "a gap of at most δ = 1e-06" in text
    assert plain_sentence(record("error")).startswith("The check could not run: mechanism raised")


# -- HTML --------------------------------------------------------------------------------------------

def sections(html):
    from test_report_html import parse

    return parse(html).sections


def test_html_shows_the_two_findings_apart_and_states_the_policy():
    html = render_html(run_of(*[record(c) for c in CASES]), plots=False)
    secs = sections(html)
    for key in [f"r{i}" for i in range(1, 7)]:
        assert "Logic: the claim for the mechanism as a model over the reals" in secs[key]
        assert "Float64: the implementation's output bits (porosity)" in secs[key]
    assert "(logic)" in secs["r1"] and "(logic)" in secs["r3"] and "(logic)" not in secs["r4"]
    assert "(float64 only; the logic is NOT REFUTED, ε ≥ 0.49)" in secs["r2"] and "decides the verdict" in secs["r2"]
    assert "a warning under --float warn: it does not change the verdict" in secs["r3"]
    assert "Fix: snap the output to a grid (Mironov 2012) or use integer noise (a discrete Laplace or discrete Gaussian, Canonne, Kamath and Steinke 2020)." in " ".join(secs["r3"].split())
    assert "No violation found: the most telling of the float64 bits tried" in secs["r4"]
    assert "No float64 question here: outputs are integers." in secs["r5"]
    assert "Not asked (--float off): only the logic question was audited." in secs["r6"]
    # a policy the mechanism's decorator chose is named as the verdict line names it, not as a flag
    declared = dict(record(CASES[5]), float_policy_from="declaration")
    page = render_html(run_of(declared), plots=False)
    assert "Not asked (float=&#39;off&#39; declared by the mechanism): only the logic question" in page
    assert "mechanism raised ZeroDivisionError" in secs["r7"] and "Logic:" not in secs["r7"]
    assert "Logic:" not in secs["r8"] and "Float64:" not in secs["r8"] and "5.64 times likelier" in secs["r8"]
    for policy in ("error", "warn", "off"):
        assert f'Float64 policy <strong class="mono">{policy}</strong>' in html
    assert "confidence per finding" in secs["r1"] and "logic 97.5%, float64 97.5% (together 95%)" in secs["r1"]
    assert html.count('<details class="stats"><summary>statistical details</summary>') == 6 * 2 - 2 + 1  # not for a question not asked
    assert "candidates validated (family-wise)" in html.split('<details class="stats">')[1]


@pytest.mark.slow
def test_html_marks_the_differing_record_and_shows_datasets_whole():
    html = render_html(run_of(record("old")))
    sec = sections(html)["r1"]
    assert "…" not in sec.split("event S")[0]          # 19 and 20 records, shown whole
    assert '<mark class="added" title="added">1.0</mark>' in html
    assert sec.count("0.77") == 2 and "19 records" in sec and "20 records" in sec
    assert "highlighted: the record in D′ and not in D" in sec
    big = record("old")
    values = [round(0.001 * i, 3) for i in range(400)]
    big["counterexample"]["dataset"] = values
    big["counterexample"]["neighbour"] = values[:250] + [0.9999] + values[251:]   # one record replaced
    html = render_html(run_of(big))
    assert html.count('<mark class="changed"') == 2 and "0.9999" in html
    assert "… 237 records …" in html and "400 records" in html


@pytest.mark.slow
def test_html_plots_every_event_kind_that_has_a_picture():
    # porosity: the cells of S and the bit patterns, from the samples' doubles
    html = render_html(run_of(record("float_only")))
    assert "float64 cells of S" in html and "trailing zero bits in S" in html
    # a coordinate of vector outputs: that coordinate's histograms when samples are in the record ...
    rng = np.random.default_rng(4)
    vec = record("old")
    vec["counterexample"]["event"] = {"kind": "threshold", "text": "coordinate 2 > 0.5", "coordinate": 2,
                                      "threshold": 0.5, "side": "above"}
    vec["details"] = {"samples": {"d": rng.laplace(size=(300, 3)).tolist(),
                                  "d_prime": (rng.laplace(size=(300, 3)) + [0, 0, 1]).tolist()}}
    html = render_html(run_of(vec))
    assert "coordinate 2 on D and D′ (validation split)" in html and "histograms of coordinate 2" in html
    # ... else P against P′ with their intervals
    vec["details"] = {}
    html = render_html(run_of(vec))
    assert "the event S on coordinate 2: D against D′" in html and "Clopper-Pearson intervals" in html
    # a score event: P against P′, and what the score weighs
    score = record("old")
    score["counterexample"]["event"] = {"kind": "score", "text": "logistic score < -4.9",
                                        "score": {"kind": "logistic", "weights": [0.0, 3.9, -0.1, 0.03]}}
    score["details"] = {}
    html = render_html(run_of(score))
    assert "the score event S: D against D′" in html and "what the score event looks at" in html
    assert "P[M(D′) ∈ S]" in html.split("<svg")[1]


def test_the_bound_curve_is_clipped_at_zero_and_says_what_it_shows():
    from matplotlib.figure import Figure

    from dpaudit.report.plots import _curve_axes, curve_data, record_svgs  # private: the plot axes the caption describes

    rec = record("old")
    assert min(rec["details"]["bound_curve"]["epsilon_lower_bound"]) < -4
    ax = Figure().subplots()
    _curve_axes(ax, curve_data(rec), 1.0)
    assert ax.get_ylim()[0] == 0 and np.nanmin(ax.get_lines()[0].get_ydata()) >= 0
    (caption, svg), = record_svgs(rec, "x")
    assert "clipped at 0" in caption and "against the claimed ε" in caption


@pytest.mark.slow
def test_plots_span_the_content_width():
    """Figures are drawn 11 inches wide (over 1,000 px) and the page lets them fill the 1,180 px column:
    at a 1,400 px window each plot is wider than 900 px."""
    html = render_html(run_of(record("float_only")))
    assert "figure svg { display:block; width: 100%; height: auto; }" in html
    assert "main { max-width: 1180px;" in html
    widths = [float(w) for w in __import__("re").findall(r'<svg role="img"[^>]*? width="([\d.]+)pt"', html)]
    assert widths and min(widths) * 96 / 72 >= 900


# -- Markdown, SARIF, JUnit -------------------------------------------------------------------------

def test_markdown_shows_the_two_findings_apart():
    text = render_markdown(run_of(*[record(c) for c in CASES]))
    findings = text.split("### Findings")[1].split("<details>")[0]
    assert "**REFUTED** (float64 only; the logic is NOT REFUTED, ε ≥ 0.49)" in findings
    assert "  - logic: **NOT REFUTED**: No violation found" in findings
    assert "  - float64: **REFUTED** (warning: --float warn): The output's float64 bits" in findings
    assert "    - fix: snap the output to a grid (Mironov 2012) or use integer noise (a discrete Laplace" in findings
    assert "float64 policy `warn`" in text and "float64 policy `error`" in text and "float64 policy `off`" in text
    assert "| **NOT REFUTED** (float64 warning) |" in text and "| **REFUTED** (float64 only) |" in text


def test_sarif_has_a_rule_per_finding_and_a_warning_under_warn():
    log = render_sarif(run_of(*[record(c) for c in CASES]))
    assert validate_sarif(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    by_rule = [(r["ruleId"], r["level"]) for r in results]
    assert by_rule == [("dpaudit/logic", "error"), ("dpaudit/float64", "error"),      # both refuted
                       ("dpaudit/float64", "error"),                                    # float-only, error
                       ("dpaudit/float64", "warning"),                                  # float-only, warn
                       ("DPA001", "error")]                                             # an older record
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    assert "Fix: snap the output" in results[1]["message"]["text"]
    assert "A warning under --float warn" in results[3]["message"]["text"]
    assert results[0]["partialFingerprints"] != results[1]["partialFingerprints"]
    assert results[3]["properties"]["float_policy"] == "warn" and results[3]["properties"]["question"] == "float"
    assert run["properties"]["float_policy"] == ["error", "warn", "off"]


def junit_cases(run):
    root = ET.fromstring(render_junit(run).encode("utf-8"))
    return root, root.find("testsuite").findall("testcase")


def outcome(case):
    return next((tag for tag in ("failure", "error", "skipped") if case.find(tag) is not None), "passed")


def test_junit_has_a_case_per_finding():
    root, tcs = junit_cases(run_of(*[record(c) for c in CASES]))
    names = [c.get("name") for c in tcs]
    assert names[:12] == ["f.py:f [logic]", "f.py:f [float64]"] * 6
    assert [outcome(c) for c in tcs] == ["failure", "failure",        # both
                                         "passed", "failure",         # float-only under error
                                         "passed", "passed",          # float-only under warn
                                         "passed", "passed",          # snapped
                                         "passed", "skipped",         # integer outputs
                                         "passed", "skipped",         # --float off
                                         "error",                     # an error record
                                         "failure"]                   # an older record
    assert root.get("tests") == str(len(tcs)) == "14"
    warn = tcs[5].find("system-out").text
    assert "WARNING (--float warn): the float64 implementation is porous" in warn and "fix: snap the output" in warn
    assert "NOT APPLICABLE" in tcs[9].find("skipped").get("message") and "outputs are integers" in \
        tcs[9].find("skipped").get("message")
    assert "--float off" in tcs[11].find("skipped").get("message")
    assert "claim refuted by its float64 finding" in tcs[3].find("failure").get("message")


def test_exit_codes_follow_the_overall_verdict():
    assert exit_code([record("float_only")]) == ExitCode.REFUTED
    assert exit_code([record("float_warn")]) == ExitCode.OK
    assert exit_code([record("snapped"), record("integers"), record("float_off")]) == ExitCode.OK
    assert exit_code([record("both")], exit_zero=True) == ExitCode.OK
    assert exit_code([record("error")]) not in (ExitCode.OK, ExitCode.REFUTED)


def test_a_record_without_a_float_policy_renders_as_one_finding():
    """A result built by hand (no float policy) carries an unasked float finding: shown as before."""
    from dpaudit.claims import Neighbours, PureDP
    from dpaudit.results import AuditResult, Verdict

    rec = AuditResult("m.py:f", PureDP(1.0), Neighbours.ADD_REMOVE, Verdict.REFUTED, 1.4, None, 0.95, 100, None,
                      "dpaudit check m.py:f", 1.0).to_record()
    assert "float64" not in one_line(rec)
    html = render_html(run_of(rec))
    assert "Float64:" not in sections(html)["r1"]
    _, tcs = junit_cases(run_of(rec))
    assert len(tcs) == 1


def test_findings_survive_the_json_round_trip(tmp_path):
    from dpaudit.report import read_json, write_json

    run = run_of(*[record(c) for c in CASES])
    back = read_json(write_json(run, tmp_path / "r.json"))
    assert render_html(back, plots=False) == render_html(run, plots=False)
    assert [terminal(r) for r in back["results"]] == [terminal(r) for r in run["results"]]


def test_a_sensitivity_counterexample_leads_with_its_sentence_and_is_drawn():
    rec = {"kind": "sensitivity", "target": "stats.py:mean", "verdict": "refuted", "elapsed_s": 0.3,
           "reproduce": "dpaudit check stats.py:mean --sensitivity=0.1", "error": None,
           "claim": {"bound": 0.1, "individual": None, "neighbours": "add-remove", "norm": "l1"},
           "max_gap": 1.0, "ratio": 10.0, "examples": 18, "evaluations": 82, "profile": "ci",
           "counterexample": {"dataset": [1.0], "neighbour": [], "individual": None, "f_dataset": 1.0,
                              "f_neighbour": 0.0, "gap": 1.0, "allowed": 0.1}}
    lead = kind_of(rec).lead()
    assert lead.startswith("On D = [1.0] the function returns 1, on its neighbour D′ = [] it returns 0: a gap of 1, "
                           "10 times the 0.1 the declared sensitivity allows.")
    html = render_html(run_of(rec))
    sec = sections(html)["r1"]
    assert '<mark class="removed" title="removed">1.0</mark>' in html and "the function on D and on its neighbour" in html
    assert sec.index("On D = [1.0]") < sec.index("f(D′)") and "statistical details" in sec
    assert "profile" in html.split('<details class="stats">')[1].split("</details>")[0]


def test_a_replaced_record_is_one_change():
    rec = record("old")
    rec["counterexample"]["dataset"] = [3.5, -0.5, -0.5, -0.5]
    rec["counterexample"]["neighbour"] = [-0.5, -0.5, -0.5, -0.5]
    rec["claim"]["neighbours"] = "replace"
    html = render_html(run_of(rec), plots=False)
    assert html.count('<mark class="changed"') == 2
    assert "highlighted: the record replaced, 3.5 in D and -0.5 in D′" in html


def test_an_exact_loss_over_several_noised_values_is_said_to_be_theirs_together():
    """Two noised values, each Laplace(1) on an input moved by 1: the HTML put the total ε = 2 on
    each call ("with noise of scale 1 that change costs exactly ε = 2"); each costs 1."""
    from dpaudit.report.kinds.replay_words import finding_sentence

    each = {"coordinate": 0, "distribution": "laplace", "D": 1.0, "D_prime": 0.0, "scale": 1.0, "loss": 1.0}
    values = {"epsilon_exact": 2.0, "epsilon_claimed": 1.0, "D": 1.0, "D_prime": 0.0, "scale": 1.0,
              "revealed": [each, dict(each, coordinate=1)]}
    text = finding_sentence({"kind": "exact_loss_exceeded", "values": values}, "m.py:5")
    assert "shows this noisy value and 1 other themselves" in text, text
    assert "the 2 noised values together cost exactly ε = 2 of privacy" in text, text
    alone = finding_sentence({"kind": "exact_loss_exceeded", "values": dict(values, revealed=[each])})
    assert "that change costs exactly ε = 2" in alone


def test_a_float64_fix_fits_its_event():
    """A NaN that one dataset gives was told to "snap the output (Mironov 2012) or use integer
    noise", which fixes neither a NaN nor a zero's sign."""
    from dpaudit.report.findings import FLOAT_FIX, float_fix

    def rec(cells, reason="porosity"):
        return {"counterexample": {"event": {"cells": cells, "reason": reason}}}

    assert float_fix(rec(["output is NaN (non-finite output)"])).startswith("make the output finite")
    assert float_fix(rec(["outputs equal to −0.0"], "signed-zero")).startswith("release +0.0")
    assert float_fix(rec(["output is NaN (non-finite output)", "outputs in [0.5, 1) whose last "
                          "mantissa bit is 1"])) == FLOAT_FIX
    assert float_fix({}) == FLOAT_FIX


def test_discrete_outputs_are_labelled_by_value_and_the_caption_shades_only_what_is_drawn():
    """A categorical histogram's ticks read the values (3.572e+86, not the first ten characters
    3.57177037; -8, not -8.0); a threshold event shades the values it holds (``output > 0.9``:
    1, 2 and 3), and the caption says the event S is shaded only where the panel shades it."""
    from dpaudit.report.plots import _atom_labels, _marked, histogram_data, record_svgs  # private: what is drawn

    assert _atom_labels([3.5717703701e86, -8.0, -0.0, 0.5, "a$b"]) == ["3.572e+86", "-8", "0", "0.5", "a$b"]
    assert _atom_labels([1.00001, 1.00002]) == ["1.00001", "1.00002"]  # digits enough to tell apart
    rec = record("old")  # its event: output > 0.9
    del rec["details"]["bound_curve"]
    rec["details"]["samples"] = {"d": [0.0, 1.0, 2.0, 3.0] * 50, "d_prime": [0.0, 0.0, 2.0, 3.0] * 50}
    assert _marked(histogram_data(rec)) == [1, 2, 3]
    (caption, svg), = record_svgs(rec, "x")
    assert "the event S shaded" in caption
    ticks = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert ticks[:4] == ["0", "1", "2", "3"], ticks  # integral outputs read as integers, not 1.0
    rec["details"]["samples"] = {"d": [-3.0, -2.0] * 50, "d_prime": [-2.0, -1.0] * 50}
    assert _marked(histogram_data(rec)) == []
    (caption, svg), = record_svgs(rec, "x")
    assert "the event S not among the outputs shown" in caption and "shaded" not in caption


def test_a_float64_refutation_beside_a_refuted_logic_does_not_advise_snapping():
    # a noise scale halved showed its logic gap in the float64 cells too: "float64: porous (…;
    # fix: snap the output)" sent a reviewer to snapping, where the fix was the noise scale
    from dpaudit.report import findings as fnd

    flt = {"question": "float", "verdict": "refuted", "epsilon_lower_bound": 1.39, "decides": False,
           "counterexample": {"event": {"kind": "float_cells", "cells": ["[1, 2) with 3 bits"]}}}
    logic = {"question": "logic", "verdict": "refuted", "epsilon_lower_bound": 1.84, "decides": True}
    rec = {"kind": "audit", "verdict": "refuted", "float_policy": "error",
           "findings": {"logic": logic, "float": flt}}
    assert fnd.float_fix(flt, rec) == fnd.LOGIC_FIRST
    assert fnd.float_status(rec).startswith("float64: refutes too (ε ≥ 1.39") and "snap" not in fnd.float_status(rec)
    sound = dict(rec, findings={"logic": dict(logic, verdict="not_refuted"), "float": flt})
    assert fnd.float_fix(flt, sound) == fnd.FLOAT_FIX and fnd.float_status(sound).startswith("float64: porous")


def test_an_inconclusive_with_a_reason_says_it_in_the_plain_sentence():
    # the CLI line and the JSON said why (no event to choose); HTML and Markdown said only
    # "The audit could not decide"
    rec = {"kind": "audit", "verdict": "inconclusive", "claim": {"epsilon": 1.0},
           "reason": "it found no event: its 11,100 outputs were 2,300 distinct categories"}
    assert plain_sentence(rec) == ("The audit could not decide: it found no event: its 11,100 outputs "
                                   "were 2,300 distinct categories. This is not a pass.")
