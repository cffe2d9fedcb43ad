"""The map stays true: every Sphinx cross-reference in dpaudit/'s docstrings names something that
exists, and every path docs/ARCHITECTURE.md's "to add X" table names is in the tree.

A reference is resolved the way a reader would: a dotted name from the top (``dpaudit.x.y``), else
from the module that holds the docstring (its globals, then its classes' attributes for ``:meth:``
and ``:attr:``), else from the ``dpaudit`` namespace. A reference that resolves nowhere is a
renamed or removed name that the docstring still points at.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dpaudit"
ROLE = re.compile(r":(func|mod|class|meth|data|attr|obj|exc):`(?:[^`<]*<)?~?([A-Za-z_][\w.]*)(?:\(\))?>?`")


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _walk(obj, dotted: str):
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _resolves(name: str, module) -> bool:
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        pass
    head = name.split(".")[0]
    if head in ("dpaudit", "numpy", "scipy", "np", "math", "hypothesis", "z3", "concurrent",
                "multiprocessing", "os", "signal", "typing", "collections", "dataclasses"):
        module_path = name.replace("np.", "numpy.", 1) if head == "np" else name
        parts = module_path.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                base = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                _walk(base, ".".join(parts[cut:])) if parts[cut:] else base
                return True
            except AttributeError:
                break
    for scope in (module, importlib.import_module("dpaudit")):
        try:
            _walk(scope, name)
            return True
        except AttributeError:
            pass
    # An unqualified method or attribute named in its own class's docstrings (instance attributes
    # are set in methods: ``self.NAME =``).
    last = name.split(".")[-1]
    if re.search(rf"\bself\.{re.escape(last)}\s*(:[^=]*)?=", inspect.getsource(module)):
        return True
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if last in getattr(cls, "__dict__", {}) or last in getattr(cls, "__dataclass_fields__", {}) \
                or last in getattr(cls, "__annotations__", {}):
            return True
    return False


def _references():
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                for match in ROLE.finditer(doc or ""):
                    yield path, match.group(2)


@pytest.mark.slow
def test_every_docstring_reference_resolves():
    unresolved = []
    for path, name in _references():
        module = importlib.import_module(_module_name(path))
        if not _resolves(name, module):
            unresolved.append(f"{path.relative_to(ROOT)}: {name}")
    assert not unresolved, "docstring references to names that do not exist:\n" + "\n".join(
        sorted(set(unresolved)))


def _architecture_paths():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"`((?:dpaudit|tests|docs|benchmarks|mechanisms|audits)/[\w./-]+)`",
                                 text)))


@pytest.mark.parametrize("relpath", _architecture_paths())
def test_architecture_paths_exist(relpath):
    path = ROOT / relpath.rstrip("/")
    matches = list(ROOT.glob(relpath)) if any(c in relpath for c in "*?[") else [path]
    assert any(p.exists() for p in matches), f"docs/ARCHITECTURE.md names {relpath}, which is not in the tree"


def test_the_repository_speaks_of_itself_only():
    """No issue-tracker numbers in the repository: code, tests, docs and benchmarks say what a thing
    does and cite papers or files, never the number of the tracker item that asked for it (a reader
    of the repository has no tracker)."""
    pattern = re.compile(r"\b[Ii]ssues? #?\d+|\b[Ii]ssue-\d+")
    hits = []
    for folder in ("dpaudit", "tests", "docs", "benchmarks", "mechanisms", "audits", "examples"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".md", ".j2", ".yml", ".toml", ".txt") or "results" in path.parts:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if pattern.search(line):
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    for name in ("README.md", "action.yml", "pyproject.toml", "mkdocs.yml"):
        for n, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{name}:{n}: {line.strip()[:100]}")
    assert not hits, "issue numbers in the repository:\n" + "\n".join(hits)
