"""The ``dpaudit`` command line: ``check | audit | verify | report | list``.

Every subcommand returns an :class:`ExitCode`; only :func:`main` exits (as pytest's ``ExitCode``). Errors in
our inputs print one line (one ``dpaudit: error:`` prefix, with a "did you mean" for a mistyped
flag or command) and exit 3; a crash, hang or bad output of an audited mechanism is an ERROR
verdict in the results, never a dpaudit traceback, and exits 6; an unexpected bug in dpaudit
itself prints one line (and the traceback only with ``DPAUDIT_DEBUG=1``) and exits 4.

Subcommand bodies live with the code they drive and are imported lazily, so ``dpaudit --help``
stays fast: ``check`` → :mod:`dpaudit.commands.check`, ``audit``/``list`` → :mod:`dpaudit.suite.commands`,
``verify`` → :mod:`dpaudit.formal.cli`, ``report`` → :mod:`dpaudit.report.cli`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, Optional, Sequence

from dpaudit.exitcodes import ExitCode, epilog

__all__ = ["ExitCode", "main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors get exit code 3, in one line with
    one ``dpaudit:`` prefix (:func:`run` adds it) and a "did you mean" for a mistyped flag or
    command (:func:`_did_you_mean`)."""

    def __init__(self, *args, **kwargs) -> None:
        # no prefixes: a typo such as --sample was taken silently as --samples
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        from dpaudit.errors import UsageError

        raise UsageError(_usage_message(self, message))

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        ns, extras = self.parse_known_args(args, namespace)
        if extras:  # argparse's own message, plus the flag each unknown one most resembles
            sub = _subparser(self, getattr(ns, "command", None))
            self.error(f"unrecognized arguments: {' '.join(extras)}"
                       + _did_you_mean_flags(sub or self, extras))
        return ns


