"""A replay audit's record in every report format: each finding at its call site
(path:line and the line of code) with both values, the scale, the declared sensitivity and the
excess; for data-dependent control flow and noise scale, the two runs' sequences side by side where
they part; SARIF with one rule per finding kind and a result per finding at its call site; JUnit
naming the call sites, with the notes in its output.

The records come from :func:`dpaudit.replay_audit` on small mechanisms written here (their lines
carry ``# site: NAME``). The replay draws from a seeded generator: its findings are deterministic."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from dpaudit.replay import primitive, replay_audit, replay_pair
from dpaudit.replay.compare import AROUND
from dpaudit.report import make_run, render_html, render_junit, render_markdown, render_sarif

SEED = 20261122
HERE = __file__
#: the path the records' locations give for this file (as `dpaudit check` run at the repository root)
REL = "tests/report/test_replay_report.py"


def _line(marker: str) -> int:
    """The line of this file that carries ``# site: marker``."""
    with open(HERE, encoding="utf-8") as fh:
        for i, text in enumerate(fh, start=1):
            if text.rstrip().endswith(f"# site: {marker}"):
                return i
    raise AssertionError(marker)


@primitive(sensitivity="sens", epsilon="eps", input="x", distribution="laplace")
def laplace_release(x, sens, eps, rng):
    return x + rng.laplace(scale=sens / eps)


def unclipped_sum(data, rng):
    """Declares sensitivity 0.25 for a sum of records in [0, 1]: one record moves it by up to 1."""
    return float(laplace_release(data.sum(), 0.25, 1.0, rng))  # site: primitive


def scale_from_size(data, rng):
    """A mean whose Laplace scale is 1/n, n the private dataset size, after Poisson sampling."""
    keep = data[rng.random(len(data)) < 0.5]               # site: sampling
    n = max(len(data), 1)
    return keep.sum() / n + rng.laplace(scale=1.0 / n) if n < 100 else 0.0  # site: scale


def branches_on_size(data, rng):
    """Twelve draws, then Laplace or Gaussian noise depending on the dataset's size, then eight."""
    warm = [rng.laplace(scale=1.0) for _ in range(12)]      # site: warm
    if len(data) > 3:
        out = data.sum() + rng.laplace(scale=1.0)           # site: big
    else:
        out = data.sum() + rng.normal(scale=1.0)            # site: small
    tail = [rng.laplace(scale=2.0) for _ in range(8)]       # site: tail
    return out + 0 * (sum(warm) + sum(tail))


def _record(f, location_marker: str) -> dict:
    r = replay_audit(f, epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=6, seed=SEED)
    rec = r.to_record()
    rec["location"] = {"path": REL, "line": _line(location_marker)}  # as `dpaudit check` writes it
    return rec


@pytest.fixture(scope="module")
def records() -> dict:
    return {"primitive": _record(unclipped_sum, "primitive"), "scale": _record(scale_from_size, "scale"),
            "branch": _record(branches_on_size, "big")}


@pytest.fixture(scope="module")
def run(records) -> dict:
    return make_run(list(records.values()), seed=SEED, started=0, finished=1, command="dpaudit check --replay",
                    git=False)


def _one(rec: dict, kind: str) -> dict:
    found = [f for f in rec["findings"] if f["kind"] == kind]
    assert found, f"no {kind} in {[f['kind'] for f in rec['findings']]}"
    return found[0]


def _section(html: str, index: int) -> str:
    """The HTML of result ``index`` (1-based)."""
    return html.split(f'id="r{index}"', 1)[1].split("</section>", 1)[0]


# -- the records ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_mechanisms_give_the_three_findings_at_their_lines(records):
    prim = _one(records["primitive"], "sensitivity_exceeded")
    assert records["primitive"]["verdict"] == "refuted" and prim["site"]["line"] == _line("primitive")
    assert prim["values"]["sensitivity"] == 0.25 and prim["values"]["excess"] > 0
    scale = _one(records["scale"], "data_dependent_noise_scale")
    assert records["scale"]["verdict"] == "inconclusive" and scale["site"]["line"] == _line("scale")
    branch = _one(records["branch"], "data_dependent_control_flow")
    assert branch["site"]["line"] in (_line("big"), _line("small"))


