"""The framing of the replies a sandboxed child sends back, read by :mod:`dpaudit.execution.sandbox`.

A reply is one message of :class:`multiprocessing.connection.Connection`'s framing, read piece by
piece (:class:`Frame`) and refused before it is read when its length passes :func:`reply_limit`;
a reply of the wrong shape (the audited code wrote its own to dpaudit's pipe) is named by
:func:`malformed` and raised as :class:`ForgedReply`, and :func:`error_reply` says whether a reply
is a well-formed error. A text from the child is cut to :data:`MAX_CAUSE` characters
(:func:`child_text`) before it names anything, and a place in the audited code it names is taken
only at a line of the file dpaudit read itself (:class:`AuditedFile`).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any, Optional

from dpaudit.errors import MechanismError
from dpaudit.execution.process import printable

__all__ = ["MAX_REPLY_BYTES", "MAX_CAUSE", "reply_limit", "Frame", "describe_reply", "malformed",
           "error_reply", "child_text", "ForgedReply", "AuditedFile", "UNKNOWN_SITE"]

#: the most characters of a text from the child (a failure's cause, an exception's message) kept:
#: the child's own are a line, and a forged one of megabytes once filled the record and the terminal
MAX_CAUSE = 2000

#: the largest reply dpaudit reads: four times what dpaudit asks a batch to hold (a batch is sized
#: to 32 MiB of encoded outputs, dpaudit.auditing.sampler.BATCH_BYTES), room for raw outputs a
#: little larger than their encoding and texts up to the batch's total
MAX_REPLY_BYTES = 4 * (32 << 20)


def reply_limit(memory: Optional[int]) -> int:
    """The largest reply read from a child capped at ``memory`` bytes: :data:`MAX_REPLY_BYTES`,
    and at most a quarter of the cap (the child built the reply within it; dpaudit's process holds
    the reply and what it decodes to, a few times its size, so a child's cap bounds what it can
    make dpaudit's process hold)."""
    return MAX_REPLY_BYTES if memory is None else min(MAX_REPLY_BYTES, memory // 4)


class Frame:
    """One message of :class:`multiprocessing.connection.Connection`'s framing (a 4-byte
    big-endian signed length, −1 then an 8-byte length for large ones, then the bytes), assembled
    from pieces read as they arrive; a length beyond ``limit`` is refused before anything of it is
    read."""

    __slots__ = ("buf", "size", "done", "limit")

    def __init__(self, limit: int = MAX_REPLY_BYTES) -> None:
        self.buf = bytearray()
        self.size: Optional[int] = None
        self.done = False
        self.limit = limit

    def wanted(self) -> int:
        if self.size is None:
            return 4 if len(self.buf) < 4 else 12 - len(self.buf)
        return max(1, min(1 << 20, self.size - len(self.buf)))

    def feed(self, chunk: bytes) -> bool:
        self.buf += chunk
        if self.size is None:
            if len(self.buf) < 4:
                return False
            (n,) = struct.unpack("!i", self.buf[:4])
            head = 4
            if n == -1:
                if len(self.buf) < 12:
                    return False
                (n,) = struct.unpack("!Q", self.buf[4:12])
                head = 12
            if n < 0:
                raise ValueError(f"a message of {n:,} bytes")
            if n > self.limit:
                raise TooLarge(n, self.limit)
            self.size = n
            del self.buf[:head]
        self.done = len(self.buf) >= self.size
        return self.done

    def body(self) -> bytes:
        return bytes(self.buf[: self.size])


def describe_reply(reply: tuple) -> str:
    """A forged reply in a few words: its kind and the types of its parts."""
    parts = ", ".join(type(x).__name__ for x in reply[1:6])
    return f"({reply[0][:40]!r}{', ' + parts if parts else ''}{', ...' if len(reply) > 6 else ''})"


def malformed(reply: tuple, wanted: str = "") -> str:
    """The cause for a reply of the wrong shape (the audited code wrote its own to the pipe)."""
    return printable(f"sent back a malformed reply {describe_reply(reply)}"
                     f"{' instead of ' + wanted if wanted else ''} (the audited code wrote to "
                     f"dpaudit's pipe)")


def error_reply(reply: tuple, batches: int) -> bool:
    """Whether ``reply`` is ``("error", cause, show_tail, index)`` naming one of ``batches``."""
    return (len(reply) == 4 and isinstance(reply[1], str) and isinstance(reply[2], bool)
            and type(reply[3]) is int and 0 <= reply[3] < batches)


def child_text(text: Any, limit: int = MAX_CAUSE) -> str:
    """A text the child sent, cut to ``limit`` characters before it is made printable."""
    text = text if isinstance(text, str) else str(type(text).__name__)
    return printable(text[:limit] + ("…" if len(text) > limit else ""))


class TooLarge(ValueError):
    """A reply longer than a frame may be: outputs too large to read (or a hostile length)."""

    def __init__(self, size: int, limit: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(f"a message of {size:,} bytes, more than the {limit:,} dpaudit reads")


class ForgedReply(MechanismError):
    """A reply no honest child sends: of the wrong shape or size, naming a refused class, or a
    record dpaudit refused. The audited code wrote to dpaudit's pipe or replaced dpaudit's
    functions in the child, so it is the mechanism's ERROR wherever it arrives, never a note."""


#: a call site the child could not place (every frame was numpy's or dpaudit's)
UNKNOWN_SITE = {"path": "<unknown>", "line": 0, "function": "<unknown>", "code": ""}


class AuditedFile:
    """The audited file as dpaudit's process read it before the child ran: the path the child
    imports it by (resolved, as :func:`dpaudit.loader.import_file` compiles it) and its lines. A
    place the child names (a replay finding's call site, the function's first line) is taken only
    when it is this path at a line this file has, with the code of that line read here: the child
    once named any file and line, and SARIF and JUnit put a code-scanning alert there."""

    __slots__ = ("path", "lines")

    def __init__(self, path: str, source: bytes) -> None:
        self.path = path
        self.lines = source.decode("utf-8", "replace").splitlines()

    @classmethod
    def read(cls, path: str) -> Optional["AuditedFile"]:
        """The file at ``path`` (as the user named it), or None when it cannot be read."""
        try:
            resolved = Path(path).expanduser().resolve()
            return cls(str(resolved), resolved.read_bytes())
        except (OSError, ValueError):
            return None

    def line_of(self, path: Any, line: Any) -> Optional[int]:
        """``line`` when ``path`` is this file and it has that line, else None."""
        if path != self.path or type(line) is not int or not 1 <= line <= len(self.lines):
            return None
        return line

    def site(self, x: Any) -> dict:
        """The call site ``x`` the child sent, as dpaudit reads it: this file, the line, the
        function's name as a short text and the line's code from this file. ValueError when it
        is not at a line of this file (or the child's "unknown")."""
        if not isinstance(x, dict):
            raise ValueError("a call site that is not a table")
        path, line = x.get("path"), x.get("line")
        if path == UNKNOWN_SITE["path"] and line == 0 and type(line) is int:
            return dict(UNKNOWN_SITE)
        if self.line_of(path, line) is None:
            shown = child_text(path, 200) if isinstance(path, str) else type(path).__name__
            where = "a line it does not have" if path == self.path else "outside it"
            shown_line = line if type(line) is int and abs(line) < 10 ** 12 else "?"
            raise ValueError(f"a call site {shown}:{shown_line}, {where} (the audited "
                             f"file is {os.path.basename(self.path)}, {len(self.lines)} lines)")
        name = x.get("function")
        return {"path": self.path, "line": line,
                "function": child_text(name, 200) if isinstance(name, str) else "",
                "code": printable(self.lines[line - 1].strip()[:500])}
