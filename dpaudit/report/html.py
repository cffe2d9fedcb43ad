"""The HTML compliance report: one self-contained file rendered from the run dict with jinja2.

Build the view model, then render it (STYLE.md 12): :func:`view` turns each record into plain
values (labels, formatted numbers, the counterexample, inline SVG plots); the template
``templates/report.html.j2`` only lays them out. Safety and honesty:

* jinja2 autoescape is on and every user-controlled string (mechanism names, docstrings, outputs,
  error messages) goes through it; only our own matplotlib SVG is marked safe, and its text is
  escaped by matplotlib's SVG writer. A Content-Security-Policy meta tag (no scripts, no remote
  loads) makes the page inert even if something slipped through;
* CSS is inlined and there are no external resources, so the file opens anywhere offline;
* verdict badges use the verdict's own label: NOT REFUTED is never shown as passed or proved, and
  INCONCLUSIVE never as a pass.

A seed claim (``kind = "seed-claim"``) shows the paper's statement, where the paper makes it, the
SPEC section and SPEC §8 errata, the observed value against its bound, the check's detail, the
verdict recorded with the claim, and the command that re-runs the check alone (``recheck``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from dpaudit.report import describe as d
from dpaudit.report.model import matches_expected, summarise

__all__ = ["render_html", "view"]

#: record keys shown in their own place in the template (everything else goes under "details")
_SHOWN = {"kind", "target", "verdict", "expected", "id", "claim", "epsilon_lower_bound",
          "delta_lower_bound", "confidence", "samples", "counterexample", "reproduce", "error",
          "elapsed_s", "method", "seed", "location", "details", "title", "description",
          "statement", "source", "bound", "max_gap", "ratio", "examples", "evaluations", "profile",
          "assumes_exact_reals", "decided_by", "control_of", "solver_time_s", "matches_expected",
          "group"}

#: keys of a seed-claim record shown in their own place as well
_SHOWN_SEED_CLAIM = _SHOWN | {"recorded_verdict", "agrees", "seed_paper", "spec", "errata", "observed",
                              "detail", "recheck"}

#: long text fields (SMT-LIB2 queries, proofs) get a <pre> block of their own
_LONG_TEXT_MIN = 160


def _interval(x: Any) -> str:
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return f"[{d.fmt(x[0])}, {d.fmt(x[1])}]"
    return d.fmt(x) if x is not None else "—"


def _summary_claim(rec: Mapping[str, Any]) -> str:
    """The claim as the summary table shows it: a formal claim by its source (the statement is in
    its section), anything else by its claim text, shortened."""
    if rec.get("kind") == "formal" and isinstance(rec.get("source"), str) and rec["source"]:
        return _short(rec["source"], 90)
    return _short(d.claim_text(rec), 120)


def _short(text: str, limit: int) -> str:
    """The first sentence of ``text``, cut at ``limit`` characters (summary table cells)."""
    first = text.split(". ")[0]
    first = first if len(first) <= limit else first[: limit - 1].rstrip() + "…"
    return first if first == text else first.rstrip(".") + (" …" if not first.endswith("…") else "")


def _json(x: Any) -> str:
    return json.dumps(x, ensure_ascii=False, indent=1) if not isinstance(x, str) else x


def _facts(rec: Mapping[str, Any]) -> list[tuple[str, str]]:
    kind = rec.get("kind")
    facts: list[tuple[str, str]] = [("target", str(rec.get("target", "")))]
    if rec.get("location"):
        loc = rec["location"]
        facts.append(("code", f"{loc.get('path')}:{loc.get('line')}"))
    facts.append(("evidence", d.KIND_TEXT.get(str(kind), str(kind))))
    if kind == "seed-claim":
        return facts + _seed_claim_facts(rec)
    if kind in ("audit", "exact"):
        conf = d.num(rec.get("confidence"))
        facts += [
            ("ε lower bound", d.fmt(rec.get("epsilon_lower_bound"))),
            ("δ lower bound (at the claimed ε)", d.fmt(d.delta_floor(rec.get("delta_lower_bound")))),
            ("confidence", "exact (1)" if kind == "exact" else
             (f"{d.fmt(100 * conf, 4)}% (family-wise)" if conf is not None else "—")),
            ("samples", f"{int(d.num(rec.get('samples')) or 0):,}"),
        ]
    det = rec.get("details") if isinstance(rec.get("details"), Mapping) else {}
    if kind == "exact":
        for key, label in (("exact_loss", "exact privacy loss sup |ln p − ln q|"),
                           ("delta_at_claim", "exact δ at the claimed ε (hockey stick)"),
                           ("pairs_evaluated", "neighbouring pairs evaluated"), ("pair_label", "worst pair")):
            if det.get(key) is not None:
                facts.append((label, d.fmt(det[key], 10) if d.num(det[key]) is not None else str(det[key])))
    elif kind == "audit":
        for key, label in (("pair_label", "pair found by"), ("bound_method", "bound"),
                           ("candidates_validated", "candidates validated (family-wise)"),
                           ("output_kind", "output")):
            if det.get(key) is not None:
                facts.append((label, str(det[key])))
    claim = rec.get("claim") if isinstance(rec.get("claim"), Mapping) else {}
    if kind == "sensitivity":
        for key in ("bound", "neighbours", "norm"):
            if claim.get(key) is not None:
                facts.append((key, d.fmt(claim[key]) if d.num(claim[key]) is not None else str(claim[key])))
        if claim.get("individual"):
            facts.append(("individual bounds Δ_i", _json(claim["individual"])))
    for key in ("bound", "max_gap", "ratio", "examples", "evaluations", "profile", "source",
                "assumes_exact_reals", "decided_by", "control_of", "solver_time_s"):
        if key in rec and rec[key] is not None and not isinstance(rec[key], (dict, list)):
            facts.append((key.replace("_", " "), d.fmt(rec[key]) if d.num(rec[key]) is not None else str(rec[key])))
    if rec.get("method"):
        facts.append(("method", str(rec["method"])))
    if rec.get("seed") is not None:
        facts.append(("seed", str(rec["seed"])))
    facts.append(("time", f"{d.fmt(rec.get('elapsed_s'), 3)} s"))
    return facts


def _seed_claim_facts(rec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A seed claim: the paper and place, SPEC and errata, observed against bound, recorded verdict."""
    errata = rec.get("errata") if isinstance(rec.get("errata"), list) else []
    recorded = rec.get("recorded_verdict")
    facts = [("seed paper", f"seed {rec['seed_paper']}" if rec.get("seed_paper") else "—"),
             ("stated in", str(rec.get("source") or "—")),
             ("SPEC", str(rec.get("spec") or "—")),
             ("errata (SPEC §8)", ", ".join(map(str, errata)) if errata else "none"),
             ("observed", _number(rec.get("observed"))),
             ("bound", _number(rec.get("bound")))]
    if recorded:
        agrees = "" if rec.get("agrees") is None else (" (the re-check agrees)" if rec.get("agrees")
                                                       else " (the re-check DISAGREES)")
        facts.append(("recorded verdict", d.verdict_label(recorded) + agrees))
    facts.append(("time", f"{d.fmt(rec.get('elapsed_s'), 3)} s"))
    return facts


