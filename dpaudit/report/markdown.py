"""A Markdown summary of a run, short enough for a pull-request comment.

GitHub-flavoured Markdown: a headline with the verdict counts (and the float64 policy), the
findings a reviewer must read (REFUTED, ERROR, INCONCLUSIVE, a float64 warning, and every record
whose verdict is not the one expected of it), each with its plain sentence, claim, its logic and
float64 findings apart, and reproduce line (a finding about a line of code, a replay audit's, at
its call site with what was seen there, the two runs' sequences as a two-column table and the
accounting folded), then every result in a collapsed table, then the
audited files' SHA-256, the dpaudit version and the environment. Wording comes
from each record's kind (:mod:`dpaudit.report.kinds`); NOT REFUTED is never shown as a pass of a
proof, INCONCLUSIVE never as a pass.

Every string from a record is escaped (Markdown punctuation, ``<``, ``>``, ``&``, table pipes and
line breaks), and code spans use a fence longer than any run of backticks inside, so a hostile
mechanism name cannot inject markup. Text outside code spans cannot make GitHub's live links
either: a word joiner (U+2060, invisible) follows every ``@`` before a name (an ``@mention`` that
would notify someone, or an e-mail address) and splits every ``://`` and ``www.`` (a bare URL that
GitHub would make a link). GitHub caps a comment at 65,536 characters: the findings and
the table are cut at :data:`MAX_ROWS` rows each, saying how many were left out.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from dpaudit.report import describe as d
from dpaudit.report import findings as fnd
from dpaudit.report.kinds import kind_of
from dpaudit.report.model import matches_expected, summarise
from dpaudit.results import Verdict

__all__ = ["render_markdown", "MAX_ROWS"]

#: rows of findings, and of the full table, at most (the rest is counted, and in the JSON)
MAX_ROWS = 100

#: characters that start inline markup mid-line (links need "[", so "(" and "!" are safe once it is escaped)
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_NEEDS_ATTENTION = (Verdict.REFUTED.value, Verdict.ERROR.value, Verdict.INCONCLUSIVE.value, Verdict.INTERRUPTED.value)

#: what GitHub turns into a live link in plain text, split by an invisible word joiner: ``@name``
#: (a mention, ``@org/team``, ``a@b.example``), ``scheme://`` and ``www.`` (bare-URL autolinks)
_LIVE = re.compile(r"@(?=[\w-])|:(?=//)|(?<![\w.-])www(?=\.)", re.IGNORECASE)
_WORD_JOINER = "\u2060"


def escape(text: Any, limit: int = 300) -> str:
    """``text`` as literal Markdown on one line: HTML-escaped, punctuation backslash-escaped,
    line breaks as spaces, mentions and bare URLs made inert, cut at ``limit`` characters."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _LIVE.sub(lambda m: m.group(0) + _WORD_JOINER, s)
    return _SPECIAL.sub(r"\\\1", s)


