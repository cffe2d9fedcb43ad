"""Library primitives recorded without edits: diffprivlib's mechanisms.

While a replay run is under way, :func:`intercepting` replaces ``randomise`` on every diffprivlib
mechanism class (``diffprivlib.mechanisms``: ``Laplace``, ``LaplaceTruncated``, ``Gaussian``,
``Geometric``, ...) by a wrapper that records the call as a declared primitive: its input
``value``, the mechanism's own ``sensitivity``, ``epsilon`` and ``delta``, its bounds, and the
call site in the code that called the library (``diffprivlib.tools.mean(...)`` in the audited
code, not diffprivlib's own line; when that code is dpaudit's own adapter, as for ``dpaudit check
'lib:diffprivlib:…'``, which has no code of the user's, the line of diffprivlib that called the
mechanism, e.g. ``diffprivlib/tools/utils.py``). On the replay run the wrapper returns the record's output
without calling the mechanism (the mechanism's output frozen, as in Re:cord-play), so a
diffprivlib model or tool is audited with no change to the code that uses it. A mechanism that
calls another's ``randomise`` (``LaplaceTruncated`` calls ``Laplace``'s) is one call: only the
outermost is recorded.

diffprivlib is optional: nothing happens when it is not installed, and it is patched only when it
was already imported (the audited code imports it; importing it here would cost every audit the
import of scikit-learn). The original methods are restored when the block ends, whatever happens.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from dpaudit.replay.session import current
from dpaudit.replay.sites import call_site, folder_of
from dpaudit.replay.tracked import track_output

__all__ = ["intercepting", "LIBRARIES"]

#: the libraries whose primitives are recorded when they are imported
LIBRARIES = ("diffprivlib",)


def _mechanism_classes(base: type) -> list[type]:
    seen: list[type] = []
    todo = [base]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen


def _kind(cls: type, mechanisms: Any) -> tuple[str | None, str]:
    """(distribution, norm) of a diffprivlib mechanism class for the accounting."""
    laplace = tuple(getattr(mechanisms, n) for n in ("Laplace", "Geometric") if hasattr(mechanisms, n))
    gaussian = tuple(getattr(mechanisms, n) for n in ("Gaussian",) if hasattr(mechanisms, n))
    if laplace and issubclass(cls, laplace):
        return "laplace", "l1"
    if gaussian and issubclass(cls, gaussian):
        return "gaussian", "l2"
    return None, "l1"


def _number(x: Any) -> Any:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v


#: dpaudit's library adapters: code that calls a library on the user's behalf, not the user's code
_ADAPTERS = folder_of(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   "adapters", "common.py")) or ""


def _site(folder: str, mechanisms_folder: str) -> Any:
    """The call site of a mechanism call: the first frame outside diffprivlib (the audited code),
    or, when that frame is dpaudit's adapter (a ``lib:diffprivlib:`` target, no user code), the
    library's own line that called the mechanism (outside ``diffprivlib/mechanisms/``)."""
    site = call_site(skip=(folder,), depth=2)
    if _ADAPTERS and mechanisms_folder and site.path.startswith(_ADAPTERS):
        inner = call_site(skip=(mechanisms_folder,), depth=2)
        if not inner.path.startswith(_ADAPTERS):
            return inner
    return site


def _wrapper(original: Any, mechanisms: Any, folder: str, called: list) -> Any:
    mechanisms_folder = folder_of(getattr(mechanisms, "__file__", None)) or ""

    def randomise(self: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        run = current()
        if run is None or run.depth > 0:
            return original(self, value, *args, **kwargs)
        if "diffprivlib" not in called:
            called.append("diffprivlib")  # the record names the libraries whose calls it saw
        cls = type(self)
        distribution, norm = _kind(cls, mechanisms)
        sensitivity = _number(getattr(self, "sensitivity", None))
        epsilon = _number(getattr(self, "epsilon", None))
        delta = _number(getattr(self, "delta", 0.0)) or 0.0
        params = {"mechanism": cls.__name__, "epsilon": epsilon, "delta": delta,
                  "sensitivity": sensitivity}
        for name in ("lower", "upper", "bounds"):
            if hasattr(self, name):
                v = getattr(self, name)
                params[name] = v if isinstance(v, (int, float, type(None))) else repr(v)
        declared = {"sensitivity": sensitivity, "epsilon": epsilon, "delta": delta, "norm": norm}
        out = run.primitive_call(
            source="diffprivlib", method=cls.__name__, site=_site(folder, mechanisms_folder), value=value,
            declared=declared, params=params, distribution=distribution,
            call=lambda: original(self, value, *args, **kwargs))
        return track_output(run, out)

    randomise.__wrapped__ = original  # type: ignore[attr-defined]
    randomise.__doc__ = original.__doc__
    return randomise


@contextmanager
def intercepting() -> Iterator[list[str]]:
    """Record diffprivlib's ``randomise`` calls for the duration of the block (module
    docstring). Yields the names of the libraries whose intercepted mechanisms the audited code
    called (filled as the calls come; empty when none was): what the process happened to import,
    but the mechanism never used, is not named, so a record does not depend on it."""
    patched: list[tuple[type, Any]] = []
    names: list[str] = []
    if "diffprivlib" in sys.modules:
        try:
            import diffprivlib.mechanisms as mechanisms
            from diffprivlib.mechanisms.base import DPMechanism
        except Exception:  # noqa: BLE001 - a broken optional library is simply not patched
            mechanisms = None
        if mechanisms is not None:
            folder = folder_of(sys.modules["diffprivlib"].__file__) or ""
            for cls in _mechanism_classes(DPMechanism):
                original = cls.__dict__.get("randomise")
                if original is None or getattr(original, "__wrapped__", None) is not None:
                    continue
                patched.append((cls, original))
                setattr(cls, "randomise", _wrapper(original, mechanisms, folder, names))
    try:
        yield names
    finally:
        for cls, original in reversed(patched):
            setattr(cls, "randomise", original)


def as_float_array(x: Any) -> Any:
    """``x`` as a float array when it is numeric, else None (a category, a string)."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None
    return a
