"""Numeric batch outputs passed from the sandbox child to dpaudit through shared memory, uncopied.

A batch-form mechanism returns one numpy array per batch (50,000 draws are 400 kB). Pickling it
through the pipe, or copying it out of a shared file, costs about as much as drawing it. Instead
the child copies the array once into a shared file (a *buffer*, under ``/dev/shm`` where there is
one) and the parent hands out an array that *is* the parent's mapping of that file: no copy, no
fresh pages.

The buffers live in the sandbox's private folder (under ``/dev/shm`` where there is one), which
the sandbox removes when it closes.

A buffer is reused only when no array the parent handed out still refers to it: numpy views of a
``frombuffer`` array keep a reference to the ``mmap`` itself, so the mapping's reference count
says exactly whether anything still uses it (CPython's reference counting frees the arrays the
auditor is done with at once). At most :data:`MAX_BUFFERS` buffers exist; past that, or on an
interpreter without ``sys.getrefcount``, the output travels pickled through the pipe instead.

Files are unlinked as soon as the child has opened them, so nothing is left behind if dpaudit is
killed. Arrays handed out stay valid after the child is gone (the mapping lives as long as they do).
"""

from __future__ import annotations

import mmap
import os
import sys
import tempfile
from typing import Any, Optional

import numpy as np

__all__ = ["OutputPool", "BufferWriter", "MAX_BUFFERS"]

#: Buffers one sandbox keeps at most (each holds a file descriptor while it is in use).
MAX_BUFFERS = 32
_MIN_SIZE = 1 << 20


class _Buffer:
    __slots__ = ("ident", "fd", "path", "mm", "base_refs", "in_flight")

    def __init__(self, ident: int, fd: int, path: str) -> None:
        self.ident, self.fd, self.path = ident, fd, path
        self.mm: Optional[mmap.mmap] = None
        self.base_refs = 0
        self.in_flight = False

    def free(self) -> bool:
        return not self.in_flight and (self.mm is None or sys.getrefcount(self.mm) <= self.base_refs)


class OutputPool:
    """The parent's side: lends buffers to batches in flight and turns a filled buffer into an
    array (:meth:`take`)."""

    def __init__(self, folder: Optional[str] = None) -> None:
        self._buffers: list[_Buffer] = []
        self._shm = folder or ("/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
        self._usable = hasattr(sys, "getrefcount")

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
        """The array the child wrote into buffer ``ident`` (a view of the shared mapping)."""
        buf = self._buffers[ident]
        dt = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        if buf.mm is None or len(buf.mm) < dt.itemsize * count:
            if buf.mm is not None:
                buf.mm.close()  # free (not referenced), so it has no exported views
            buf.mm = mmap.mmap(buf.fd, os.fstat(buf.fd).st_size)
            buf.base_refs = sys.getrefcount(buf.mm)
        return np.frombuffer(buf.mm, dtype=dt, count=count).reshape(shape)

    def close(self) -> None:
        """Forget every buffer (arrays handed out keep their own mapping alive)."""
        for buf in self._buffers:
            self._unlink(buf)
            os.close(buf.fd)
        self._buffers = []

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
