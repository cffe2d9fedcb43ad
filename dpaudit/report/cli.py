"""``dpaudit report RESULT.json [--html F] [--json F] [--junit F] [--sarif F] [--markdown F]``:
re-render a saved run (one ``--NAME F`` per format of :mod:`dpaudit.report.registry`).

The saved JSON is the canonical result, so every other format can be produced again from it alone,
later and elsewhere (a reviewer re-renders the HTML from a CI artefact). The run is validated on
reading (format version, record keys); a bad file is one line and exit code 3.
"""

from __future__ import annotations

import argparse
import os
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
    seen: dict = {os.path.realpath(os.fspath(args.result)): "the result read"}
    for fmt, path in outputs.items():
        if path is None:
            continue
        key = os.path.realpath(os.fspath(path))
        if key in seen:  # the saved result (or another format) would be replaced, with no warning
            if seen[key] == "the result read":
                raise UsageError(f"dpaudit report: --{fmt} {path} would overwrite the result it "
                                 f"reads ({args.result}): give it another path")
            raise UsageError(f"dpaudit report: --{seen[key]} and --{fmt} both write {path}")
        seen[key] = fmt
    run = read_json(args.result)
    written = write_reports(run, **outputs)
    counts = run["summary"]["verdicts"]
    tally = ", ".join(f"{n} {verdict_label(v).lower()}" for v, n in counts.items() if n)
    total = run["summary"]["total"]
    print(f"dpaudit: {args.result}: {total} result{'' if total == 1 else 's'} ({tally or 'none'})")
    for fmt, path in written.items():
        print(f"dpaudit: wrote {fmt}: {path}")
    sys.stdout.flush()
    return ExitCode.OK