@pytest.mark.slow
def test_a_control_flow_finding_carries_both_runs_calls_around_where_they_part(records):
    seq = _one(records["branch"], "data_dependent_control_flow")["values"]["sequence"]
    assert seq["of"] == "calls" and seq["parted_at"] == 12
    # five entries before the parting one, five after it, and how many were left out around them
    assert seq["before"] == 12 - AROUND and [e["index"] for e in seq["D"]] == list(range(7, 18))
    assert seq["after_D"] == seq["after_D_prime"] == 21 - 18
    part_d, part_dp = seq["D"][AROUND], seq["D_prime"][AROUND]
    assert {part_d["method"], part_dp["method"]} == {"laplace", "normal"}
    lines = {part_d["site"], part_dp["site"]}
    assert lines == {f"test_replay_report.py:{_line('big')}", f"test_replay_report.py:{_line('small')}"}
    assert seq["D"][0] == {"index": 7, "method": "laplace", "site": f"test_replay_report.py:{_line('warm')}",
                           "params": "scale 1"}
    assert seq["D"][-1]["params"] == "scale 2"  # the tail's draws, after the branch
    assert len(json.dumps(seq)) < 3000          # small enough for every format


@pytest.mark.slow
def test_a_noise_scale_finding_carries_the_calls_with_the_parameter_that_differs(records):
    f = _one(records["scale"], "data_dependent_noise_scale")
    seq = f["values"]["sequence"]
    at = seq["parted_at"]
    assert seq["of"] == "calls" and at == f["values"]["call"]
    d = next(e for e in seq["D"] if e["index"] == at)
    dp = next(e for e in seq["D_prime"] if e["index"] == at)
    assert d["method"] == dp["method"] == "laplace" and d["site"] == dp["site"]
    assert d["params"] != dp["params"] and d["params"].startswith("scale ")


def test_an_operation_that_rescales_noise_carries_the_operations_around_it():
    def rescaled(data, rng):
        noisy = np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0)
        return noisy / max(len(data), 1)                    # site: rescale

    r = replay_pair(rescaled, [0.5, 0.5, 0.5], [0.5, 0.5], epsilon=1.0, seed=SEED)
    f = r.of("data_dependent_noise_scale")[0]
    seq = f.values["sequence"]
    at = seq["parted_at"]
    assert seq["of"] == "operations" and f.site.line == _line("rescale")
    d = next(e for e in seq["D"] if e["index"] == at)
    dp = next(e for e in seq["D_prime"] if e["index"] == at)
    assert d["operation"] in ("divide", "true_divide") and d["params"] == "call #1 with 3"
    assert dp["params"] == "call #1 with 2"


# -- HTML -------------------------------------------------------------------------------------------

def test_html_shows_each_finding_at_its_call_site_with_both_values_and_the_excess(run, records):
    html = render_html(run, plots=False)
    prim = _section(html, 1)
    where = f"{REL}:{_line('primitive')}"
    assert where in prim and "in unclipped_sum()" in prim
    assert "float(laplace_release(data.sum(), 0.25, 1.0, rng))" in prim      # the line of code
    values = _one(records["primitive"], "sensitivity_exceeded")["values"]
    rows = dict(re.findall(r"<tr><th>([^<]+)</th><td class=\"mono\">([^<]*)</td></tr>", prim))
    assert rows["declared sensitivity"] == "0.25"
    assert float(rows["input on D"].strip("[]")) == pytest.approx(values["D"][0] if isinstance(values["D"], list)
                                                                  else values["D"])
    assert float(rows["input on D′"].strip("[]")) != float(rows["input on D"].strip("[]"))
    assert float(rows["excess"]) == pytest.approx(values["excess"], rel=1e-5)
    assert rows["noise"].startswith("laplace_release (laplace)")
    assert "VIOLATION" in prim and "is not as private as claimed" in prim
    # the accounting rows, folded
    assert re.search(r"<details class=\"table\"><summary>Accounting: the 1 noise call on the pair", prim)


