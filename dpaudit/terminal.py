"""The terminal's stdout for the commands: output that cannot fail once its reader has gone.

:func:`guard_stdout` replaces ``sys.stdout`` with a stream that drops what it cannot write (a
closed pipe, ``| head``, ``>&-``) instead of raising, so ``dpaudit check`` still writes its reports.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["guard_stdout"]


class _GuardedStream:
    """stdout that cannot fail: once the reader has gone (a closed pipe, ``| head``, ``>&-``),
    further output is dropped instead of raising, so the reports are still written."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is not None:
            try:
                try:
                    return self._stream.write(text)
                except UnicodeEncodeError:  # text the terminal cannot encode: escaped, not lost
                    enc = getattr(self._stream, "encoding", None) or "utf-8"
                    return self._stream.write(text.encode(enc, "backslashreplace").decode(enc))
            except (OSError, ValueError):
                self._gone()
        return len(text)

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._gone()

    def _gone(self) -> None:
        self._stream = None
        try:  # the interpreter's final flush of the real stdout must not fail either
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
        except OSError:  # pragma: no cover
            pass

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Make ``sys.stdout`` a :class:`_GuardedStream` (also when it is closed or None)."""
    if not isinstance(sys.stdout, _GuardedStream):
        sys.stdout = _GuardedStream(_open_or_none(sys.stdout))


def _open_or_none(stream: Any) -> Any:
    """``stream`` when it can be written to, None when it is missing or closed. An in-memory
    stream (no file descriptor: a test's captured stdout) is kept."""
    import io

    if stream is None or getattr(stream, "closed", False):
        return None
    try:
        fd = stream.fileno()
    except (AttributeError, io.UnsupportedOperation):
        return stream
    except (OSError, ValueError):
        return None
    try:
        os.fstat(fd)
    except OSError:
        return None
    return stream