def _number(x: Any) -> str:
    return d.fmt(x, 10) if d.num(x) is not None else ("—" if x is None else str(x))


def _counterexample(rec: Mapping[str, Any]) -> Optional[dict]:
    cx = rec.get("counterexample")
    if not isinstance(cx, Mapping):
        return None
    if rec.get("kind") == "seed-claim":  # the values that show the statement false, as recorded
        return {"rows": [(str(k), _json(v)) for k, v in cx.items()], "event": None, "probs": None}
    event = cx.get("event")
    event_text = event.get("text") if isinstance(event, Mapping) and event.get("text") else (
        _json(event) if event is not None else None)
    rows = []
    for key, label in (("dataset", "D"), ("neighbour", "D′")):
        if key in cx:
            rows.append((label, _json(cx[key])))
    for key, label in (("individual", "individual i"), ("ids", "identities in D"),
                       ("neighbour_ids", "identities in D′"), ("f_dataset", "f(D)"),
                       ("f_neighbour", "f(D′)"), ("gap", "gap ‖f(D) − f(D′)‖"),
                       ("allowed", "allowed"), ("output", "output r")):
        if key in cx and cx[key] is not None:
            rows.append((label, _json(cx[key])))
    probs = None
    if "p" in cx or "q" in cx:
        probs = {"p": d.fmt(cx.get("p")), "p_interval": _interval(cx.get("p_interval")),
                 "q": d.fmt(cx.get("q")), "q_interval": _interval(cx.get("q_interval"))}
    return {"rows": rows, "event": event_text, "probs": probs}