def code(text: Any, limit: int = 400) -> str:
    """``text`` as an inline code span (one line), fenced by more backticks than it contains."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _attention(rec: Mapping[str, Any]) -> bool:
    """Refuted, error, inconclusive, a float64 warning, or a control whose verdict is not the
    expected one."""
    match = matches_expected(rec)
    if match is not None:
        return match is False
    return rec.get("verdict") in _NEEDS_ATTENTION or fnd.float_warning(rec)


def _verdict(rec: Mapping[str, Any], long: bool = False) -> str:
    text = f"**{d.verdict_label(rec.get('verdict'))}**"
    tag = fnd.verdict_tag(rec) if long else fnd.short_tag(rec)
    if tag:
        text += f" {escape(tag if long else f'({tag})')}"
    if rec.get("expected") is not None:
        ok = rec.get("expected") == rec.get("verdict")
        text += f" (expected {d.verdict_label(rec['expected'])}{'' if ok else ', MISMATCH'})"
    return text


def _finding(rec: Mapping[str, Any]) -> list[str]:
    k = kind_of(rec)
    fs = fnd.findings_of(rec) if rec.get("verdict") != Verdict.ERROR.value else None
    located = _located(rec) if not fs else []
    lines = [f"- **{escape(d.title(rec), 120)}**: {_verdict(rec, long=True)}"]
    if (not fs or len(fs) == 1) and rec.get("verdict") != Verdict.ERROR.value:
        lines.append(f"  - {escape(k.lead(), 600)}")
    lines.append(f"  - {escape(k.claim_label.lower())}: {escape(k.claim_text())}")
    if fnd.float_policy(rec):
        lines.append(f"  - float64 policy: {code(fnd.float_policy(rec))}")
    if fs and len(fs) > 1:
        for f in sorted(fs, key=lambda f: not (f.decides and f.applicable)):  # the deciding one first
            fk = kind_of(f.rec)
            word = f.verdict_text() if f.applicable else "no question"
            note = " (warning: --float warn)" if f.warning else ""
            lines.append(f"  - {f.label}: **{word}**{note}: {escape(fk.lead(), 600)}")
            if f.applicable and f.verdict != Verdict.ERROR.value:
                lines.append(f"    - evidence: {escape(fk.evidence_text(), 1200)}")
                lines += _pair_found(f.rec, "    ")
            if f.question == fnd.FLOAT and f.refuted:
                lines.append(f"    - fix: {escape(fnd.float_fix(f.rec, rec))}")
    elif located:
        for b in located:
            lines += _block(b)
    else:
        lines.append(f"  - finding: {escape(k.finding_text(), 600)}")
        lines += _pair_found(rec, "  ")
    lines += _stage(rec)
    if rec.get("reproduce"):
        lines.append(f"  - reproduce: {code(rec['reproduce'])}")
    for t in k.tables() if located else ():
        lines += _table(t)
    return lines


def _pair_found(rec: Mapping[str, Any], indent: str) -> list[str]:
    """How the refuting pair was found (``details.pair_label``: "the float above 2^53: 10 records,
    one removed"), for a refuted finding that names it; the HTML report shows it among the facts."""
    details = rec.get("details")
    label = details.get("pair_label") if isinstance(details, Mapping) else None
    if rec.get("verdict") != Verdict.REFUTED.value or not label:
        return []
    return [f"{indent}- pair found by: {escape(str(label), 200)}"]


def _stage(rec: Mapping[str, Any]) -> list[str]:
    """An audit's replay stage (``rec["replay"]``): its verdict and finding in a line, then each
    violation and finding at its call site."""
    stage = rec.get("replay")
    if not isinstance(stage, Mapping) or stage.get("kind") != "replay":
        return []
    k = kind_of(stage)
    calls = d.num(stage.get("calls"))
    spent = f" ({int(calls)} calls, before the sampling)" if calls is not None else ""
    lines = [f"  - replay{spent}: **{d.verdict_label(stage.get('verdict'))}**: "
             f"{escape(k.finding_text(), 600)}"]
    for b in _located(stage):
        lines += ["  " + line if line else line for line in _block(b)]
    return lines


def _located(rec: Mapping[str, Any]) -> list:
    """The finding blocks of a record whose findings are about lines of code (a replay audit's):
    every headed block when one of them names a call site or carries two runs' sequences, else
    none (the record is told as one finding)."""
    if rec.get("verdict") == Verdict.ERROR.value:
        return []
    blocks = kind_of(rec).finding_blocks("md", plots=False)
    if not any(b.site is not None or b.sequence is not None for b in blocks):
        return []
    return [b for b in blocks if b.heading]


def _block(b: Any) -> list[str]:
    """One finding at its call site: the heading, the plain sentence, the site and its code, what
    was seen there, the two runs' sequences side by side (a two-column table, the row where
    they part in bold), the pair and the line that replays it."""
    note = f" ({escape(b.note)})" if b.note else ""
    out = [f"  - **{escape(b.label or b.verdict)}: {escape(b.heading, 200)}**{note}: {escape(b.lead, 600)}"]
    site = b.site
    if site is not None and site.where:
        where = f"{code(site.where, 300)}" + (f" in {code(site.function + '()', 120)}" if site.function else "")
        out.append(f"    - call site: {where}" + (f": {code(site.code, 300)}" if site.code else ""))
    if site is not None and site.rows:
        out.append("    - " + " · ".join(f"{escape(label)}: {code(value, 160)}" for label, value in site.rows))
    for label, value in b.evidence:
        out.append(f"    - {escape(label, 200)}: {escape(value, 600)}")
    seq = b.sequence
    if seq is not None:
        out += ["", f"    {escape(seq.title)}" + (f" ({escape(seq.note)})" if seq.note else "") + ":", "",
                "    | on D | on D′ |", "    |---|---|"]
        if seq.before:
            out.append(f"    | … {seq.before} earlier … | … {seq.before} earlier … |")
        for a, c, mark in seq.rows:
            cells = [_step(x, bool(mark)) for x in (a, c)]
            out.append(f"    | {cells[0]} | {cells[1]} |")
        if any(seq.after):
            out.append("    | " + " | ".join(f"… {n} more …" if n else "" for n in seq.after) + " |")
        out.append("")
    cx = b.counterexample
    for ds in cx.datasets if cx is not None else ():
        records = ", ".join(t if t is not None else f"… {m} more …" for t, m in ds.items)
        out.append(f"    - {escape(ds.label)} ({escape(ds.note)}): {code('[' + records + ']', 300)}")
    for label, value in b.stats:
        if label == "replay this pair":
            out.append(f"    - {escape(label)}: {code(value, 600)}")
    return out


def _step(x: Any, part: bool) -> str:
    """One entry of a run's sequence as a table cell (bold where the runs part)."""
    if x is None:
        return "*no such step*"
    index, name, site, params = x
    # no code span: a pipe inside one would still split a table's cell
    text = f"#{index} {escape(name, 60)} at {escape(site, 80)}" + (f" ({escape(params, 120)})" if params else "")
    return f"**{text}** ◀" if part else text


def _table(t: Any) -> list[str]:
    """A record's folded table (a replay's accounting) as a Markdown table in ``<details>``."""
    out = ["", f"<details><summary>{escape(t.summary, 200)}</summary>", "",
           "| " + " | ".join(escape(h) for h in t.headers) + " |",
           "|" + "|".join("---:" if i in t.numeric else "---" for i in range(len(t.headers))) + "|"]
    out += ["| " + " | ".join(escape(c, 120) for c in row) + " |" for row in t.rows[:MAX_ROWS]]
    if len(t.rows) > MAX_ROWS:
        out.append(f"… and {len(t.rows) - MAX_ROWS} more rows (see the JSON result)")
    if t.note:
        out += ["", escape(t.note, 1000)]
    out += ["", "</details>", ""]
    return out


def _row(i: int, rec: Mapping[str, Any]) -> str:
    k = kind_of(rec)
    cells = [str(i), escape(d.title(rec), 80), escape(rec.get("kind")), escape(k.summary_claim(), 120),
             _verdict(rec), escape(k.epsilon_bound() or "—"), escape(d.fmt(rec.get("elapsed_s"), 3))]
    return "| " + " | ".join(cells) + " |"


def _pinned(run: Mapping[str, Any]) -> list[str]:
    """What the verdicts are about: each audited file's SHA-256, the dpaudit version and the
    environment, in a collapsed block."""
    out = ["<details><summary>Audited files, dpaudit version and environment</summary>", ""]
    files = run.get("audited_files")
    if isinstance(files, list) and files:
        out += ["Audited files (SHA-256 when audited):", ""]
        for f in files:  # a list, not a table: the results table stays the comment's only one
            if isinstance(f, Mapping):
                digest = f.get("sha256") or f"not hashed: {f.get('error') or 'unreadable'}"
                out.append(f"- {code(f.get('path', ''), 200)}: {code(digest)}")
        out.append("")
    elif files is None:
        out += ["Audited files: not recorded by this run.", ""]
    env = run.get("environment") if isinstance(run.get("environment"), Mapping) else {}
    facts = [f"dpaudit {code(run.get('tool_version') or '—')}"]
    facts += [f"{escape(k)} {code('—' if v is None else v)}" for k, v in env.items()]
    out += [" · ".join(facts), "", "</details>", ""]
    return out


def render_markdown(run: Mapping[str, Any]) -> str:
    """The Markdown summary of ``run`` (ends with a newline)."""
    records = list(run.get("results", []))
    summary = run.get("summary") or summarise(records)
    counts = summary.get("verdicts", {})
    tally = ", ".join(f"{n} {d.verdict_label(v).lower()}" for v, n in counts.items() if n) or "no results"
    seed = run.get("seed")
    out = [f"## dpaudit: {tally}", ""]
    total = summary.get("total", len(records))
    meta = [f"{total} result{'' if total == 1 else 's'}", f"seed {escape(seed) if seed is not None else '—'}"]
    if summary.get("with_expected"):
        met = summary["with_expected"] - summary.get("mismatches", 0)
        meta.append(f"{met} / {summary['with_expected']} verdicts as expected")
    if run.get("git_commit"):
        meta.append(f"commit {code(str(run['git_commit'])[:12])}")
    if run.get("tool_version"):
        meta.append(f"dpaudit {escape(run['tool_version'])}")
    for policy in fnd.policies(records):
        meta.append(f"float64 policy {code(policy)} ({escape(fnd.POLICY_MEANING.get(policy, ''))})")
    out += [" · ".join(meta), "",
            "> NOT REFUTED means no violation was found with the budget spent: it is not a proof. "
            "INCONCLUSIVE is not a pass. Only PROVED proves.", ""]
    from dpaudit.report.provenance import computed_text, isolation_off, settings_from_text

    for rec in records[:MAX_ROWS]:  # what a verdict rests on, before any verdict is read
        for said in (computed_text(rec), isolation_off(rec), settings_from_text(rec)):
            if said:
                out += [f"> **{escape(d.title(rec), 120)}**: {escape(said, 400)}", ""]
    flagged = [r for r in records if _attention(r)]
    if flagged:
        out += [f"### Findings ({len(flagged)})", ""]
        for rec in flagged[:MAX_ROWS]:
            out += _finding(rec)
        if len(flagged) > MAX_ROWS:
            out.append(f"- … and {len(flagged) - MAX_ROWS} more (see the JSON result)")
        out.append("")
    else:
        out += ["No claim refuted, no error, nothing inconclusive"
                + (", every verdict as expected." if summary.get("with_expected") else "."), ""]
    out += [f"<details><summary>All {len(records)} result{'' if len(records) == 1 else 's'}</summary>", "",
            "| # | result | evidence | claim | verdict | ε lower bound | time (s) |",
            "|---:|---|---|---|---|---:|---:|"]
    out += [_row(i, r) for i, r in enumerate(records[:MAX_ROWS], 1)]
    if len(records) > MAX_ROWS:
        out += ["", f"… and {len(records) - MAX_ROWS} more rows (see the JSON result)"]
    out += ["", "</details>", ""]
    out += _pinned(run)
    if run.get("command"):
        out += [f"Command: {code(run['command'])}", ""]
    return "\n".join(out)
