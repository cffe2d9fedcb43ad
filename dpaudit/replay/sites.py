"""Call sites: the ``file:line`` of the audited code that made a noise call.

A noise draw happens deep inside numpy (or inside a library such as diffprivlib), but the line a
reader needs is the one in *their* code that asked for it. :func:`call_site` walks the stack
outward from the caller and returns the first frame that is not numpy's, not this package's and
not in any folder the caller names as a library (``skip``): the frame the audited code is in.
Only frames are read (``sys._getframe``); nothing is executed.

In the sandbox child the replay names only lines of the audited file (:func:`only_in`): a noise
call made in a helper module is placed at the audited file's line that called into it, since
dpaudit's process takes a site only at a line of the file it read itself
(:class:`dpaudit.execution.wire.AuditedFile`); a call with no frame in that file is
:data:`UNKNOWN`.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import sys
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

import numpy as np

__all__ = ["Site", "call_site", "folder_of", "only_in", "UNKNOWN"]


def folder_of(module_file: Optional[str]) -> Optional[str]:
    """The folder holding a module file (with a trailing separator), or None."""
    if not module_file:
        return None
    return os.path.dirname(os.path.abspath(module_file)) + os.sep


#: frames in these folders are never the audited code's: numpy (where the draw happens) and this
#: package (the recording generator, the tracked values, the primitives)
_NUMPY = folder_of(np.__file__)
_HERE = folder_of(__file__)
_ALWAYS = tuple(p for p in (_NUMPY, _HERE) if p)


@dataclass(frozen=True, slots=True)
class Site:
    """Where the audited code made a call: ``path``, ``line``, the enclosing ``function`` and the
    source ``code`` of that line (stripped; ``""`` when the source is not available)."""

    path: str
    line: int
    function: str
    code: str = ""

    @property
    def key(self) -> tuple[str, int]:
        """What identifies a call site when two runs are compared: the file and the line."""
        return (self.path, self.line)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    def short(self) -> str:
        """``name.py:line`` (the file's base name), for one-line messages."""
        return f"{os.path.basename(self.path)}:{self.line}"

    def to_record(self) -> dict:
        return {"path": self.path, "line": self.line, "function": self.function, "code": self.code}


UNKNOWN = Site("<unknown>", 0, "<unknown>", "")


#: the file every call site must lie in, while :func:`only_in` holds (None: any file)
_ONLY: Optional[str] = None


@contextlib.contextmanager
def only_in(path: Optional[str]) -> Iterator[None]:
    """Within the block, :func:`call_site` names only frames of the file ``path`` (None: any)."""
    global _ONLY
    before, _ONLY = _ONLY, path
    try:
        yield
    finally:
        _ONLY = before


def call_site(skip: Iterable[str] = (), depth: int = 1) -> Site:
    """The first frame outward from the caller (``depth`` frames up) whose file lies in none of
    numpy's folder, this package's folder and the folders in ``skip`` (and, within
    :func:`only_in`, is that file); :data:`UNKNOWN` if every frame does."""
    prefixes = _ALWAYS + tuple(p for p in skip if p)
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return UNKNOWN
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(prefixes) and not path.startswith("<frozen") \
                and (_ONLY is None or path == _ONLY):
            line = frame.f_lineno
            code = linecache.getline(path, line).strip()
            return Site(path, line, frame.f_code.co_name, code)
        frame = frame.f_back
    return UNKNOWN
