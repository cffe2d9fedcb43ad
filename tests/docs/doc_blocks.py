"""The code blocks of README.md and docs/*.md: found, run, compared with what they say they print,
and refreshed from a real run.

Conventions (docs/index.md, "Code blocks are tested", says them to authors):

* Every `````console`` and `````python`` block is run; no other language is (``bash`` for commands a
  reader copies but a test cannot run, such as the install line, which ``.ci/run`` runs; ``yaml``,
  ``toml``, ``text`` for files and outputs).
* An HTML comment on the line just above the fence, invisible on GitHub and on the site, sets
  options, comma-separated: ``<!-- doctest: fast -->`` (in the fast subset; blocks are ``slow``
  by default), ``<!-- doctest: rtol=0.05 -->`` (a relative tolerance for numbers),
  ``<!-- doctest: pytest -->`` (a Python block is a test file, run with pytest),
  ``<!-- doctest: requires=diffprivlib -->`` (run where that module is installed, else skipped
  with the install command: the optional DP libraries), or
  ``<!-- doctest: skip: REASON -->`` (not run; the reason is required).
* In a console block, each ``$ `` line is a command, run by bash in order in one session (so
  ``echo $?`` sees the previous command), from a temporary folder holding a copy of
  ``examples/`` and ``audits/``; the lines up to the next ``$ `` are its expected output, stdout
  and stderr together.
* A Python block's expected output is the `````text`` block right after it (blank lines, comments
  and one line ending in ``:`` may come between); without one it must print nothing, and a
  ``pytest`` block without one must pass.
* An expected line matches an actual line when its text is equal, ``…`` standing for any text in
  the line and a line of ``…`` alone for any number of lines (run-dependent parts: timings,
  temporary paths). Numbers are compared as numbers: to one unit of their last printed digit
  (a bound printed as 6.805 may be 6.804 or 6.806 on another machine, whose libm rounds
  differently), or within the block's ``rtol``; never bit for bit.

``python tests/docs/doc_blocks.py --refresh README.md:57`` reruns the block that starts at that
line (or every block of a file, without ``:LINE``) and rewrites the expected output of each
command whose output no longer matches; ``--list`` lists the blocks.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]
#: The files whose blocks are run.
FILES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
RUN = ("console", "python")
ELLIPSIS = "…"
#: Copied into the folder blocks run from.
WORKSPACE = ("examples", "audits")
TIMEOUT = 600

_FENCE = re.compile(r"^(```+)\s*([\w+-]*)(.*)$")
_DIRECTIVE = re.compile(r"^<!--\s*doctest:\s*(.*?)\s*-->\s*$")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w.]?\d)(?!\w)")


@dataclass
class Block:
    path: str
    line: int                  # 1-based line of the opening fence
    end: int                   # 1-based line of the closing fence
    lang: str
    body: list[str]
    options: dict = field(default_factory=dict)
    output: Optional[tuple[int, int]] = None   # lines (fences excluded) of a python block's text block
    expected_text: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def slow(self) -> bool:
        return "fast" not in self.options

    @property
    def skip(self) -> Optional[str]:
        return self.options.get("skip")

    def commands(self) -> list[tuple[str, list[str]]]:
        """A console block's ``(command, expected lines)`` pairs."""
        out: list[tuple[str, list[str]]] = []
        for line in self.body:
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
            elif line.strip():
                raise ValueError(f"{self.id}: a console block starts with a `$ ` command")
        return [(c, _trim(e)) for c, e in out]


