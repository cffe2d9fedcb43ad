"""Process exit codes, and the exit code of a set of records.

The one place that knows what each code means (docs/cli.md, "Exit codes", documents them, and
``dpaudit --help`` lists them: :func:`epilog`). Every
command (``check``, ``audit``, ``verify``, ``report``, ``list``) returns an :class:`ExitCode`;
only :func:`dpaudit.cli.main` exits (commands return codes, only ``main`` exits, as pytest's ``ExitCode``).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Iterable, Mapping

__all__ = ["ExitCode", "exit_code", "suite_exit_code", "epilog"]


class ExitCode(IntEnum):
    """Process exit codes (documented in docs/cli.md, "Exit codes").

    A usage error (3: our inputs) and an error of the audited code (6: the mechanism raised, hung,
    crashed or returned bad output, an ERROR verdict) are told apart, so CI can say "fix the
    command" or "fix the mechanism"."""

    OK = 0                 #: no claim refuted
    REFUTED = 1            #: at least one claim refuted
    INCONCLUSIVE = 2       #: only inconclusive results, with --fail-on-inconclusive
    USAGE_ERROR = 3        #: bad flags, an unloadable file, or a report that could not be written
    INTERNAL_ERROR = 4     #: a bug in dpaudit
    NOTHING_TO_AUDIT = 5   #: no audit or claim matched (a file with no mechanism is a load error, 3)
    MECHANISM_ERROR = 6    #: the audited code failed: an ERROR verdict (raised, hung, crashed, bad output)
    INTERRUPTED = 7        #: the run was stopped (Ctrl-C, SIGTERM, SIGHUP): an INTERRUPTED verdict

    @property
    def description(self) -> str:
        return _MEANING[self]


_MEANING = {
    ExitCode.OK: "no claim refuted",
    ExitCode.REFUTED: "at least one claim refuted",
    ExitCode.INCONCLUSIVE: "a result is inconclusive (with --fail-on-inconclusive)",
    ExitCode.USAGE_ERROR: "usage or load error (a bad flag, a file that cannot be loaded or holds no "
                          "mechanism), or a report that could not be written",
    ExitCode.INTERNAL_ERROR: "internal error in dpaudit",
    ExitCode.NOTHING_TO_AUDIT: "nothing to audit: no audit or claim matched (--id, --claim)",
    ExitCode.MECHANISM_ERROR: "error in the audited code: a mechanism raised, hung, crashed or "
                              "returned bad output (an ERROR verdict)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C, SIGTERM): every report is written, the target under "
                          "way with its claim, the stages it finished and verdict INTERRUPTED",
}


def epilog() -> str:
    """The exit codes as ``dpaudit --help`` lists them, one per line."""
    return "exit codes:\n" + "\n".join(f"  {int(c)}  {c.description}" for c in ExitCode)


def exit_code(records: Iterable[Mapping[str, Any]], *, exit_zero: bool = False,
              fail_on_inconclusive: bool = False) -> ExitCode:
    """The exit code of the worst verdict (docs/cli.md, "Exit codes"): interrupted 7 (the run
    was stopped), error 6 (the audited code failed), refuted 1 (0 with --exit-zero),
    inconclusive 2 only with --fail-on-inconclusive, else 0; no records at all is 5. (A usage or
    load error never reaches here: it is 3.)"""
    records = list(records)
    verdicts = {r.get("verdict") for r in records}
    if not records:
        return ExitCode.NOTHING_TO_AUDIT
    if "interrupted" in verdicts:
        return ExitCode.INTERRUPTED
    if "error" in verdicts:
        return ExitCode.MECHANISM_ERROR
    if "refuted" in verdicts:
        return ExitCode.OK if exit_zero else ExitCode.REFUTED
    if "inconclusive" in verdicts and fail_on_inconclusive:
        return ExitCode.INCONCLUSIVE
    return ExitCode.OK


def suite_exit_code(records: Iterable[Mapping[str, Any]], *, exit_zero: bool = False,
                    fail_on_inconclusive: bool = False) -> ExitCode:
    """The exit code of an audit suite, where each record carries its ``expected`` verdict:
    1 when any verdict differs from the expected one (0 with --exit-zero), else 2 when a result
    is inconclusive and --fail-on-inconclusive was given, else 0; no records at all is 5."""
    records = list(records)
    if not records:
        return ExitCode.NOTHING_TO_AUDIT
    if any(r.get("verdict") != r.get("expected") for r in records) and not exit_zero:
        return ExitCode.REFUTED
    if fail_on_inconclusive and any(r.get("verdict") == "inconclusive" for r in records):
        return ExitCode.INCONCLUSIVE
    return ExitCode.OK
