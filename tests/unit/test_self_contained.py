"""The repository stands on its own: code and docs cite papers or files in the repository.

Nothing under dpaudit/, mechanisms/, audits/, docs/, examples/ or README.md may point a reader at
documents that are not in the repository: the outside math notes ("SPEC", "SPEC.md §3.2"), design
and style notes (DESIGN.md, STYLE.md), the seed tags "S1 eq (7)" / "seed 001", or a path into a
shared folder outside the tree. Cite the paper (authors, year, equation) or a file here, e.g.
docs/math.md#geometric. Words such as SPECIFIC, ``spec`` or ``_SPEC`` are not matched.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCOPE = ("dpaudit", "mechanisms", "audits", "docs", "examples", "README.md")
SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache"}

FORBIDDEN = re.compile(
    r"(?<![A-Za-z0-9_])SPEC(?![A-Za-z0-9_])"                      # SPEC, SPEC.md, SPEC §3
    r"|DESIGN\.md|STYLE\.md"
    r"|(?<![A-Za-z0-9_])S[0-4] (?:eqs?|Def|Definition|Lemmas?|Thms?|Theorem|Props?|Proposition"
    r"|Remark|§|Table|Alg|Fig)(?![A-Za-z])"                        # S1 eq (7), S0 Def 7, S2 Lemma 3.5
    r"|(?<![A-Za-z0-9_])seeds?[ -]00[0-9](?![0-9])"                # seed 001, seed-002, seeds 000
    r"|\.\./shared|/work/shared")


def _files():
    for entry in SCOPE:
        path = ROOT / entry
        if path.is_file():
            yield path
        elif path.is_dir():
            for p in sorted(path.rglob("*")):
                if p.is_file() and not SKIP_DIRS.intersection(p.parts):
                    yield p


def _hits() -> list[str]:
    hits = []
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files (images) carry no citations
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in FORBIDDEN.finditer(line):
                hits.append(f"{path.relative_to(ROOT)}:{lineno}: {m.group(0)!r} in {line.strip()[:120]}")
    return hits


def test_pattern_matches_outside_references_only():
    for bad in ("see SPEC §3.2", "(SPEC.md)", "DESIGN.md", "STYLE.md 10", "S1 eq (7)", "S0 Def 7",
                "S2 Lemma 3.5", "seed 001", "seed-002", "seeds 000", "../shared/SPEC.md"):
        assert FORBIDDEN.search(bad), bad
    for fine in ("SPECIFIC", "a spec", "_SPEC = None", "_SPECS", "MechanismSpec", "S2 = S + {z}",
                 "seed001/s001-eq7-density", "docs/math.md#e9", "seed 12", "Chen, Pal and Golubchik (2016) eq (7)"):
        assert not FORBIDDEN.search(fine), fine


def test_no_reference_to_documents_outside_the_repository():
    hits = _hits()
    assert not hits, ("cite a paper (authors, year, equation) or a file in the repository "
                      "(e.g. docs/math.md#...) instead of:\n" + "\n".join(hits))
