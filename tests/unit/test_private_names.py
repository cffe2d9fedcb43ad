"""Private names stay private: a module's ``_name`` is an implementation detail of that module.

The harness may reach across a module boundary for a private name only a handful of times
(at most ``LIMIT``), and each test that does so says why on the import line with a
``# private: <reason>`` comment. Three spellings are counted, found with ``ast`` (imports inside
functions included):

- ``from dpaudit.x import _name`` and ``from .x import _name`` (relative imports resolved);
- ``module._name`` where ``module`` was bound by ``import dpaudit.x [as m]``,
  ``from dpaudit import x``, ``from . import x`` or ``m = importlib.import_module("dpaudit.x")``;
- ``dpaudit.x._name`` through a plain ``import dpaudit.x``.

Dunder names (``__version__``) are not private. A name is counted once per importing module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dpaudit"
LIMIT = 5


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str, root: Path) -> bool:
    """Whether ``dotted`` (``dpaudit.x.y``) names a module or package under ``root``."""
    base = root.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` reads from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a plain name, else None."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
        return ".".join(reversed(names))
    return None


def _import_module_of(node: ast.expr) -> str | None:
    """``"dpaudit.x"`` for the call ``importlib.import_module("dpaudit.x")``, else None."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) \
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module":
        return node.args[0].value
    return None


def private_imports(path: Path, root: Path = ROOT) -> list[tuple[int, str, str, tuple]]:
    """``(line, source module, name, spans)`` for each private name of another dpaudit module that
    the file at ``path`` uses, once per (source, name), at its first line of use; ``spans`` are
    the (first, last) lines of the import statements it is reached through (the ``from ...
    import _name`` itself, or the import that bound the module). ``root`` holds ``dpaudit``."""
    module = _module_name(path, root)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}                 # local name -> dpaudit module it is bound to
    bound: dict[str, set] = {}                   # local name or dotted module -> import spans
    plain: set[str] = set()                      # dotted modules imported by `import dpaudit.x.y`
    found: dict[tuple[str, str], tuple[int, set]] = {}

    def span(node: ast.stmt) -> tuple[int, int]:
        return node.lineno, node.end_lineno or node.lineno

    def hit(source: str, name: str, line: int, spans: set) -> None:
        if source != module and source.split(".")[0] == "dpaudit" and _is_private(name):
            first, seen = found.get((source, name), (line, set()))
            found[(source, name)] = (min(first, line), seen | spans)

    nodes = list(ast.walk(tree))  # walked once for both passes (the second reads what the first bound)
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            source = _resolve(node, module, is_package)
            for alias in node.names:
                if _is_module(f"{source}.{alias.name}", root):
                    local = alias.asname or alias.name
                    aliases[local] = f"{source}.{alias.name}"
                    bound.setdefault(local, set()).add(span(node))
                    if _is_private(alias.name):      # a private submodule of another package
                        hit(source, alias.name, node.lineno, {span(node)})
                else:
                    hit(source, alias.name, node.lineno, {span(node)})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "dpaudit":
                    continue
                local = alias.asname or alias.name
                if alias.asname:
                    aliases[local] = alias.name
                else:
                    plain.add(alias.name)
                bound.setdefault(local, set()).add(span(node))
        elif isinstance(node, ast.Assign) and _import_module_of(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    aliases[target.id] = _import_module_of(node.value)
                    bound.setdefault(target.id, set()).add(span(node))

    for node in nodes:
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            owner = _dotted(node.value)
            if owner is None:
                continue
            if owner in aliases:
                hit(aliases[owner], node.attr, node.lineno, bound.get(owner, set()))
            elif owner in plain or (any(p.startswith(owner + ".") for p in plain)
                                    and _is_module(owner, root)):
                spans = set().union(*(bound[p] for p in plain if p == owner or p.startswith(owner + ".")))
                hit(owner, node.attr, node.lineno, spans)
    return sorted((line, source, name, tuple(sorted(spans)))
                  for (source, name), (line, spans) in found.items())


def _harness_files():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.slow
def test_few_private_names_cross_a_module_boundary_in_the_harness():
    offenders = [f"{path.relative_to(ROOT).as_posix()}:{line}: {source}.{name}"
                 for path in _harness_files() for line, source, name, _ in private_imports(path)]
    assert len(offenders) <= LIMIT, (
        f"{len(offenders)} private names imported across modules in dpaudit/ (at most {LIMIT}); "
        "give the shared piece a public name in the module that owns it, or move it to where it "
        "is used:\n" + "\n".join(offenders))


@pytest.mark.slow
def test_tests_say_why_they_import_a_private_name():
    """The comment sits on the import statement the private name is reached through (any of its
    lines): the ``from dpaudit.x import _name``, or the import of the module whose ``_name`` the
    test reads."""
    missing = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for line, source, name, spans in private_imports(path):
            bare = [first for first, last in spans
                    if not any("# private:" in lines[i - 1] for i in range(first, last + 1))]
            if bare or not spans:
                missing.append(f"{path.relative_to(ROOT).as_posix()}:{(bare or [line])[0]}: "
                               f"{source}.{name}")
    assert missing == [], (
        "a test reaches a private name of dpaudit without a `# private: <reason>` comment on the "
        "import it comes through (use a public name, or say why):\n" + "\n".join(missing))


def test_the_scanner_sees_every_spelling(tmp_path):
    """The scanner itself, on a module inside a throwaway copy of the package layout."""
    pkg = tmp_path / "dpaudit"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__.py", "a.py", "sub/__init__.py", "sub/b.py"):
        (pkg / name).write_text("")
    src = pkg / "sub" / "m.py"
    src.write_text(
        "import importlib\nimport dpaudit.a\nimport dpaudit.sub.b as bb\n"
        "from dpaudit.a import _one, public, __version__\nfrom .b import _two\n"
        "from . import b\nfrom .. import a\n"
        "def f():\n    from dpaudit.sub.b import _three\n"
        "    return dpaudit.a._four, bb._five, b._six, a._seven, b.public, self._own\n"
        "m = importlib.import_module('dpaudit.a')\nm._eight\n")
    found = private_imports(src, tmp_path)
    assert sorted(n for _, _, n, _ in found) == sorted(
        ["_one", "_two", "_three", "_four", "_five", "_six", "_seven", "_eight"])
    assert {(s, n) for _, s, n, _ in found} >= {("dpaudit.a", "_one"), ("dpaudit.sub.b", "_two"),
                                             ("dpaudit.a", "_four"), ("dpaudit.a", "_seven"),
                                             ("dpaudit.sub.b", "_six"), ("dpaudit.a", "_eight")}
