"""The HTML compliance report: one self-contained file rendered from the run dict with jinja2.

Build the view model, then render it: :func:`view` turns each record into plain
values (labels, formatted numbers, the counterexample, inline SVG plots); the template
``templates/report.html.j2`` only lays them out. Safety and honesty:

* jinja2 autoescape is on and every user-controlled string (mechanism names, docstrings, outputs,
  error messages) goes through it; only our own matplotlib SVG is marked safe, and its text is
  escaped by matplotlib's SVG writer. A Content-Security-Policy meta tag (no scripts, no remote
  loads) makes the page inert even if something slipped through;
* CSS is inlined and there are no external resources, so the file opens anywhere offline;
* verdict badges use the verdict's own label: NOT REFUTED is never shown as passed or proved, and
  INCONCLUSIVE never as a pass.

What a record shows (its claim, finding, facts, counterexample rows, long texts, plots and
legend) is asked of its kind (:mod:`dpaudit.report.kinds`); this module tests no kind string.

Each result reads top down as a reviewer acts on it: the title with its verdict (and, for an audit
with two findings, which decided it), the claim and the float64 policy, then one block per finding
(:meth:`~dpaudit.report.kinds.base.RecordKind.finding_blocks`; a privacy audit's logic and float64
findings apart, the deciding one first), each opening with one plain sentence, then the fix, the
counterexample with D and D′ whole and the differing record marked, the plots at the content's
width, the evidence, and the statistical details folded. A finding about a line of code (a replay
audit's) shows that call site with its code and what was seen there, and, where two runs part, their
sequences side by side with the parting row highlighted; a record's own tables (a replay's
accounting) are folded after its findings. The footer pins each audited file's
SHA-256, the dpaudit version and the environment.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from dpaudit.report import describe as d
from dpaudit.report.findings import (NOT_APPLICABLE, POLICY_MEANING, findings_of, float_policy, policies,
                                     verdict_tag)
from dpaudit.report.kinds import RecordKind, kind_of
from dpaudit.report.kinds.base import FindingBlock, as_json
from dpaudit.report.model import matches_expected, summarise
from dpaudit.report.provenance import isolation_off, settings_from_text
from dpaudit.report.libraries import library_sections

__all__ = ["render_html", "view"]


def _block_view(b: FindingBlock) -> dict:
    from markupsafe import Markup

    cx = b.counterexample
    seq = b.sequence
    return {
        "question": b.question or "",
        "heading": b.heading or "",
        "verdict": b.verdict,
        "verdict_label": b.label or ("NOT APPLICABLE" if b.verdict == NOT_APPLICABLE else d.verdict_label(b.verdict)),
        "verdict_meaning": d.verdict_meaning(b.verdict),
        "note": b.note,
        "lead": b.lead,
        "lead_label": b.lead_label,
        "fix": b.fix,
        "counterexample": None if cx is None else {
            "rows": cx.rows, "event": cx.event, "probs": cx.probs, "marked": cx.marked,
            "datasets": [{"label": ds.label, "note": ds.note, "size": ds.size,
                          "records": [{"text": t, "mark": "" if t is None else m, "gap": m if t is None else 0}
                                    for t, m in ds.items]}
                         for ds in cx.datasets]},
        "plots": [(cap, Markup(svg)) for cap, svg in b.plots],
        "evidence": list(b.evidence),
        "stats": list(b.stats),
        "stats_label": b.stats_label,
        "site": None if b.site is None else {"where": b.site.where, "function": b.site.function,
                                             "code": b.site.code, "rows": list(b.site.rows)},
        "sequence": None if seq is None else {
            "title": seq.title, "before": seq.before, "after": list(seq.after), "note": seq.note,
            "rows": [{"mark": mark, "cells": [None if c is None else {"index": c[0], "name": c[1], "site": c[2],
                                                                      "params": c[3]} for c in (a, b2)],
                      "differ": a != b2} for a, b2, mark in seq.rows]},
    }


def view(rec: Mapping[str, Any], index: int, plots: bool = True) -> dict:
    """The template's view of one record (plain strings; SVGs marked safe), asked of its kind."""
    k = kind_of(rec)
    verdict = rec.get("verdict")
    claim = k.claim_text()
    description = rec.get("description") or ""
    long_texts = k.long_texts()
    long_keys = {key for key, _ in long_texts}
    blocks = [_block_view(b) for b in k.finding_blocks(f"dpaudit-{index}", plots)]
    fs = findings_of(rec) or []
    return {
        "anchor": f"r{index}",
        "index": index,
        "title": d.title(rec),
        "description": description if description != claim and k.description_shown(description) else "",
        "kind": str(rec.get("kind")),
        "kind_text": k.description or str(rec.get("kind")),
        "claim": claim,
        "claim_label": k.claim_label,
        "claim_short": k.summary_claim(),
        "group": str(rec.get("group") or ""),
        "verdict": str(verdict),
        "verdict_label": d.verdict_label(verdict),
        "verdict_tag": verdict_tag(rec),
        "policy": float_policy(rec) or "",
        "isolation_off": isolation_off(rec),
        "settings_from": settings_from_text(rec),
        "verdict_meaning": d.verdict_meaning(verdict),
        "expected": rec.get("expected"),
        "expected_label": d.verdict_label(rec["expected"]) if rec.get("expected") else "",
        "match": matches_expected(rec),
        "finding": _finding(rec, k),
        "findings": [{"label": f.label, "verdict": f.verdict if f.applicable else NOT_APPLICABLE,
                      "verdict_label": f.verdict_text() if f.applicable else "no question",
                      "warning": f.warning} for f in fs] + _stage_summary(rec),
        "eps_lb": k.epsilon_bound(),
        "elapsed": d.fmt(rec.get("elapsed_s"), 3),
        "facts": k.section_facts(),
        "blocks": blocks,
        "reproduce": rec.get("reproduce") or "",
        "recheck": k.recheck(),
        "recheck_label": k.recheck_label,
        "error": rec.get("error"),
        "long_texts": long_texts,
        "open_long_text": k.open_long_text,
        "tables": [{"summary": t.summary, "headers": list(t.headers), "rows": [list(r) for r in t.rows],
                    "numeric": list(t.numeric), "nowrap": list(t.nowrap), "note": t.note} for t in k.tables()],
        "extra": [(key, as_json(v)) for key, v in k.extra().items() if key not in long_keys],
        "details": as_json(_raw_details(rec.get("details"))) if rec.get("details") else "",
    }


