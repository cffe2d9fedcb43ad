"""Process exit codes, and the exit code of a set of records.

The one place that knows what each code means (README.md, "Exit codes", documents them). Every
command (``check``, ``audit``, ``verify``, ``report``, ``list``) returns an :class:`ExitCode`;
only :func:`dpaudit.cli.main` exits (commands return codes, only ``main`` exits, as pytest's ``ExitCode``).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Iterable, Mapping

__all__ = ["ExitCode", "exit_code", "suite_exit_code"]


class ExitCode(IntEnum):
    """Process exit codes (documented in README.md, "Exit codes")."""

    OK = 0                 #: no claim refuted
    REFUTED = 1            #: at least one claim refuted
    INCONCLUSIVE = 2       #: only inconclusive results, with --fail-on-inconclusive
    USAGE_ERROR = 3        #: bad flags, unloadable file, a report not written, or the only target errored
    INTERNAL_ERROR = 4     #: a bug in dpaudit
    NOTHING_TO_AUDIT = 5   #: no mechanism, audit or claim matched

    @property
    def description(self) -> str:
        return _MEANING[self]


_MEANING = {
    ExitCode.OK: "no claim refuted",
    ExitCode.REFUTED: "at least one claim refuted",
    ExitCode.INCONCLUSIVE: "a result is inconclusive (with --fail-on-inconclusive)",
    ExitCode.USAGE_ERROR: "usage or load error, a report that could not be written, or the only "
                          "target errored",
    ExitCode.INTERNAL_ERROR: "internal error in dpaudit",
    ExitCode.NOTHING_TO_AUDIT: "nothing to audit",
}


def exit_code(records: Iterable[Mapping[str, Any]], *, exit_zero: bool = False,
              fail_on_inconclusive: bool = False) -> ExitCode:
    """The exit code of the worst verdict (README.md, "Exit codes"): error 3, refuted 1 (0 with --exit-zero),
    inconclusive 2 only with --fail-on-inconclusive, else 0; no records at all is 5."""
    records = list(records)
    verdicts = {r.get("verdict") for r in records}
    if not records:
        return ExitCode.NOTHING_TO_AUDIT
    if "error" in verdicts:
        return ExitCode.USAGE_ERROR
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
