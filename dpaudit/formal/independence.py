"""Solve a dumped SMT-LIB2 query again in a fresh z3 process (the independence check).

The z3-solver wheel installs a ``z3`` executable next to the Python interpreter; when it is
missing, a fresh Python process parses the file with ``z3.Solver().from_file`` instead. Either
way nothing of the process that wrote the file is reused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Optional

__all__ = ["z3_command", "solve_fresh"]

_PY_SOLVE = ("import sys, z3; s = z3.Solver(); s.from_file(sys.argv[1]); print(s.check())")


def z3_command() -> list[str]:
    """The command prefix that runs one SMT-LIB2 file in a fresh process."""
    exe = shutil.which("z3", path=os.path.dirname(sys.executable)) or shutil.which("z3")
    if exe:
        return [exe]
    return [sys.executable, "-c", _PY_SOLVE]


def solve_fresh(path: str, timeout_s: float = 60.0, command: Optional[list[str]] = None) -> str:
    """z3's first answer line for the file at ``path``: ``sat``, ``unsat`` or ``unknown``, or
    ``error: …`` when the process fails or prints something else."""
    cmd = (command or z3_command()) + [os.fspath(path)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return "error: the fresh solve timed out"
    lines = proc.stdout.strip().splitlines()
    first = lines[0].strip() if lines else ""
    if first in ("sat", "unsat", "unknown"):
        return first
    return f"error: exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}"
