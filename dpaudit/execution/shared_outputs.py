"""Numeric batch outputs passed from the sandbox child to dpaudit through a shared file.

A batch-form mechanism returns one numpy array per batch (50,000 draws are 400 kB). Pickling it
through the pipe costs about as much as drawing it. Instead the child copies the array once into a
shared file (a *buffer*, under ``/dev/shm`` where there is one) and the parent reads it into an
array of its own with ``pread`` (:meth:`OutputPool.take`).

The parent never maps a buffer. It once handed out arrays that *were* its mapping of the file (no
copy), but the child holds the file open and runs the audited code: a mechanism that shrank the
file made the parent's next touch of a page past the end a SIGBUS, which killed dpaudit with no
report and left the sandbox's processes behind, and one could rewrite outputs the parent had
already taken. A copy of 400 kB is a few tens of microseconds.

The buffers live in the sandbox's private folder (under ``/dev/shm`` where there is one), which
the sandbox removes when it closes. A buffer is free again as soon as its batch has been read; at
most :data:`MAX_BUFFERS` exist (past that the output travels pickled through the pipe).

Files are unlinked as soon as the child has opened them, so nothing is left behind if dpaudit is
killed.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from typing import Any, Optional

import numpy as np

__all__ = ["OutputPool", "BufferWriter", "MAX_BUFFERS"]

#: Buffers one sandbox keeps at most (each holds a file descriptor while it is in use).
MAX_BUFFERS = 32
_MIN_SIZE = 1 << 20


class _Buffer:
    __slots__ = ("ident", "fd", "path", "in_flight")

    def __init__(self, ident: int, fd: int, path: str) -> None:
        self.ident, self.fd, self.path = ident, fd, path
        self.in_flight = False

    def free(self) -> bool:
        return not self.in_flight


class OutputPool:
    """The parent's side: lends buffers to batches in flight and turns a filled buffer into an
    array (:meth:`take`)."""

    def __init__(self, folder: Optional[str] = None) -> None:
        self._buffers: list[_Buffer] = []
        self._shm = folder or ("/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
        self._usable = True

    def lend(self) -> Optional[tuple[int, Optional[str]]]:
        """A free buffer for the next batch as ``(ident, path)`` (the path only the first time the
        child sees it), or None: send that batch's output through the pipe."""
        if not self._usable:
            return None
        for buf in self._buffers:
            if buf.free():
                buf.in_flight = True
                return buf.ident, None
        if len(self._buffers) >= MAX_BUFFERS:
            return None
        fd, path = tempfile.mkstemp(prefix="dpaudit-out-", dir=self._shm)
        buf = _Buffer(len(self._buffers), fd, path)
        buf.in_flight = True
        self._buffers.append(buf)
        return buf.ident, path

    def release(self, ident: int) -> None:
        """The batch that had buffer ``ident`` came back: the child has the file open (its name can
        go), and the buffer is free again unless :meth:`take` handed its contents out."""
        buf = self._buffers[ident]
        buf.in_flight = False
        self._unlink(buf)

    def take(self, ident: int, dtype: str, shape: tuple) -> np.ndarray:
        """A copy of the array the child wrote into buffer ``ident``, read with ``pread``: never a
        mapping of it. The child holds the file open and runs the audited code, which can shrink
        it (a mapped page past the end is SIGBUS, killing dpaudit with no report) or rewrite it
        after the parent has read it. Raises ValueError when the file holds less than ``shape``."""
        buf = self._buffers[ident]
        dt = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        need = dt.itemsize * count
        size = os.fstat(buf.fd).st_size
        if size < need:
            raise ValueError(f"{need} bytes of {dt.str} outputs announced, {size} in the buffer")
        out = np.empty(count, dtype=dt)
        raw, done = out.view(np.uint8), 0
        while done < need:
            got = os.preadv(buf.fd, [raw[done:]], done)
            if got <= 0:  # shrunk while being read
                raise ValueError(f"the buffer shrank to {done} of {need} bytes while being read")
            done += got
        return out.reshape(shape)

    def close(self) -> None:
        """Forget every buffer (arrays handed out keep their own mapping alive); a second call
        has nothing left to close."""
        buffers, self._buffers = self._buffers, []
        for buf in buffers:
            self._unlink(buf)
            os.close(buf.fd)

    @staticmethod
    def _unlink(buf: _Buffer) -> None:
        if buf.path is not None:
            try:
                os.unlink(buf.path)
            except OSError:  # pragma: no cover - already gone
                pass
            buf.path = None


class BufferWriter:
    """The child's side: copies a numeric ndarray into the buffer the parent lent (growing the file
    when it is too small); anything else is left to the pipe."""

    def __init__(self) -> None:
        self._fds: dict[int, int] = {}
        self._maps: dict[int, mmap.mmap] = {}

    def open(self, buffer: Optional[tuple[int, Optional[str]]]) -> None:
        """Open a newly lent buffer now, while its file still has a name."""
        if buffer is not None and buffer[1] is not None and buffer[0] not in self._fds:
            self._fds[buffer[0]] = os.open(buffer[1], os.O_RDWR)

    def put(self, out: Any, buffer: Optional[tuple[int, Optional[str]]]) -> tuple:
        """The reply for one batch's output ``out``."""
        if buffer is None or not (isinstance(out, np.ndarray) and out.dtype.kind in "biuf"
                                  and out.dtype.isnative and out.size):
            return ("ok", [out])
        ident = buffer[0]
        m = self._maps.get(ident)
        if m is None or len(m) < out.nbytes:
            size = max(out.nbytes, 2 * (len(m) if m is not None else 0), _MIN_SIZE)
            if m is not None:
                m.close()
            fd = self._fds[ident]
            if os.fstat(fd).st_size < size:
                os.ftruncate(fd, size)
            m = self._maps[ident] = mmap.mmap(fd, os.fstat(fd).st_size)
        np.frombuffer(m, dtype=out.dtype, count=out.size)[:] = out.reshape(-1)
        return ("ok_shared", out.dtype.str, out.shape)