def _policy_lines(records: Any) -> list[tuple[str, str]]:
    """``(policy, meaning)`` per float policy of the run; a policy under which no record had a
    float64 question (every output an integer, a category, a boolean) says so: "a porous float64
    implementation refutes the claim" above a report of counts read as if it applied."""
    from dpaudit.report.findings import FLOAT, finding

    out = []
    for p in policies(records):
        meaning = POLICY_MEANING.get(p, "")
        asked = any(isinstance(r, Mapping) and float_policy(r) == p and
                    (f := finding(r, FLOAT)) is not None and f.applicable for r in records)
        if p != "off" and not asked:
            meaning += " (no result here had a float64 question: no output held a real number)"
        out.append((p, meaning))
    return out


def _stage_summary(rec: Mapping[str, Any]) -> list[dict]:
    """The summary's line for an audit's replay stage (``rec["replay"]``), if it has one."""
    stage = rec.get("replay")
    if not isinstance(stage, Mapping) or stage.get("kind") != "replay":
        return []
    verdict = str(stage.get("verdict"))
    label = d.verdict_label(verdict)
    kinds = {f.get("kind") for f in stage.get("findings") or () if isinstance(f, Mapping)}
    if verdict == "inconclusive" and "no_noise_intercepted" in kinds:
        # a library's noise drawn outside Python (OpenDP's Rust core): nothing for the replay to
        # see, which a bare INCONCLUSIVE beside a sampled verdict made look like a failed check
        label = f"{label} (no noise call seen; the sampling decides)"
    return [{"label": "replay", "verdict": verdict, "verdict_label": label, "warning": False}]


def _finding(rec: Mapping[str, Any], k: RecordKind) -> str:
    """The finding without the verdict's own meaning (the template prints that beside it)."""
    text = k.finding_text()
    meaning = d.verdict_meaning(rec.get("verdict"))
    if meaning and text.startswith(meaning):
        text = text[len(meaning):].lstrip("; ")
    if rec.get("verdict") == "error" and rec.get("error"):
        return ""  # shown on its own line
    return text


#: details drawn as plots; the raw view leaves them out (they are in the JSON)
_PLOTTED = ("samples", "bound_curve", "histogram")


def _raw_details(details: Any) -> Any:
    if not isinstance(details, Mapping):
        return details
    return {k: ("(plotted above; in the JSON result)" if k in _PLOTTED else v) for k, v in details.items()}


def _legends(records: list) -> list:
    """The legend paragraph of each kind present (in the order kinds first appear)."""
    out = []
    for rec in records:
        legend = kind_of(rec).legend
        if legend and legend not in out:
            out.append(legend)
    return out


def _environment(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    env = run.get("environment") or {}
    return [(str(k), "—" if v is None else str(v)) for k, v in env.items()]


def _audited_files(run: Mapping[str, Any]) -> Any:
    """``[(path, sha256 or why not)]``, or None when the run did not record them (older runs)."""
    files = run.get("audited_files")
    if not isinstance(files, list):
        return None
    return [(str(f.get("path", "")), str(f.get("sha256") or f"not hashed: {f.get('error') or 'unreadable'}"))
            for f in files if isinstance(f, Mapping)]


@lru_cache(maxsize=1)
def _template() -> Any:
    """The compiled report template, once per process (compiling it costs about 0.07 CPU s: a run
    that writes many reports, the audit suite or an in-process test session, pays it once)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("dpaudit.report", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    return env.get_template("report.html.j2")


def render_html(run: Mapping[str, Any], *, plots: bool = True) -> str:
    """The self-contained HTML report of ``run``."""
    records = run.get("results", [])
    summary = run.get("summary") or summarise(records)
    badges = [(v, d.verdict_label(v), d.verdict_meaning(v), n)
              for v, n in summary.get("verdicts", {}).items()]
    run_view = {k: run.get(k) for k in ("seed", "started", "git_commit", "tool_version")}
    views = [view(r, i, plots) for i, r in enumerate(records, 1)]
    return _template().render(
        audited_files=_audited_files(run),
        float_policies=_policy_lines(records),
        isolation_off=[(d.title(r), isolation_off(r)) for r in records if isolation_off(r)],
        run=run_view,
        summary=summary,
        badges=badges,
        results=views,
        libraries=library_sections(records, views),
        skipped=[s for s in run.get("skipped") or [] if isinstance(s, Mapping)],
        legends=_legends(records),
        environment=_environment(run),
        meta=[(label, "—" if run.get(key) in (None, "") else str(run.get(key)))
              for key, label in (("seed", "seed"), ("started", "started"), ("finished", "finished"),
                                 ("git_commit", "git commit"), ("command", "command"),
                                 ("tool_version", "dpaudit version"),
                                 ("format_version", "format version"))],
    )
