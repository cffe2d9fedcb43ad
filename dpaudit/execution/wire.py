"""The framing of the replies a sandboxed child sends back, read by :mod:`dpaudit.execution.sandbox`.

A reply is one message of :class:`multiprocessing.connection.Connection`'s framing, read piece by
piece (:class:`Frame`) and refused before it is read when its length passes :func:`reply_limit`;
a reply of the wrong shape (the audited code wrote its own to dpaudit's pipe) is named by
:func:`malformed`, and :func:`error_reply` says whether a reply is a well-formed error.
"""

from __future__ import annotations

import struct
from typing import Optional

from dpaudit.execution.process import printable

__all__ = ["MAX_REPLY_BYTES", "reply_limit", "Frame", "describe_reply", "malformed", "error_reply"]

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
            if n < 0 or n > self.limit:
                raise ValueError(f"a message of {n:,} bytes, more than the {self.limit:,} "
                                 f"dpaudit reads")
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
