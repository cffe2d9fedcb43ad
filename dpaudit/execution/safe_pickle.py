"""Reading what the sandbox child sends back, without running anything it chose.

``pickle.loads`` calls whatever callable a pickle names (``os.system`` included), so a mechanism
that writes its own bytes to the pipe, or returns an object whose ``__reduce__`` names such a
callable, would run code in dpaudit's own process, outside every limit of the sandbox. The parent
therefore reads the child's replies with :func:`loads`, an unpickler whose ``find_class`` allows
only the classes an output may hold (Python docs, ``pickle``, "Restricting Globals"): numpy arrays,
scalars and dtypes (numpy itself refuses object arrays built from raw bytes), ``complex``,
``Decimal``, ``Fraction``, the ``datetime`` types, ``OrderedDict`` and dpaudit's
:class:`~dpaudit.execution.remote.Opaque`. Built-in containers, numbers, texts and bytes need no
class. Anything else is refused with the name it asked for (:class:`RefusedGlobal`).

The child converts the outputs it can into those forms before sending them
(:func:`dpaudit.execution.remote.portable_outputs`).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

__all__ = ["loads", "RefusedGlobal", "ALLOWED"]

#: (module, name) of every class or function a reply may name
ALLOWED = frozenset({
    ("builtins", "complex"), ("builtins", "set"), ("builtins", "frozenset"),
    ("builtins", "bytearray"), ("builtins", "slice"), ("builtins", "range"),
    ("collections", "OrderedDict"),
    ("decimal", "Decimal"), ("fractions", "Fraction"),
    ("datetime", "datetime"), ("datetime", "date"), ("datetime", "time"),
    ("datetime", "timedelta"), ("datetime", "timezone"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
    ("numpy.ma", "MaskedArray"), ("numpy.ma.core", "MaskedArray"),
    ("numpy.ma.core", "_mareconstruct"),
    ("dpaudit.execution.remote", "Opaque"),
})


class RefusedGlobal(pickle.UnpicklingError):
    """A reply named a class or function outside :data:`ALLOWED`."""

    def __init__(self, module: str, name: str) -> None:
        super().__init__(f"{module}.{name}")
        self.module, self.name = module, name


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in ALLOWED or (module in ("numpy.dtypes",) and name.endswith("DType")):
            return super().find_class(module, name)
        raise RefusedGlobal(module, name)


def loads(payload: bytes) -> Any:
    """``pickle.loads`` restricted to :data:`ALLOWED` (module docstring)."""
    return _Restricted(io.BytesIO(payload)).load()
