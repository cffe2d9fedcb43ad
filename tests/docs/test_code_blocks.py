"""Every console and Python block of README.md and docs/*.md is run and prints what it says
(the conventions: tests/docs/doc_blocks.py), and the README stays a page a newcomer reads:
at most 180 lines, its set-up commands the ones .ci/run runs.

A stale block fails with its file and line, the first line that differs, and the command that
refreshes it from a real run: ``python tests/docs/doc_blocks.py --refresh FILE:LINE``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_blocks  # noqa: E402

ROOT = doc_blocks.ROOT
BLOCKS = doc_blocks.all_blocks()
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("block", [
    pytest.param(b, marks=pytest.mark.slow) if b.slow else b for b in BLOCKS if not b.skip
], ids=lambda b: b.id)
def test_the_block_prints_what_it_says(block, tmp_path):
    needs = block.options.get("requires")
    if needs and importlib.util.find_spec(needs) is None:  # found, not imported: the block runs it
        pytest.skip(f"{block.id} needs {needs}: pip install -e '.[libraries]'")
    problems = doc_blocks.check(block, doc_blocks.workspace(tmp_path))
    assert not problems, (
        f"{block.id}: the {block.lang} block is stale (refresh it: python tests/docs/doc_blocks.py "
        f"--refresh {block.id})\n" + "\n\n".join(problems))


def test_the_blocks_follow_the_conventions():
    assert len(BLOCKS) >= 10  # the README's and the docs' examples are found
    assert any(b.path == "README.md" and b.lang == "console" for b in BLOCKS)
    fast = [b for b in BLOCKS if not b.slow and not b.skip]
    assert fast, "at least one block runs in the fast subset"
    for b in BLOCKS:
        if b.lang == "console":
            assert b.commands(), f"{b.id}: a console block without a `$ ` command"
        if b.lang == "python" and not b.options.get("pytest"):
            compile("\n".join(b.body), b.id, "exec")  # every Python block is Python, run or not


def test_skipped_blocks_say_why():
    for b in BLOCKS:
        if b.skip:
            assert len(b.skip) > 10, f"{b.id}: say why the block cannot run"


def test_the_readme_fits_on_a_screen_and_its_set_up_is_what_ci_runs():
    assert len(README.splitlines()) <= 180
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = re.search(r"```bash\n(python3 -m venv .*)\n```", README).group(1)
    tests = re.search(r"```bash\n(\. \.venv/bin/activate && python -m pytest .*)\n```", README).group(1)
    for step in install.split(" && ")[1:]:  # after the venv: pip, then the demo
        assert step in ci, f".ci/run does not run the README's {step!r}"
    assert tests.split(" && ")[1] in ci
    assert "mkdocs build --strict" in ci
    assert "about 5 minutes on 2 cores" in README


def test_the_docs_site_lists_every_page():
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    pages = {next(iter(item.values())) for item in nav}
    assert pages == {p.name for p in (ROOT / "docs").glob("*.md")}


def test_the_matcher_allows_rounding_and_wildcards_but_not_other_numbers():
    m = doc_blocks.line_matches
    assert m("ε ≥ 6.805 from 61,284 samples", "ε ≥ 6.806 from 61,284 samples")
    assert not m("ε ≥ 6.805 from 61,284 samples", "ε ≥ 6.81 from 61,284 samples")
    assert not m("from 61,284 samples", "from 61,285 samples")
    assert m("from 61,284 samples", "from 61,300 samples", rtol=0.01)
    assert m("wrote html: … (0.9 s)", "wrote html: /tmp/x/r.html (1.0 s)")
    assert not m("dpaudit 0.1.0", "dpaudit 0.1.1")
    assert doc_blocks.lines_match(["a", "…", "b"], ["a", "x", "y", "b"])
    assert not doc_blocks.lines_match(["a", "b"], ["a", "b", "c"])


@pytest.mark.slow
def test_a_pytest_block_whose_test_fails_is_reported(tmp_path):
    block = doc_blocks.Block("x.md", 1, 4, "python", ["def test_it():", "    assert 1 == 2"],
                             {"pytest": True})
    (problem,) = doc_blocks.check(block, tmp_path)
    assert "do not pass" in problem and "1 failed" in problem
