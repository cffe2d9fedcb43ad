"""``dpaudit report RESULT.json [--html F] [--json F] [--junit F] [--sarif F] [--markdown F]``:
re-render a saved run (one ``--NAME F`` per format of :mod:`dpaudit.report.registry`).

The saved JSON is the canonical result, so every other format can be produced again from it alone,
later and elsewhere (a reviewer re-renders the HTML from a CI artefact). The run is validated on
reading (format version, record keys); a bad file is one line and exit code 3.
"""

from __future__ import annotations

import argparse
import sys

from dpaudit.exitcodes import ExitCode
from dpaudit.errors import UsageError
from dpaudit.report import read_json, report_paths, write_reports
from dpaudit.report.describe import verdict_label

__all__ = ["run_report"]


def run_report(args: argparse.Namespace) -> ExitCode:
    """Read ``args.result`` and write the requested formats; exit 0 when they are written."""
    outputs = report_paths(args)
    if not any(outputs.values()):
        flags = [f"--{name} F" for name in outputs]
        raise UsageError(f"dpaudit report: say what to write: {', '.join(flags[:-1])} or {flags[-1]}")
    run = read_json(args.result)
    written = write_reports(run, **outputs)
    counts = run["summary"]["verdicts"]
    tally = ", ".join(f"{n} {verdict_label(v).lower()}" for v, n in counts.items() if n)
    print(f"dpaudit: {args.result}: {run['summary']['total']} results ({tally or 'none'})")
    for fmt, path in written.items():
        print(f"dpaudit: wrote {fmt}: {path}")
    sys.stdout.flush()
    return ExitCode.OK
