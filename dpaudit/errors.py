"""The exception hierarchy of dpaudit.

One root, :class:`DpauditError`. Errors in *our* inputs (bad arguments, files that do not load)
are kept apart from failures of the *audited* code (:class:`MechanismError`), which are never
dpaudit's bug and are reported as an ERROR verdict for that mechanism (user code failing is not dpaudit's bug).
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = [
    "DpauditError",
    "InvalidArgument",
    "UsageError",
    "LoadError",
    "MechanismError",
    "OutputChanged",
    "TimeLimitReached",
    "NothingMatched",
]


class DpauditError(Exception):
    """Root of every error dpaudit raises on purpose."""


class InvalidArgument(DpauditError, ValueError):
    """An argument has an invalid value. The message names it, shows it and says what is allowed."""

    @classmethod
    def bad(cls, name: str, value: Any, requirement: str) -> "InvalidArgument":
        """``InvalidArgument.bad("epsilon", -1.0, "a finite number > 0")`` ->
        ``epsilon must be a finite number > 0, got -1.0``."""
        return cls(f"{name} must be {requirement}, got {value!r}")


class UsageError(DpauditError):
    """The command line or the declaration is incomplete or contradictory (exit code 3)."""


class NothingMatched(UsageError):
    """No audit or claim matched what was asked (``dpaudit audit --id``, ``dpaudit verify
    --claim``): exit code 5, "nothing to audit", as the exit-code table says."""


class LoadError(DpauditError):
    """A mechanism file could not be found, parsed or imported, or holds no mechanism (exit code 3)."""


class MechanismError(DpauditError):
    """The audited mechanism misbehaved: it raised, hung, crashed, or returned a bad output.

    ``cause`` is a one-line description (``"raised ZeroDivisionError: division by zero"``,
    ``"returned nan"``); ``dataset`` is the input that triggered it, when known.
    """

    def __init__(self, cause: str, dataset: Any = None, output: Any = None) -> None:
        self.cause = cause
        self.dataset = dataset
        self.output = output
        where = "" if dataset is None else f" on dataset {_short(dataset)}"
        super().__init__(f"mechanism {cause}{where}")


def _short(x: Any, limit: int = 120) -> str:
    try:
        import numpy as np

        if isinstance(x, np.ndarray):
            x = x.tolist()
    except Exception:  # pragma: no cover - numpy is a hard dependency
        pass
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class OutputChanged(MechanismError):
    """The mechanism returned an output of another kind or length than the kind its first outputs
    fixed for the encoder (None after numbers, a vector of another length). An audit that fixed
    the kind from a few outputs (the betting look's first draws) may meet what a larger first
    batch would have seen: it leaves the question to the looks after it, which fix their own."""


class TimeLimitReached(MechanismError):
    """The run's total time limit (``--timeout``) was reached while the mechanism ran: a limit the
    user set, not a fault of the mechanism. An audit it cuts short keeps what it had validated, and
    is INCONCLUSIVE when that is nothing (:func:`dpaudit.audit`). ``stalled``: what the sandbox
    saw of the call in flight when it looks stuck (it may never return), else None."""

    stalled: Optional[str] = None
