"""The end-to-end statistical runs that left the test suite: ``benchmarks/statistical/``.

Each file there is a seeded statistical test (its α in its docstring, a fixed seed, nothing
retried) that audits with budgets of 10⁵ to 10⁶ samples, so 5 to 10 CPU s a test:

* ``test_encoding_invariance.py``: one mechanism's output written as a tuple, a list, a coded
  vector, an index set or a bit vector gives one ε lower bound (within 5%);
* ``test_auditor_long_vector.py``: a 300-bin histogram, as claimed (not refuted) and with too
  little noise (refuted);
* ``test_partition_selection_stat.py``: a partition-selection threshold computed for 10ε is
  refuted with its δ, a calibrated one is not.

The suite keeps the features they exercise in unit tests (tests/unit/test_outputs.py,
test_wide_outputs.py, test_selection_halves.py, test_partition_selection.py) and the auditor's size
in tests/statistical/; these runs are the end-to-end power and invariance evidence, run on demand
like ``size_and_power.py`` and recorded in ``benchmarks/results/statistical_runs.{json,txt}``
(every test's outcome, wall and the run's CPU seconds).

Run::

    nice python benchmarks/statistical_runs.py            # all, 2 workers: about 60 CPU s
    nice python benchmarks/statistical_runs.py -k long_vector --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from _record import ROOT, children_cpu_seconds, emit, machine, save, write_json

FOLDER = ROOT / "benchmarks" / "statistical"


def _outcomes(junit: Path) -> list[dict]:
    """Every test case of a JUnit XML report: its id, outcome and seconds."""
    cases = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
        cases.append({"test": f"{case.get('classname')}::{case.get('name')}", "outcome": outcome,
                      "seconds": round(float(case.get("time") or 0.0), 2)})
    return cases


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-k", help="pytest's -k: run only the matching tests (and write --out)")
    p.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (default 2)")
    p.add_argument("--out", type=Path, help="write the record here instead of benchmarks/results/")
    args = p.parse_args(argv)
    m = machine()
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", str(FOLDER), "-q", "-p", "no:cacheprovider",
               "-n", str(args.workers), f"--junitxml={junit}"] + (["-k", args.k] if args.k else [])
        cpu0, wall0 = children_cpu_seconds(), time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT)
        cpu, wall = children_cpu_seconds() - cpu0, time.perf_counter() - wall0
        cases = _outcomes(junit)
    for c in cases:
        emit(lines, f"{c['outcome']:7s} {c['seconds']:7.2f} s  {c['test']}")
    passed = sum(c["outcome"] == "passed" for c in cases)
    emit(lines, f"{passed} of {len(cases)} passed; {cpu:.1f} CPU s, {wall:.1f} s wall at {args.workers} workers")
    record = {"machine": m, "tests": cases, "passed": passed, "failed": len(cases) - passed,
              "cpu_seconds": round(cpu, 1), "wall_seconds": round(wall, 1), "workers": args.workers}
    if args.out or args.k:
        write_json(args.out or Path(tempfile.gettempdir()) / "statistical_runs.json",
                   {"command": " ".join(["python"] + sys.argv), **record})
    else:
        save("statistical_runs", record, lines)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
