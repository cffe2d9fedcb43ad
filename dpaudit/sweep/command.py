"""``dpaudit sweep LIBRARY``: the command body of the library sweep (:func:`dpaudit.sweep.run`).

Prints the table per constructor, writes ``--json F`` (the sweep's record: the settings, the
counts, one summary per constructor and one row per case), ``--journal F`` (each case as one
JSON line as soon as it is known) and ``--drafts DIR`` (a Markdown bug-report draft per
refutation). Exit code 1 when a map is refuted, else 0 (errors and skips are listed, not failures).
"""

from __future__ import annotations

import argparse
import sys

from dpaudit.exitcodes import ExitCode

__all__ = ["run_sweep", "add_arguments"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``dpaudit sweep``."""
    from dpaudit.sweep import DEFAULTS, LIBRARIES

    p.add_argument("library", choices=sorted(LIBRARIES), help="the library to sweep")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--samples", type=int, help=f"samples per sampled check ({DEFAULTS['samples']:,})")
    p.add_argument("--budget", type=int, help=f"evaluations per stability check ({DEFAULTS['budget']})")
    p.add_argument("--cases", type=int, help=f"objects checked per constructor ({DEFAULTS['cases']})")
    p.add_argument("--attempts", type=int, help=f"combinations tried per constructor ({DEFAULTS['attempts']:,})")
    p.add_argument("--confidence", type=float, help="family-wise confidence of every sampled check (0.95)")
    p.add_argument("--timeout", type=float, help=f"seconds per check ({DEFAULTS['timeout']:g})")
    p.add_argument("--only", action="append", metavar="NAME", help="only the constructor named NAME, "
                   "or, if none is, those whose name contains NAME (repeatable)")
    p.add_argument("--json", metavar="F", help="write the sweep's record as JSON")
    p.add_argument("--journal", metavar="F", help="write each case as a JSON line as soon as it is known")
    p.add_argument("--drafts", metavar="DIR", help="write a bug-report draft per refutation")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the totals")


def run_sweep(args: argparse.Namespace) -> ExitCode:
    from dpaudit.sweep import run

    def progress(case) -> None:
        if not args.quiet:
            print(f"  {case.verdict.upper().replace('_', ' '):12} {case.seconds:6.1f}s  {case.constructor}",
                  file=sys.stderr, flush=True)

    result = run(args.library, seed=args.seed, samples=args.samples, budget=args.budget, cases=args.cases,
                 attempts=args.attempts, confidence=args.confidence, timeout=args.timeout, only=args.only,
                 journal=args.journal, drafts=args.drafts, progress=progress)
    table = result.table()
    print(table.splitlines()[-1] if args.quiet else table)
    if args.json:
        from pathlib import Path

        from dpaudit.results import jsonable
        import json

        Path(args.json).write_text(json.dumps(jsonable(result.to_record()), indent=1, allow_nan=False) + "\n",
                                   encoding="utf-8")
    return ExitCode.REFUTED if result.refutations else ExitCode.OK
