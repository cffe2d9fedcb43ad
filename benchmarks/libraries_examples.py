"""Every example docs/libraries.md holds, run as a reader would: at dpaudit's defaults (no
``--samples``, no ``--seed``), without ``--in-process`` (the sandbox is the default) and with
``--timeout 300``; the wall and CPU seconds each took, its exit status and its verdict lines.

The examples are read from the page itself (its ``console`` command, the ``targets.py`` file of
targets, a file that declares a mechanism, the other ``python`` blocks), so the table follows the
page. A file that declares a mechanism (``@dpaudit.mechanism``) is checked as the page says,
``dpaudit check FILE.py``, sandboxed. The file form ``lib:FILE.py``
imports the file in dpaudit's own process, so the page says it needs ``--in-process``: it is run
first without it (the refusal is the result), then with it, each target by name. A library
target's code runs in process in every form (docs/libraries.md, "From the command line"). The
``python`` blocks run as scripts (their own sample budgets and seeds, as written), under the same
300-second limit.

Run::

    nice -n 10 python benchmarks/libraries_examples.py
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import ROOT, emit, machine, save

TIMEOUT = 300  # --timeout, seconds
GRACE = 60  # the process is killed this long after --timeout, if it has not ended by then
PAGE = ROOT / "docs" / "libraries.md"
DPAUDIT = str(Path(sys.executable).with_name("dpaudit"))
VERDICTS = re.compile(r"\b(NOT REFUTED|REFUTED|INCONCLUSIVE|ERROR|PROVED)\b")


def _blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block of the page, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w+)\n(.*?)^```", text, re.S | re.M)]


def examples(workdir: Path) -> list[tuple[str, list[str]]]:
    """``(label, argv)`` of each example of the page (module docstring)."""
    out: list[tuple[str, list[str]]] = []
    for lang, body in _blocks(PAGE.read_text(encoding="utf-8")):
        first = body.splitlines()[0] if body.strip() else ""
        if lang == "console" and first.startswith("$ dpaudit "):
            argv = shlex.split(first[2:])
            out.append((first[2:], [DPAUDIT, *argv[1:], "--timeout", str(TIMEOUT)]))
        elif lang == "python" and first.startswith("# targets.py"):
            path = workdir / "targets.py"
            path.write_text(body, encoding="utf-8")
            names = re.findall(r"^(\w+) = \w+\.target\(", body, re.M)
            out.append(("dpaudit check lib:targets.py (no --in-process)",
                        [DPAUDIT, "check", "lib:targets.py", "--timeout", str(TIMEOUT)]))
            for name in names:
                out.append((f"dpaudit check lib:targets.py:{name} --in-process",
                            [DPAUDIT, "check", f"lib:targets.py:{name}", "--in-process", "--timeout",
                             str(TIMEOUT)]))
        elif lang == "python" and "@dpaudit.mechanism" in body:  # a file to check, sandboxed
            path = workdir / f"mechanism{len(out)}.py"
            path.write_text(body, encoding="utf-8")
            out.append((f"dpaudit check {path.name} (the page's file of a mechanism)",
                        [DPAUDIT, "check", path.name, "--timeout", str(TIMEOUT)]))
        elif lang == "python":
            path = workdir / f"block{len(out)}.py"
            path.write_text(body, encoding="utf-8")
            out.append((f"python block: {body.strip().splitlines()[-1][:70]}", [sys.executable, path.name]))
    return out


def run(argv: list[str], cwd: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT + GRACE,
                              env={**os.environ, "NO_COLOR": "1"})
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = None, (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    verdicts = [ln for ln in lines if VERDICTS.search(ln) and not ln.startswith("reproduce:")]
    return {"exit": rc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "within_timeout": rc is not None and wall <= TIMEOUT + 5,
            "verdicts": [VERDICTS.search(v).group(1) for v in verdicts],
            "lines": [ln[:1500] for ln in (verdicts or lines[-3:])]}


def main() -> int:
    m = machine(affinity=len(os.sched_getaffinity(0)))
    lines: list[str] = []
    rows = []
    emit(lines, f"## the examples of docs/libraries.md at dpaudit's defaults, --timeout {TIMEOUT}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for label, argv in examples(work):
            r = run(argv, work)
            rows.append({"example": label, "argv": [Path(a).name if a in (DPAUDIT, sys.executable) else a
                                                     for a in argv], **r})
            emit(lines, f"{label}: exit {r['exit']}, {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU, "
                        f"{'within' if r['within_timeout'] else 'PAST'} the limit; "
                        f"{', '.join(r['verdicts']) or 'no verdict'}")
            for ln in r["lines"]:
                emit(lines, f"    {ln}")
    save("libraries_examples", {"machine": m, "timeout": TIMEOUT, "rows": rows}, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