def _subparser(parser: argparse.ArgumentParser, name: Optional[str]) -> Optional[argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps subparsers as an action of the parser
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return None


def _did_you_mean(word: str, choices: Sequence[str]) -> Optional[str]:
    """The one choice ``word`` abbreviates (``--eps`` for ``--epsilon``: difflib preferred
    ``--help``), else the choice it most resembles (difflib ratio ≥ 0.6), or None."""
    import difflib

    starts = [c for c in choices if c.startswith(word) and len(word) > 3]
    if len(starts) == 1:
        return starts[0]
    # the words without their dashes: a shared "--" made --bogus resemble --neighbours
    bare = {c.lstrip("-"): c for c in choices}
    close = difflib.get_close_matches(word.lstrip("-"), list(bare), n=1, cutoff=0.6)
    return bare[close[0]] if close else None


def _did_you_mean_flags(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """``"; did you mean --epsilon?"`` for the unknown flags among ``extras`` that resemble one of
    ``parser``'s long options (empty when none does)."""
    flags = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    hints = []
    for extra in extras:
        if extra.startswith("--"):
            guess = _did_you_mean(extra.split("=", 1)[0], flags)
            if guess and guess not in hints:
                hints.append(guess)
    return f"; did you mean {' or '.join(hints)}?" if hints else ""


def _usage_message(parser: argparse.ArgumentParser, message: str) -> str:
    """argparse's ``message`` as one line without the program name (``run`` prints the one
    ``dpaudit: error:`` prefix), a mistyped command or choice followed by what it resembles."""
    import re

    bad = re.match(r"argument (?P<arg>[^:]+): invalid choice: '(?P<word>.*)' \(choose from (?P<choices>.*)\)$",
                   message.strip(), re.S)
    if bad:
        choices = [c.strip().strip("'\"") for c in bad["choices"].split(",")]
        guess = _did_you_mean(bad["word"], choices)
        hint = f"; did you mean {guess!r}?" if guess else ""
        if bad["arg"] == "COMMAND":
            return f"unknown command {bad['word']!r}{hint} (commands: {', '.join(choices)})"
        return f"argument {bad['arg']}: invalid choice {bad['word']!r}{hint} (choose from {', '.join(choices)})"
    sub = parser.prog.split(" ", 1)[1] if " " in parser.prog else ""
    where = f" (see dpaudit {sub} --help)" if sub and "required" in message else ""
    return " ".join(message.split()) + where


# Options whose value may start with '-' (a negative LO): `--domain -10:10` is rewritten to
# `--domain=-10:10` before parsing, so both spellings work.
_VALUE_MAY_START_WITH_DASH = ("--domain",)


def _join_dash_values(argv: list[str]) -> list[str]:
    """``argv`` with ``--domain -10:10`` joined as ``--domain=-10:10``; nothing after ``--``,
    where every word is a target (``dpaudit check -- FILE ...``, the form for a list of files
    from a checkout: a file named ``--in-process`` is then a target, never a flag)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return out + argv[i:]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if a in _VALUE_MAY_START_WITH_DASH and nxt.startswith("-") and len(nxt) > 1 \
                and (nxt[1].isdigit() or nxt[1] == "." or nxt[1:4].lower() in ("inf", "nan")):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def build_parser() -> argparse.ArgumentParser:
    from dpaudit import __version__

    p = _Parser(prog="dpaudit", description="Audit differential-privacy mechanisms: sampled "
                "lower bounds on ε, sensitivity search, and z3 proofs, with compliance reports.",
                epilog=epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _check_flags(sub.add_parser("check", help="audit a mechanism in a Python file"))
    _other_commands(sub)
    return p


def _check_flags(c: argparse.ArgumentParser) -> None:
    """The flags of ``dpaudit check``: the target, its claim, the run, the engines, the reports."""
    c.add_argument("target", metavar="FILE.py[:FUNCTION]", nargs="+",
                   help="the file, and optionally the function (else the one decorated with "
                        "@dpaudit.mechanism, else the one named `mechanism`); several may be given; "
                        "or a library target: 'lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))', "
                        "lib:FILE.py[:NAME] (docs/libraries.md); after --, every word is a target "
                        "(dpaudit check --samples N -- FILE ...: the form for files you did not write)")
    c.add_argument("--epsilon", type=str, help="claimed ε (> 0)")
    c.add_argument("--delta", type=str, help="claimed δ in [0, 1) (default 0: pure DP)")
    c.add_argument("--rho", type=str, help="claimed ρ-zCDP, audited over the whole privacy curve "
                                           "(instead of --epsilon; docs/curves.md)")
    c.add_argument("--mu", type=str, help="claimed μ-Gaussian DP, audited over the whole curve")
    c.add_argument("--neighbours", "--neighbors", dest="neighbours",
                   help="add-remove | replace | linf | l1 (default add-remove)")
    c.add_argument("--domain", metavar="LO:HI", help="record domain, e.g. --domain=-10:10 (default 0:1)")
    c.add_argument("--size", type=str, help="records per dataset (default 10)")
    c.add_argument("--samples", type=str, help="sample budget per audit")
    c.add_argument("--confidence", type=str, help="family-wise confidence (default 0.95)")
    c.add_argument("--seed", type=str, help="root seed (recorded; default fixed)")
    c.add_argument("--timeout", type=str, help="total time limit in seconds")
    c.add_argument("--call-timeout", type=str, help="per-call time limit in seconds")
    c.add_argument("--memory", type=str, help="memory cap for the mechanism's process, e.g. 2G")
    c.add_argument("--in-process", action="store_true",
                   help="run the mechanism in this process (trusted code only; no sandbox)")
    c.add_argument("--isolation", choices=("strict", "process", "none"),
                   help="sandbox isolation: strict (Landlock + seccomp where the kernel has them; "
                        "default), process (own process and limits only), none (= --in-process)")
    c.add_argument("--pass-env", action="append", metavar="NAME",
                   help="let the sandboxed mechanism see this environment variable (repeatable)")
    c.add_argument("--trust-config", action="store_true",
                   help="take settings that can weaken the audit (float, samples, confidence, "
                        "seed, limits, isolation, [tool.dpaudit.targets] claims) from "
                        "pyproject.toml; without it they are a usage error, since in a checkout "
                        "you audit that file is its authors'")
    c.add_argument("--sensitivity", metavar="B", type=str,
                   help="search for a sensitivity violation of FUNCTION instead: claims "
                        "|f(D) - f(D')| <= B for neighbours D ~ D' of 0..--size records")
    c.add_argument("--individual", metavar="D0,D1,...", type=str,
                   help="with --sensitivity: individual sensitivities (one per identity)")
    c.add_argument("--norm", choices=("l1", "l2", "linf"),
                   help="with --sensitivity: norm for vector outputs (default l1)")
    c.add_argument("--examples", metavar="N", type=str,
                   help="with --sensitivity: neighbouring pairs to try (default 1000)")
    _engine_flags(c)


def _engine_flags(c: argparse.ArgumentParser) -> None:
    """``dpaudit check``'s flags that choose an engine or set one: sensitivity, Dask, replay,
    the float policy, early stopping; and the reports and exit-code flags."""
    c.add_argument("--executor", metavar="dask|tcp://HOST:PORT",
                   help="sample on Dask: a LocalCluster on this host, or an existing scheduler "
                        "(trusted code only: needs --in-process; pip install 'dpaudit[dask]')")
    _report_flags(c)
    c.add_argument("--exit-zero", action="store_true", help="exit 0 even when a claim is refuted")
    c.add_argument("--fail-on-inconclusive", action="store_true",
                   help="exit 2 when a result is inconclusive")
    c.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    c.add_argument("--replay", action="store_true",
                   help="audit by record and replay at the noise calls only (call sites, "
                        "declared sensitivities, data-dependent noise; docs/replay.md): a few "
                        "hundred calls instead of sampling")
    c.add_argument("--no-replay", dest="replay_stage", action="store_false",
                   help="skip the replay stage that runs before sampling (by default the "
                        "replay's findings are reported and its pairs sampled first)")
    c.add_argument("--nonfinite", action="store_true",
                   help="with --replay: also try neighbours with NaN and ±inf records")
    c.add_argument("--float", metavar="error|warn|off", type=str,
                   help="what a float64 finding (porosity) does: error refutes the claim "
                        "(default), warn reports it and exits 0, off asks only whether the logic "
                        "is right over the reals (also float = ... in [tool.dpaudit])")
    c.add_argument("--no-early-stop", dest="early_stop", action="store_false",
                   help="spend the whole budget even when an early look refutes the claim "
                        "(the tightest ε bound; default: stop at the first refuting look)")


def _other_commands(sub: Any) -> None:
    """``audit``, ``verify``, ``report``, ``list``, ``sweep`` and ``train-audit``."""
    a = sub.add_parser("audit", help="run audit definitions and write reports/")
    a.add_argument("paths", nargs="*", metavar="PATH", help="audit files or folders (default audits/)")
    a.add_argument("--id", dest="ids", action="append", metavar="ID", help="only this audit id (repeatable)")
    a.add_argument("--out", metavar="DIR", default="reports", help="report folder (default reports/)")
    a.add_argument("--seed", type=str, help="root seed (recorded; default fixed)")
    _report_flags(a)
    a.add_argument("--exit-zero", action="store_true")
    a.add_argument("--fail-on-inconclusive", action="store_true")
    a.add_argument("--quiet", "-q", action="store_true")

    v = sub.add_parser("verify", help="run the z3 claims")
    v.add_argument("--claim", dest="claims", action="append", metavar="NAME",
                   help="only this claim (repeatable)")
    v.add_argument("--json", metavar="F", help="write the results as JSON")
    v.add_argument("--smt2-dir", metavar="DIR", help="dump each query as SMT-LIB2")
    v.add_argument("--timeout", type=str, help="per-query solver timeout in seconds")

    r = sub.add_parser("report", help="re-render a saved result")
    r.add_argument("result", metavar="RESULT.json")
    _report_flags(r)

    sub.add_parser("list", help="list reference mechanisms, audits and formal claims")

    from dpaudit.sweep.command import add_arguments as _sweep_arguments

    _sweep_arguments(sub.add_parser("sweep", help="build and check every constructor of a DP library"))

    t = sub.add_parser("train-audit", help="one-run canary audit of a DP training run (docs/training.md)")
    from dpaudit.commands.train_audit import add_arguments

    add_arguments(t)
    _report_flags(t)


def _report_flags(p: argparse.ArgumentParser) -> None:
    """``--NAME F`` for every report format of the registry (``--html``, ``--json``, ...)."""
    from dpaudit.report.registry import add_report_options

    add_report_options(p)


_COMMANDS = {
    "check": ("dpaudit.commands.check", "run_check"),
    "audit": ("dpaudit.suite.commands", "run_audit"),
    "list": ("dpaudit.suite.commands", "run_list"),
    "verify": ("dpaudit.formal.cli", "run_verify"),
    "report": ("dpaudit.report.cli", "run_report"),
    "sweep": ("dpaudit.sweep.command", "run_sweep"),
    "train-audit": ("dpaudit.commands.train_audit", "run_train_audit"),
}


def _hypothesis_storage() -> None:
    """Keep hypothesis's files out of the user's working directory.

    dpaudit's searches run with no example database, but hypothesis still caches what it learns
    about the code (``.hypothesis/constants``) under the current directory. A command-line run
    should not leave that in the user's repository, so it goes to ``$XDG_CACHE_HOME/dpaudit``
    (default ``~/.cache/dpaudit``) unless HYPOTHESIS_STORAGE_DIRECTORY is already set.
    """
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(cache, "dpaudit", "hypothesis")


def _process_started() -> Optional[float]:
    """When this process started, on the ``time.monotonic`` clock (Linux: its start time in
    ``/proc/self/stat`` against the boot-time clock), so that ``--timeout`` counts the
    interpreter's start and dpaudit's imports too; None where that cannot be read."""
    import time

    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return time.monotonic() - age if 0.0 <= age < 60.0 else None


def _long_ints_as_text() -> Optional[int]:
    """Let this process write as text every int a sandbox child can send
    (:data:`dpaudit.execution.safe_pickle.MAX_INT_BYTES`: about 19,700 digits; Python's default
    stops at 4,300, its guard against quadratic conversions of unbounded ints); return the limit
    it had (None when unchanged). A mechanism that returned 10**5000 + k, refuted, lost every
    report and was an internal error in the texts that name its output; conversions of ints this
    size take milliseconds."""
    from dpaudit.execution.safe_pickle import MAX_INT_BYTES

    limit = int(MAX_INT_BYTES * 8 * 0.30103) + 64  # its decimal digits, and a margin
    if not hasattr(sys, "set_int_max_str_digits"):  # pragma: no cover - Python < 3.11
        return None
    before = sys.get_int_max_str_digits()
    if not 0 < before < limit:
        return None
    sys.set_int_max_str_digits(limit)
    return before


def run(argv: Optional[Sequence[str]] = None, started: Optional[float] = None) -> ExitCode:
    """Parse ``argv`` and run the subcommand; return its exit code (never exits). ``started``:
    when the run began (``time.monotonic``), if before this call (``--timeout`` counts from it).
    The process's limit on writing ints as text is raised for the run and given back after."""
    before = _long_ints_as_text()
    try:
        return _run(argv, started)
    finally:
        if before is not None:
            sys.set_int_max_str_digits(before)


def _run(argv: Optional[Sequence[str]], started: Optional[float]) -> ExitCode:
    from dpaudit.errors import DpauditError

    _hypothesis_storage()
    args_list = _join_dash_values(list(sys.argv[1:] if argv is None else argv))
    try:
        args = build_parser().parse_args(args_list)
        if not args.command:
            build_parser().print_help(sys.stderr)
            return ExitCode.USAGE_ERROR
        args.argv = args_list  # the command line as given, for reports and reproduce lines
        args.started = started
        module, func = _COMMANDS[args.command]
        if args.command == "check" and any(str(t).startswith("lib:") for t in args.target):
            module, func = "dpaudit.commands.library_check", "run_library_check"  # lib:... targets
        return ExitCode(getattr(importlib.import_module(module), func)(args))
    except DpauditError as exc:
        from dpaudit.errors import NothingMatched

        print(f"dpaudit: error: {exc}", file=sys.stderr)
        return ExitCode.NOTHING_TO_AUDIT if isinstance(exc, NothingMatched) else ExitCode.USAGE_ERROR
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except Exception as exc:  # a bug in dpaudit itself
        if os.environ.get("DPAUDIT_DEBUG"):
            raise
        print(f"dpaudit: internal error: {type(exc).__name__}: {exc} "
              f"(rerun with DPAUDIT_DEBUG=1 for the traceback)", file=sys.stderr)
        return ExitCode.INTERNAL_ERROR


def _quiet_lost_interrupts() -> None:
    """Leave out of stderr the ``Exception ignored in ...`` traceback of a KeyboardInterrupt that
    a SIGTERM, SIGHUP or Ctrl-C raised where Python cannot let it propagate (a weakref callback of
    the import system, a ``__del__``): the stop itself is not lost, the sandbox and the progress
    callback raise it again (:func:`dpaudit.execution.sandbox.stop_received`), and dpaudit ends
    with its one line ``dpaudit: interrupted``. Any other unraisable exception is reported as
    before."""
    previous = sys.unraisablehook

    def hook(unraisable) -> None:  # noqa: ANN001 - sys.UnraisableHookArgs
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            from dpaudit.execution.sandbox import stop_received

            if stop_received() is not None:
                return
        previous(unraisable)

    sys.unraisablehook = hook


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point: the only place that exits."""
    started = _process_started()
    _quiet_lost_interrupts()
    code = run(argv, started)
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):  # the reader has gone: the reports are written anyway
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        except OSError:  # pragma: no cover
            pass
    raise SystemExit(int(code))


if __name__ == "__main__":  # pragma: no cover
    main()