def test_html_shows_the_two_sequences_side_by_side_with_the_parting_row_highlighted(run):
    html = render_html(run, plots=False)
    branch = _section(html, 3)
    table = branch.split('<table class="seq">', 1)[1].split("</table>", 1)[0]
    assert "<th>on D</th><th>on D′</th>" in table
    parted = re.findall(r'<tr class="part">(.*?)</tr>', table)
    assert len(parted) == 1
    cells = re.findall(r"<td>(.*?)</td>", parted[0])
    assert len(cells) == 2 and {"laplace" in cells[0], "laplace" in cells[1]} == {True, False}
    assert "normal" in cells[0] + cells[1] and "#13" in cells[0] and "#13" in cells[1]
    assert "… 7 earlier steps …" in table and table.count("… 3 more …") == 2
    assert "DATA-DEPENDENT" not in branch and "FINDING" in branch and "not a refutation" in branch


def test_html_escapes_the_code_line_and_shows_notes_apart(run):
    html = render_html(run, plots=False)
    scale = _section(html, 2)
    assert "rng.laplace(scale=1.0 / n) if n &lt; 100 else 0.0" in scale and "n < 100" not in html
    assert "NOTE" in scale and "none of these is evidence against the claim" in scale
    assert "<script" not in html


def test_a_report_rendered_elsewhere_keeps_the_paths_relative(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # `dpaudit report` run in another folder: the record's root is used
    html = render_html(run, plots=False)
    assert f"{REL}:{_line('scale')}" in _section(html, 2)


# -- Markdown ------------------------------------------------------------------------------------------

def test_markdown_lists_each_finding_at_its_call_site_and_the_sequences_as_a_table(run):
    text = render_markdown(run)
    findings = text.split("### Findings (3)", 1)[1].split("<details><summary>All 3 results", 1)[0]
    assert f"call site: `{REL}:{_line('primitive')}` in `unclipped_sum()`" in findings
    assert "declared sensitivity: `0.25`" in findings and "excess: `" in findings
    assert "<details><summary>Accounting: the" in findings
    branch = findings.split("- **branches\\_on\\_size**", 1)[1]
    table = branch.split("    | on D | on D′ |\n    |---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = table.splitlines()
    assert rows[0] == "    | … 7 earlier … | … 7 earlier … |"
    assert rows[-1] == "    | … 3 more … | … 3 more … |"
    parted = [r for r in rows if "◀" in r]
    assert len(parted) == 1 and parted[0].count("**#13") == 2 and "#13 normal at" in parted[0]
    # the noise scale's calls: the same call on both runs, its scale different
    scale = findings.split("- **scale\\_from\\_size**", 1)[1].split("- **branches", 1)[0]
    (row,) = [r for r in scale.splitlines() if "◀" in r]
    assert row.count(" laplace at ") == 2
    scales = re.findall(r"\(scale ([0-9.e+-]+)\)", row)  # 1/n on each side: the sizes differ
    assert len(scales) == 2 and scales[0] != scales[1]
    assert all(1.0 / float(x) == pytest.approx(round(1.0 / float(x)), rel=1e-5) for x in scales)


# -- SARIF ---------------------------------------------------------------------------------------------

def test_sarif_has_one_rule_per_finding_kind_and_a_result_per_finding_at_its_call_site(run, records):
    log = render_sarif(run)
    sarif = log["runs"][0]
    rules = sarif["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    results = sarif["results"]
    every = [f for rec in records.values() for f in rec["findings"]]
    assert len(results) == len(every)  # a result per finding, whatever the record's verdict
    by_kind: dict = {}
    for res, f in zip(results, every):
        rule = rules[res["ruleIndex"]]
        assert rule["id"] == res["ruleId"]
        by_kind.setdefault(f["kind"], set()).add(res["ruleId"])
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {"uri": REL, "uriBaseId": "%SRCROOT%"}
        assert loc["region"]["startLine"] == f["site"]["line"]
        assert res["level"] == {"violation": "error", "finding": "warning"}.get(f["severity"], "note")
        assert res["properties"]["kind"] == f["kind"]
    assert all(len(v) == 1 for v in by_kind.values())
    assert len({next(iter(v)) for v in by_kind.values()}) == len(by_kind)  # one rule per kind
    assert by_kind["sensitivity_exceeded"] == {"DPA006"}
    (flow_rule,) = by_kind["data_dependent_control_flow"]
    flow = next(r for r in results if r["ruleId"] == flow_rule)
    assert rules[flow["ruleIndex"]]["name"] == "DataDependentControlFlow"
    assert rules[flow["ruleIndex"]]["defaultConfiguration"]["level"] == "warning"
    scale = next(r for r in results if r["properties"]["kind"] == "data_dependent_noise_scale")
    assert f"{REL}:{_line('scale')}" in scale["message"]["text"] and "replay_pair(" in scale["message"]["text"]
    prints = [r["partialFingerprints"]["dpauditClaim/v1"] for r in results]
    assert len(prints) == len(set(prints))


def test_every_finding_kind_of_the_replay_has_a_rule_of_its_own_at_its_severity_level():
    from dpaudit.replay.result import KINDS
    from dpaudit.report.kinds.replay import FINDING_RULES, SEVERITY_LEVELS

    assert set(FINDING_RULES) == set(KINDS)
    assert len({r.id for r in FINDING_RULES.values()}) == len(KINDS)
    for kind, (severity, _) in KINDS.items():
        assert (FINDING_RULES[kind].level or "error") == SEVERITY_LEVELS[severity], kind


# -- JUnit ---------------------------------------------------------------------------------------------

def test_junit_names_the_call_sites_in_its_messages_and_keeps_the_notes_in_its_output(run):
    suite = ET.fromstring(render_junit(run)).find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 3  # one per replay target
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.get("message") == f"claim refuted: declared sensitivity exceeded at {REL}:{_line('primitive')}"
    assert "declared sensitivity 0.25" in failure.text and "VIOLATION" in failure.text
    skipped = cases[1].find("skipped")
    assert skipped.get("message").startswith("INCONCLUSIVE (not a pass): data-dependent noise scale at "
                                             f"{REL}:{_line('scale')}")
    out = cases[1].find("system-out").text
    assert f"NOTE: per-record randomness at {REL}:{_line('sampling')}" in out
    flow = cases[2].find("system-out").text
    parted = [line for line in flow.splitlines() if line.startswith("  > ")]
    assert len(parted) == flow.count("FINDING: data-dependent control flow at ") >= 1
    assert all("laplace" in line and "normal" in line for line in parted)


# -- hostile and older records ----------------------------------------------------------------------

HOSTILE = "<script>x</script> | *b* `t`"


def test_hostile_strings_in_a_sequence_are_inert_in_every_format():
    entry = {"index": 0, "method": HOSTILE, "site": "m.py:3", "params": HOSTILE}
    rec = {"kind": "replay", "target": "m.py:f", "verdict": "inconclusive", "elapsed_s": 0.1, "reproduce": "r",
           "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}, "calls": 4, "budget": 200,
           "pairs": 1, "accounting": {}, "location": {"path": "m.py", "line": 3},
           "findings": [{"kind": "data_dependent_control_flow", "severity": "finding", "title": "data-dependent "
                         "control flow", "message": HOSTILE, "dataset": [1.0], "neighbour": [],
                         "site": {"path": "/src/m.py", "line": 3, "function": "f", "code": HOSTILE},
                         "values": {"index": 0, "D": {"method": HOSTILE, "site": {"path": "/src/m.py", "line": 3}},
                                    "D_prime": None,
                                    "sequence": {"of": "calls", "parted_at": 0, "D": [entry], "D_prime": [],
                                                 "before": 0, "after_D": 0, "after_D_prime": 0}}}]}
    run = make_run([rec], seed=1, started=0, finished=1, command="c", git=False)
    html = render_html(run, plots=False)
    assert "<script>x" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert '<span class="none">no such step</span>' in html  # D′ made no such call
    text = render_markdown(run)
    (row,) = [r for r in text.splitlines() if "◀" in r]
    assert len(re.findall(r"(?<!\\)\|", row)) == 3 and "<script>" not in row  # two cells: the pipe is escaped
    # outside code spans (inert) every string is escaped
    assert "<script>" not in re.sub(r"(`+).*?\1", "", text)
    sarif = render_sarif(run)["runs"][0]["results"]
    assert len(sarif) == 1 and sarif[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "m.py"
    assert "<script>" not in render_junit(run)


def test_an_error_record_and_a_finding_without_a_sequence_still_render():
    error = {"kind": "replay", "target": "e.py:f", "verdict": "error", "error": "boom", "elapsed_s": 0.0,
             "findings": [], "accounting": {}}
    older = {"kind": "replay", "target": "o.py:f", "verdict": "inconclusive", "elapsed_s": 0.0,
             "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}, "accounting": {},
             "findings": [{"kind": "data_dependent_noise_scale", "severity": "finding", "title": "data-dependent "
                           "noise scale", "message": "m", "site": {"path": "o.py", "line": 9, "function": "f",
                                                                   "code": "x"},
                           "values": {"call": 0, "parameters": {"scale": {"D": 1.0, "D_prime": 2.0}}}}]}
    run = make_run([error, older], seed=1, started=0, finished=1, command="c", git=False)
    html = render_html(run, plots=False)
    assert "boom" in _section(html, 1) and 'class="seq"' not in html
    assert "scale on D" in _section(html, 2) and "its scale is 1 on D and 2 on D′" in _section(html, 2)
    results = render_sarif(run)["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["DPA009"]  # an error has no finding to report
    junit = ET.fromstring(render_junit(run)).find("testsuite")
    assert junit.get("errors") == "1" and junit.get("skipped") == "1"


def test_a_refutation_by_an_exact_loss_says_so_not_that_a_sensitivity_was_declared():
    """An undeclared Laplace whose release reveals its noised value is refuted by the exact loss;
    the block's lead said "a noise function gets a bigger change of its input than it declares"
    for every refutation, though nothing was declared."""
    def refuted(kind):
        return {"kind": "replay", "target": "m.py:f", "verdict": "refuted", "elapsed_s": 0.1,
                "reproduce": "r", "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"},
                "calls": 4, "budget": 200, "pairs": 1, "accounting": {},
                "findings": [{"kind": kind, "severity": "violation", "title": kind, "message": "m",
                              "dataset": [1.0], "neighbour": []}]}

    exact = render_html(make_run([refuted("exact_loss_exceeded")], seed=1, started=0, finished=1,
                                 command="c", git=False), plots=False)
    assert "their exact privacy loss on a neighbouring pair is above the claim" in exact
    assert "than it declares" not in exact
    declared = render_html(make_run([refuted("sensitivity_exceeded")], seed=1, started=0, finished=1,
                                    command="c", git=False), plots=False)
    assert "a noise function gets a bigger change of its input than it declares" in declared


def test_a_sensitivity_just_above_its_declaration_is_not_called_1_times_smaller():
    """A declared sensitivity exceeded by half a percent read 'its noise is sized for a change 1
    times smaller' (three digits of 1.005)."""
    from dpaudit.report.kinds.replay import finding_sentence

    f = {"kind": "sensitivity_exceeded", "values": {"sensitivity": 1.0, "shift": 1.005, "method": "laplace"}}
    assert "sized for a change 1.005 times smaller" in finding_sentence(f)