def _trim(lines: list[str]) -> list[str]:
    lines = [ln.rstrip() for ln in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _options(text: str, where: str) -> dict:
    options: dict = {}
    for part in [p.strip() for p in text.split(",")] if not text.startswith("skip") else [text]:
        if part.startswith("skip"):
            reason = part[4:].lstrip(":").strip()
            if not reason:
                raise ValueError(f"{where}: <!-- doctest: skip: REASON --> needs its reason")
            options["skip"] = reason
        elif part in ("fast", "slow", "pytest"):
            options[part] = True
        elif part.startswith("rtol="):
            options["rtol"] = float(part[5:])
        elif part.startswith("requires="):
            options["requires"] = part[len("requires="):]
        elif part:
            raise ValueError(f"{where}: unknown doctest option {part!r} (fast, slow, pytest, rtol=X, "
                             f"requires=MODULE, skip: REASON)")
    return options


def parse(path: str) -> list[Block]:
    """The fenced blocks of ``path`` (relative to the repository) that are run."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    fenced: list[tuple[int, int, str, dict]] = []   # every fence: start, end, lang, options
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not lines[j].startswith(ticks):
            j += 1
        prev = i - 1
        options = {}
        if prev >= 0 and _DIRECTIVE.match(lines[prev]):
            options = _options(_DIRECTIVE.match(lines[prev]).group(1), f"{path}:{prev + 1}")
        fenced.append((i, j, lang, options))
        i = j + 1
    for k, (start, end, lang, options) in enumerate(fenced):
        if lang not in RUN:
            continue
        block = Block(path, start + 1, end + 1, lang, lines[start + 1:end], options)
        if lang == "python" and k + 1 < len(fenced) and fenced[k + 1][2] == "text":
            between = [ln.strip() for ln in lines[end + 1:fenced[k + 1][0]]]
            prose = [ln for ln in between if ln and not ln.startswith("<!--")]
            if len(prose) == 0 or (len(prose) == 1 and prose[0].endswith(":")):
                ts, te = fenced[k + 1][0], fenced[k + 1][1]
                block.output = (ts + 1, te)
                block.expected_text = _trim(lines[ts + 1:te])
        blocks.append(block)
    return blocks


def all_blocks() -> list[Block]:
    return [b for path in FILES for b in parse(path)]


# -- comparing ------------------------------------------------------------------------------------

def _unit(token: str) -> float:
    mantissa, _, exp = token.replace(",", "").lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 10.0 ** (int(exp or 0) - decimals)


def line_matches(expected: str, actual: str, rtol: float = 0.0) -> bool:
    """Whether ``actual`` is the ``expected`` line: ``…`` any text, numbers to a unit of their
    last digit (or ``rtol``)."""
    pattern, numbers, pos = "", [], 0
    for m in re.finditer(re.escape(ELLIPSIS) + "|" + _NUMBER.pattern, expected):
        pattern += re.escape(expected[pos:m.start()])
        if m.group(0) == ELLIPSIS:
            pattern += ".*?"
        else:
            pattern += r"(\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?)"
            numbers.append(m.group(0))
        pos = m.end()
    pattern += re.escape(expected[pos:])
    got = re.fullmatch(pattern, actual)
    if got is None:
        return False
    for want, have in zip(numbers, got.groups()):
        a, b = float(want.replace(",", "")), float(have.replace(",", ""))
        tol = rtol * abs(a)
        if "." in want or "e" in want.lower():  # a rounded number: its last digit may differ by one
            tol = max(tol, _unit(want) * (1 + 1e-9))
        if abs(a - b) > tol:
            return False
    return True


def lines_match(expected: list[str], actual: list[str], rtol: float = 0.0) -> bool:
    """Line by line; an expected line of ``…`` alone matches any number of actual lines."""
    if not expected:
        return not actual
    if expected[0].strip() == ELLIPSIS:
        return any(lines_match(expected[1:], actual[k:], rtol) for k in range(len(actual) + 1))
    return bool(actual) and line_matches(expected[0], actual[0], rtol) and lines_match(expected[1:], actual[1:], rtol)


def first_difference(expected: list[str], actual: list[str], rtol: float = 0.0) -> str:
    """A short account of where ``actual`` leaves ``expected`` (for a failure message)."""
    for k, want in enumerate(expected):
        if want.strip() == ELLIPSIS:
            return "(after a … line)"
        have = actual[k] if k < len(actual) else "<no line>"
        if not line_matches(want, have, rtol):
            return f"line {k + 1}:\n  expected: {want}\n  got:      {have}"
    return f"line {len(expected) + 1}:\n  expected: <no line>\n  got:      {actual[len(expected)]}"


# -- running --------------------------------------------------------------------------------------

def workspace(folder: Path) -> Path:
    for name in WORKSPACE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _env() -> dict:
    bin_dir = str(Path(sys.executable).parent)
    return dict(os.environ, CI="1", PYTHONPATH=str(ROOT), COLUMNS="200",
                PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


def run_console(block: Block, folder: Path) -> list[list[str]]:
    """Each command's output lines, the commands run in order in one bash session."""
    commands = block.commands()
    marker = "@@doctest-output@@"
    script = ["__status=0"]
    for k, (cmd, _) in enumerate(commands):
        script += [f"printf '%s\\n' '{marker}{k}'", "(exit $__status)", f"{cmd} 2>&1", "__status=$?"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, env=_env(), capture_output=True,
                          text=True, timeout=TIMEOUT)
    outputs: list[list[str]] = []
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith(marker):
            outputs.append([])
        elif outputs:
            outputs[-1].append(line)
    return [_trim(o) for o in outputs]


def run_python(block: Block, folder: Path) -> list[str]:
    source = "\n".join(block.body) + "\n"
    if block.options.get("pytest"):
        (folder / "test_doc_block.py").write_text(source, encoding="utf-8")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
               "test_doc_block.py"]
    else:
        (folder / "doc_block.py").write_text(source, encoding="utf-8")
        cmd = [sys.executable, "doc_block.py"]
    done = subprocess.run(cmd, cwd=folder, env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    lines = _trim((done.stdout + done.stderr).splitlines())
    if done.returncode != 0:
        lines.append(f"<exit status {done.returncode}>")
    return lines


def check(block: Block, folder: Path) -> list[str]:
    """Problems with ``block`` (empty when it prints what it says)."""
    rtol = block.options.get("rtol", 0.0)
    problems = []
    if block.lang == "console":
        for (cmd, want), got in zip(block.commands(), run_console(block, folder)):
            if not lines_match(want, got, rtol):
                problems.append(f"$ {cmd}\n{first_difference(want, got, rtol)}\n"
                                f"--- whole output ---\n" + "\n".join(got))
    elif block.options.get("pytest") and block.output is None:  # its tests must pass
        got = run_python(block, folder)
        if got and got[-1].startswith("<exit status"):
            problems.append("the block's tests do not pass:\n" + "\n".join(got))
    else:
        got = run_python(block, folder)
        if not lines_match(block.expected_text, got, rtol):
            problems.append(f"{first_difference(block.expected_text, got, rtol)}\n--- whole output ---\n"
                            + "\n".join(got))
    return problems


# -- refreshing -----------------------------------------------------------------------------------

def refresh(block: Block, folder: Path) -> bool:
    """Rewrite ``block``'s expected output from a run where it no longer matches; True if changed."""
    path = ROOT / block.path
    lines = path.read_text(encoding="utf-8").splitlines()
    rtol = block.options.get("rtol", 0.0)
    if block.lang == "console":
        new_body: list[str] = []
        changed = False
        for (cmd, want), got in zip(block.commands(), run_console(block, folder)):
            keep = lines_match(want, got, rtol)
            changed |= not keep
            new_body += [f"$ {cmd}", *(want if keep else got)]
        if not changed:
            return False
        lines[block.line:block.end - 1] = new_body
    else:
        got = run_python(block, folder)
        if lines_match(block.expected_text, got, rtol):
            return False
        if block.output is None:
            lines[block.end:block.end] = ["", "```text", *got, "```"]
        else:
            lines[block.output[0]:block.output[1]] = got
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return True


def _select(specs: list[str]) -> list[Block]:
    chosen = []
    for spec in specs:
        file, _, line = spec.partition(":")
        blocks = [b for b in parse(file) if not line or b.line == int(line)]
        if not blocks:
            raise SystemExit(f"no runnable block at {spec}")
        chosen += blocks
    return chosen


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--refresh", nargs="+", metavar="FILE[:LINE]", help="rewrite stale expected output")
    p.add_argument("--list", action="store_true", help="list the runnable blocks")
    args = p.parse_args(argv)
    if args.list or not args.refresh:
        for b in all_blocks():
            print(f"{b.id:28} {b.lang:8} {'skip: ' + b.skip if b.skip else ('slow' if b.slow else 'fast')}")
        return 0
    # later blocks first: a rewrite changes the line numbers of the blocks below it
    for block in sorted(_select(args.refresh), key=lambda b: (b.path, -b.line)):
        if block.skip:
            print(f"{block.id}: skipped ({block.skip})")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            changed = refresh(block, workspace(Path(tmp)))
        print(f"{block.id}: {'refreshed: check the diff, and put … back where a run differs' if changed else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
