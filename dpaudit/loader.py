"""Load a mechanism from a third-party Python file, by path.

``dpaudit check FILE.py[:FUNCTION]`` names its target as a file and, optionally, a function in it
(``Class.method`` paths work too). Without FUNCTION the mechanism is found by convention, in this
order (docs/ARCHITECTURE.md#a-mechanism):

1. the one function defined in the file that is decorated with :func:`dpaudit.mechanism`;
2. else a function named ``mechanism``.

Every way this can go wrong is a :class:`~dpaudit.errors.LoadError` with one line that names the
file and says what to do: the file does not exist, does not parse (with the line), raises on import
(with the exception and the line in the file), holds no mechanism, or holds several decorated ones
and no FUNCTION was given (they are listed).

The file is imported under a private module name derived from its absolute path (so two files
called ``mechanism.py`` do not collide; the sandbox child sends values of classes from such a module
back only as plain values, :func:`dpaudit.execution.described.portable_outputs`, so dpaudit's
process never imports it); its folder is put on ``sys.path`` for the import so sibling modules
resolve as they would for ``python FILE.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from dpaudit.errors import LoadError
from dpaudit.spec import declaration_of
from dpaudit.spec import mechanism as dpaudit_decorator

__all__ = ["LoadedMechanism", "load_mechanism", "parse_target", "import_file"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True, slots=True)
class LoadedMechanism:
    """A mechanism found in a file: the absolute ``path``, the attribute path ``function`` in the
    module, the callable itself and how it was found (``"named"``, ``"decorated"``, ``"conventional"``)."""

    path: str
    function: str
    func: Callable
    found_by: str

    @property
    def target(self) -> str:
        """``FILE.py:FUNCTION`` as the user would type it (the path relative to the working folder
        when it lies below it)."""
        from dpaudit.report.model import relative_path

        return f"{relative_path(self.path)}:{self.function}"


def parse_target(target: str) -> tuple[str, Optional[str]]:
    """Split ``FILE.py[:FUNCTION]`` into the path and the function (None when absent).

    Only a suffix that is a Python attribute path counts as FUNCTION, so ``C:\\x.py`` and paths with
    colons in folder names still work.
    """
    if not isinstance(target, str) or not target.strip():
        raise LoadError("no target given: name a Python file, e.g. dpaudit check mech.py:my_function")
    head, sep, tail = target.rpartition(":")
    if sep and head and _IDENT.match(tail):
        return head, tail
    if sep and head and not tail:
        raise LoadError(f"{target}: empty FUNCTION after ':' (write FILE.py:FUNCTION)")
    return target, None


def module_name_for(path: str) -> str:
    """The private module name a file is imported under (stable for a given absolute path)."""
    stem = re.sub(r"\W", "_", Path(path).stem) or "module"
    digest = hashlib.sha1(path.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"_dpaudit_user_{stem}_{digest}"


def import_file(path: str) -> Any:
    """Import the Python file at ``path`` and return the module (cached by absolute path).

    Raises LoadError when it is missing, is not a file, does not parse, or raises while importing.
    """
    p = Path(path).expanduser()
    shown = str(path)
    if not p.exists():
        raise LoadError(f"{shown}: no such file")
    if not p.is_file():
        raise LoadError(f"{shown}: not a file (give a Python file, e.g. {shown}/mechanism.py)")
    abspath = str(p.resolve())
    name = module_name_for(abspath)
    cached = sys.modules.get(name)
    if cached is not None:
        return cached
    try:
        source = p.read_bytes()
    except OSError as exc:
        raise LoadError(f"{shown}: cannot read it: {exc.strerror or exc}") from None
    try:
        code = compile(source, abspath, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f":{exc.lineno}" if exc.lineno else ""
        raise LoadError(f"{shown}{where}: syntax error: {exc.msg}") from None
    except ValueError as exc:  # e.g. null bytes
        raise LoadError(f"{shown}: not Python source: {exc}") from None
    spec = importlib.util.spec_from_file_location(name, abspath)
    if spec is None:  # pragma: no cover - a readable file always has a spec
        raise LoadError(f"{shown}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(Path(abspath).parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except KeyboardInterrupt:
        sys.modules.pop(name, None)
        raise
    except BaseException as exc:  # SystemExit too: the file is broken, not dpaudit
        sys.modules.pop(name, None)
        raise LoadError(f"{shown}{_line_in(exc, abspath)}: importing it raised "
                        f"{_describe(exc)}") from None
    finally:
        if added:
            try:
                sys.path.remove(folder)
            except ValueError:  # pragma: no cover - the module removed it itself
                pass
    return module


def load_mechanism(target: str, function: Optional[str] = None) -> LoadedMechanism:
    """Import ``target`` (``FILE.py`` or ``FILE.py:FUNCTION``) and find its mechanism.

    ``function`` (or the ``:FUNCTION`` suffix) picks one by name; otherwise the single function
    decorated with ``@dpaudit.mechanism`` defined in the file, else a function named ``mechanism``.
    """
    path, named = parse_target(target)
    if function is not None:
        if named is not None and named != function:
            raise LoadError(f"{target}: two function names given ({named!r} and {function!r})")
        named = function
    module = import_file(path)
    abspath = str(Path(path).expanduser().resolve())
    if named is not None:
        func = _resolve(module, named, path)
        return LoadedMechanism(abspath, named, func, "named")
    defined_here = _functions(module)
    decorated = [k for k, v in defined_here if declaration_of(v) is not None]
    if not decorated:  # e.g. `from mylib import noisy_sum` in a small audit file
        decorated = [k for k, v in vars(module).items()
                     if callable(v) and not isinstance(v, type) and declaration_of(v) is not None]
    if len(decorated) == 1:
        return LoadedMechanism(abspath, decorated[0], getattr(module, decorated[0]), "decorated")
    if len(decorated) > 1:
        listed = ", ".join(decorated)
        raise LoadError(f"{path}: {len(decorated)} decorated mechanisms ({listed}): "
                        f"pick one with {path}:FUNCTION, e.g. {path}:{decorated[0]}")
    conventional = getattr(module, "mechanism", None)
    if callable(conventional) and conventional is not dpaudit_decorator:
        return LoadedMechanism(abspath, "mechanism", conventional, "conventional")
    functions = [k for k, _ in defined_here if not k.startswith("_")]
    hint = f" (functions in it: {', '.join(functions[:8])}{', ...' if len(functions) > 8 else ''})" \
        if functions else ""
    raise LoadError(f"{path}: no mechanism found: decorate a function with @dpaudit.mechanism, "
                    f"name it `mechanism`, or give {path}:FUNCTION{hint}")


def _resolve(module: Any, dotted: str, path: str) -> Callable:
    obj: Any = module
    for part in dotted.split("."):
        if not hasattr(obj, part):
            names = [k for k, _ in _functions(module) if not k.startswith("_")]
            hint = f" (functions in it: {', '.join(names[:8])})" if names else ""
            raise LoadError(f"{path}: no function named {dotted!r}{hint}")
        obj = getattr(obj, part)
    if not callable(obj):
        from dpaudit.spec import MechanismSpec

        if isinstance(obj, MechanismSpec):  # e.g. a library target: audited in Python or a suite
            raise LoadError(f"{path}: {dotted!r} is a {type(obj).__name__}, not a function: audit "
                            f"it with dpaudit.audit({dotted}) or an audit file (dpaudit audit FILE)")
        raise LoadError(f"{path}: {dotted!r} is a {type(obj).__name__}, not a function")
    return obj


def _functions(module: Any) -> list[tuple[str, Callable]]:
    """(name, function) for the callables defined in ``module`` itself, classes excluded."""
    return [(k, v) for k, v in vars(module).items()
            if callable(v) and not isinstance(v, type)
            and getattr(v, "__module__", None) == module.__name__]


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r})"
    msg = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _line_in(exc: BaseException, abspath: str) -> str:
    """``:LINE`` of the deepest frame of ``exc``'s traceback that lies in the file, or ``""``."""
    line = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == abspath and frame.lineno:
            line = f":{frame.lineno}"
    return line
