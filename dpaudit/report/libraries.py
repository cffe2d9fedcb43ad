"""The per-library section of the compliance report: one table per DP library and version.

Records of library targets carry ``library`` = {name, version, claim, notion, own_randomness}
(see :mod:`dpaudit.adapters`). Each row states the claim as the library states it, the verdict,
the margin ε_LB/ε, and for a refutation a paragraph a library maintainer can check: the pair,
the event, its two probabilities and the bound they give at the stated confidence (for the
``marginal`` bound ε ≥ ln((p_lo − δ)/q_hi); the method is named, dpaudit/estimators/bounds.py).
"""

from __future__ import annotations

from typing import Any, Mapping

from dpaudit.report import describe as d
from dpaudit.report.kinds.base import short


def _audited(rec: Mapping[str, Any]) -> str:
    """The neighbour relation the audit ran under (a misuse may differ from the library's notion)."""
    return str((rec.get("claim") or {}).get("neighbours", ""))


def explanation(rec: Mapping[str, Any]) -> str:
    """A refutation in one paragraph (empty unless the record is refuted)."""
    if rec.get("verdict") != "refuted":
        return ""
    lib = rec.get("library") or {}
    cx = rec.get("counterexample") or {}
    parts = [f"{lib.get('name', 'The library')} {lib.get('version', '')} states: {lib.get('claim', d.claim_text(rec))}."]
    if "dataset" in cx and "neighbour" in cx:
        parts.append(f"Audited under {_audited(rec)} neighbours: on "
                     f"D = {short(cx['dataset'])} and D′ = {short(cx['neighbour'])}")
        event = (cx.get("event") or {}).get("text") if isinstance(cx.get("event"), Mapping) else None
        if event:
            parts[-1] += f", the event “{event}”"
        if "p" in cx and "q" in cx:
            parts[-1] += f" has probability {d.fmt(cx['p'])} against {d.fmt(cx['q'])}"
        parts[-1] += "."
    eps = rec.get("epsilon_lower_bound")
    if eps is not None:
        conf = rec.get("confidence")
        parts.append(f"So ε ≥ {d.fmt(eps)}" + (f" at {d.percent(conf, 3)}% confidence" if conf else "")
                     + f", above the stated ε = {d.fmt((rec.get('claim') or {}).get('epsilon'))}.")
    if rec.get("description"):
        parts.append(f"Why: {rec['description']}.")
    if rec.get("reproduce"):
        parts.append(f"Reproduce: {rec['reproduce']}")
    return " ".join(parts)


def library_sections(records: list[Mapping[str, Any]], views: list[Mapping[str, Any]]) -> list[dict]:
    """``[{name, version, rows}]`` in first-seen order; each row links to the record's section."""
    groups: dict[tuple[str, str], dict] = {}
    for rec, v in zip(records, views):
        lib = rec.get("library")
        if not isinstance(lib, Mapping):
            continue
        key = (str(lib.get("name", "")), str(lib.get("version", "")))
        group = groups.setdefault(key, {"name": key[0], "version": key[1], "rows": []})
        group["rows"].append({
            "anchor": v.get("anchor"), "title": v.get("title"), "claim": lib.get("claim", ""),
            "audited": _audited(rec), "verdict": v.get("verdict"),
            "verdict_label": v.get("verdict_label"), "expected": v.get("expected_label") if rec.get("expected") else "",
            "margin": d.fmt(rec["margin"], 3) if isinstance(rec.get("margin"), (int, float)) else "—",
            "own_randomness": bool(lib.get("own_randomness")), "explanation": explanation(rec)})
    return list(groups.values())