def _long_texts(rec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Multi-line or long string fields (SMT-LIB2 text, proofs, models) of the record and its details."""
    out: list[tuple[str, str]] = []
    if rec.get("kind") == "seed-claim":  # its text fields all have their own place
        return out
    for where in (rec, rec.get("details") if isinstance(rec.get("details"), Mapping) else {}):
        for k, v in where.items():
            if k in ("reproduce", "error", "target", "title", "description"):
                continue
            if isinstance(v, str) and ("\n" in v or len(v) >= _LONG_TEXT_MIN):
                out.append((k, v))
            elif isinstance(v, list) and v and all(isinstance(s, str) and ("\n" in s or "(assert" in s) for s in v):
                out.extend((f"{k} [{i}]", s) for i, s in enumerate(v))
    return out


def view(rec: Mapping[str, Any], index: int, plots: bool = True) -> dict:
    """The template's view of one record (plain strings; SVGs marked safe)."""
    from markupsafe import Markup

    verdict = rec.get("verdict")
    svgs = []
    if plots:
        from dpaudit.report.plots import record_svgs

        try:
            svgs = [(cap, Markup(svg)) for cap, svg in record_svgs(rec, salt=f"dpaudit-{index}")]
        except (ValueError, TypeError, OverflowError):  # malformed plot data: no plot, not a crash
            svgs = []
    seed_claim = rec.get("kind") == "seed-claim"
    extra = {k: v for k, v in rec.items() if k not in (_SHOWN_SEED_CLAIM if seed_claim else _SHOWN)}
    claim = d.claim_text(rec)
    description = rec.get("description") or ""
    long_texts = _long_texts(rec)
    long_keys = {k for k, _ in long_texts}
    return {
        "anchor": f"r{index}",
        "index": index,
        "title": d.title(rec),
        "description": "" if description == claim or (seed_claim and rec.get("statement")
                                                       and str(rec["statement"]) in description) else description,
        "kind": str(rec.get("kind")),
        "kind_text": d.KIND_TEXT.get(str(rec.get("kind")), str(rec.get("kind"))),
        "claim": claim,
        "claim_label": "Statement" if seed_claim else "Claim",
        "claim_short": _summary_claim(rec),
        "group": str(rec.get("group") or ""),
        "verdict": str(verdict),
        "verdict_label": d.verdict_label(verdict),
        "verdict_meaning": d.verdict_meaning(verdict),
        "expected": rec.get("expected"),
        "expected_label": d.verdict_label(rec["expected"]) if rec.get("expected") else "",
        "match": matches_expected(rec),
        "finding": _finding(rec),
        "eps_lb": d.fmt(rec.get("epsilon_lower_bound")) if rec.get("kind") in ("audit", "exact") else "",
        "elapsed": d.fmt(rec.get("elapsed_s"), 3),
        "facts": _facts(rec),
        "counterexample": _counterexample(rec),
        "plots": svgs,
        "reproduce": rec.get("reproduce") or "",
        "recheck": (rec.get("recheck") or "") if seed_claim and rec.get("recheck") != rec.get("reproduce") else "",
        "error": rec.get("error"),
        "long_texts": long_texts,
        "extra": [(k, _json(v)) for k, v in extra.items() if k not in long_keys],
        "details": _json(_raw_details(rec.get("details"))) if rec.get("details") else "",
    }


def _finding(rec: Mapping[str, Any]) -> str:
    """The finding without the verdict's own meaning (the template prints that beside it)."""
    text = d.finding_text(rec)
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


def _environment(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    env = run.get("environment") or {}
    return [(str(k), "—" if v is None else str(v)) for k, v in env.items()]


def render_html(run: Mapping[str, Any], *, plots: bool = True) -> str:
    """The self-contained HTML report of ``run``."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("dpaudit.report", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    records = run.get("results", [])
    summary = run.get("summary") or summarise(records)
    badges = [(v, d.verdict_label(v), d.verdict_meaning(v), n)
              for v, n in summary.get("verdicts", {}).items()]
    run_view = {k: run.get(k) for k in ("seed", "started", "git_commit", "tool_version")}
    return env.get_template("report.html.j2").render(
        run=run_view,
        summary=summary,
        badges=badges,
        results=[view(r, i, plots) for i, r in enumerate(records, 1)],
        has_seed_claims=any(r.get("kind") == "seed-claim" for r in records),
        environment=_environment(run),
        meta=[(label, "—" if run.get(key) in (None, "") else str(run.get(key)))
              for key, label in (("seed", "seed"), ("started", "started"), ("finished", "finished"),
                                 ("git_commit", "git commit"), ("command", "command"),
                                 ("tool_version", "dpaudit version"),
                                 ("format_version", "format version"))],
    )
