"""``dpaudit train-audit FILE.py[:NAME]``: the one-run canary audit of a training run (docs/training.md).

FILE.py defines the audit: a :class:`dpaudit.onerun.OneRunSpec` at module level (NAME, else the
only one), or a function of no arguments returning one (NAME, else ``one_run_spec``). The file is
imported and the model trained **in this process**: trusted code only (a training run needs its
framework, its threads and its memory; the sandbox of ``dpaudit check`` is not used). The command
prints one line, writes the reports asked for, and exits as ``dpaudit check`` does: 1 when the
claim is refuted, 6 when training or scoring failed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
from pathlib import Path
from typing import Any

from dpaudit.errors import LoadError, UsageError
from dpaudit.exitcodes import ExitCode, exit_code

__all__ = ["run_train_audit", "load_spec", "add_arguments"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The command's own flags (the report flags are added by the parser)."""
    p.add_argument("target", metavar="FILE.py[:NAME]",
                   help="a file defining a OneRunSpec (NAME, else the only one) or a function "
                        "returning one (NAME, else `one_run_spec`)")
    p.add_argument("--confidence", type=str, help="family-wise confidence of the verdict (default 0.95)")
    p.add_argument("--seed", type=str, help="root seed: which canaries are included, training's randomness (recorded)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when the claim is refuted")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")


def load_spec(target: str) -> Any:
    """The :class:`~dpaudit.onerun.OneRunSpec` that ``FILE.py[:NAME]`` defines (module docstring)."""
    from dpaudit.onerun import OneRunSpec

    path, _, name = target.partition(":") if not Path(target).exists() else (target, "", "")
    if not Path(path).is_file():
        raise LoadError(f"{path}: no such file")
    try:
        names = runpy.run_path(path, run_name="__dpaudit_train_audit__")
    except Exception as exc:
        raise LoadError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from exc
    if name:
        if name not in names:
            raise LoadError(f"{path} defines no {name!r}")
        found = names[name]
    else:
        specs = {k: v for k, v in names.items() if isinstance(v, OneRunSpec)}
        own = names.get("one_run_spec")
        # the file's own one_run_spec(), not one it imports (the training example imports
        # dpaudit.reference.dpsgd.one_run_spec to build its two specs: with both defined, that
        # helper was called with its defaults, and audited what neither definition says)
        own = own if callable(own) and getattr(own, "__module__", None) == "__dpaudit_train_audit__" else None
        if len(specs) == 1:
            found = next(iter(specs.values()))
        elif own is not None:
            found = own
        else:
            listed = f" ({', '.join(sorted(specs))})" if specs else ""
            raise LoadError(f"{path} defines {len(specs)} OneRunSpec values{listed} and no one_run_spec() "
                            f"of its own: name one as {path}:NAME")
    if callable(found) and not isinstance(found, OneRunSpec):
        found = found()
    if not isinstance(found, OneRunSpec):
        raise LoadError(f"{target} is a {type(found).__name__}, not a OneRunSpec")
    return found


def run_train_audit(args: argparse.Namespace) -> ExitCode:
    """The command (module docstring); return its exit code."""
    from dataclasses import replace

    from dpaudit.onerun import OneRunSettings, run
    from dpaudit.report import make_run, write_each
    from dpaudit.report.describe import one_line
    from dpaudit.report.registry import report_paths
    from dpaudit.validation import check_confidence, parse_real, parse_seed

    started = time.time()
    confidence = check_confidence(parse_real("--confidence", args.confidence)) if args.confidence else 0.95
    seed = parse_seed("--seed", args.seed) if args.seed is not None else None
    spec = load_spec(args.target)
    from dpaudit.rng import check_seed

    seed = check_seed(seed)
    line = f"dpaudit train-audit {args.target} --confidence={confidence!r} --seed={seed}"
    result = run(spec, OneRunSettings(confidence=confidence, seed=seed, reproduce=line))
    if spec.name == "train":
        result = replace(result, target=args.target)
    record = result.to_record()
    if not args.quiet:
        print(one_line(record))
        print(f"reproduce: {line}")
    reports = report_paths(args)
    if any(reports.values()):
        run_dict = make_run([record], seed=seed, started=started, finished=time.time(),
                            command=getattr(args, "argv", None) or sys.argv)
        _, failed = write_each(run_dict, **reports)
        for fmt, why in failed.items():
            print(f"dpaudit: error: the {fmt} report was not written: {why}", file=sys.stderr)
        if failed:
            raise UsageError("; ".join(failed.values()))
    return exit_code([record], exit_zero=args.exit_zero)
