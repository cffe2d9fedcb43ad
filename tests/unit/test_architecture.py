"""The architecture contracts: layers point down (import-linter), and the generic harness never
imports this repository's reference mechanisms (docs/ARCHITECTURE.md)."""

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_linter_contracts_are_kept():
    from importlinter.cli import lint_imports

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    finally:
        os.chdir(cwd)
    assert code == 0, "lint-imports found a broken contract (run `lint-imports` for the details)"


def _imported_names(path: Path) -> list[str]:
    """Every module named by an import statement or an importlib.import_module / find_spec call
    with a literal argument."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("import_module", "find_spec") \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            names.append(node.args[0].value)
    return names


# `dpaudit list` names the reference package to list its modules for the user (it never imports one)
_ALLOWED = {("suite/commands.py", "dpaudit.reference")}


@pytest.mark.slow
def test_the_harness_never_imports_the_reference_mechanisms():
    """grimp walks only the dpaudit/ folder, and dpaudit.reference is mapped from mechanisms/, so
    import-linter cannot see these imports: scan the harness's source instead."""
    harness = ROOT / "dpaudit"
    offenders = []
    for path in sorted(harness.rglob("*.py")):
        rel = path.relative_to(harness).as_posix()
        for name in _imported_names(path):
            top = name.split(".")
            if (top[:2] == ["dpaudit", "reference"] or top[0] == "mechanisms") and (rel, name) not in _ALLOWED:
                offenders.append(f"dpaudit/{rel}: {name}")
    assert offenders == []


def test_the_scan_sees_every_kind_of_import(tmp_path):
    """The scanner itself: each spelling of an import of the reference package is found."""
    src = tmp_path / "m.py"
    src.write_text("import dpaudit.reference.laplace\nfrom dpaudit.reference import laplace\n"
                   "import importlib\nimportlib.import_module('dpaudit.reference.geometric')\n"
                   "def f():\n    from mechanisms.laplace import Laplace\n")
    found = [n for n in _imported_names(src) if "reference" in n or n.startswith("mechanisms")]
    assert sorted(found) == sorted(["dpaudit.reference.laplace", "dpaudit.reference",
                                    "dpaudit.reference.laplace", "dpaudit.reference.geometric",
                                    "mechanisms.laplace", "mechanisms.laplace.Laplace"])


# --------------------------------------------------------------------------- import cycles

def _module_names(package: Path) -> dict[str, Path]:
    """``{dotted name: file}`` for every module of the package at ``package`` (a package is named
    by its ``__init__.py``)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _lazy_table(path: Path) -> dict[str, str]:
    """A package's lazy name table (``_EXPORTS = {"audit": "dpaudit.auditor", ...}``), or {}."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        target = node.target if isinstance(node, ast.AnnAssign) else \
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and isinstance(node.value, ast.Dict):
            return {k.value: v.value for k, v in zip(node.value.keys, node.value.values)
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
    return {}


def _dotted_chain(node: ast.expr) -> list[str] | None:
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + names[::-1]
    return None


def import_graph(package: Path) -> dict[str, set[str]]:
    """``{module: modules it imports}`` for the package at ``package``, read from the source.

    An edge is any of, at any depth (inside functions too, and under ``if TYPE_CHECKING``):

    - ``import a.b.c`` → ``a.b.c``; ``from a.b import c`` → ``a.b.c`` when that is a module, else
      ``a.b``; relative imports are resolved against the importing module;
    - ``importlib.import_module("a.b")`` / ``import_module(".b", "a")`` / ``__import__("a.b")``
      with literal strings → ``a.b``;
    - a name a package hands out through its lazy name table (``_EXPORTS`` in ``dpaudit/__init__.py``
      and ``dpaudit/execution/__init__.py``): ``from dpaudit import audit`` or ``dpaudit.audit`` after
      ``import dpaudit`` → ``dpaudit.auditor``, the module that the access imports.

    Parent packages are not edges: Python runs ``a/__init__.py`` before ``a.b`` whoever imports it,
    so counting them would make every package that imports its own submodules a cycle. A package
    ``__init__`` is an edge only where it imports a module itself, as ``dpaudit/report/__init__.py``
    imports ``dpaudit.report.registry`` (re-exports are real imports). The lazy facades
    ``dpaudit/__init__.py`` and ``dpaudit/execution/__init__.py`` name their modules in a table
    and import one only when its name is first used (``importlib.import_module(module)``, not a
    literal), so the facade itself has no edges; the edge goes from the module that uses the name
    to the module that defines it. Modules outside the package and a module's imports of itself
    are left out.
    """
    modules = _module_names(package)
    tables = {name: _lazy_table(path) for name, path in modules.items() if path.name == "__init__.py"}
    tables = {k: v for k, v in tables.items() if v}

    def known(dotted: str) -> str | None:
        """The module ``dotted`` names, or its longest prefix that is one (``a.b.attr`` → ``a.b``)."""
        parts = dotted.split(".")
        while parts:
            if ".".join(parts) in modules:
                return ".".join(parts)
            parts.pop()
        return None

    def lazy(pkg: str, name: str) -> str | None:
        return tables.get(pkg, {}).get(name)

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        here = module.split(".") if is_package else module.split(".")[:-1]
        edges: set[str] = set()
        bound: dict[str, str] = {}  # local name -> module, for attribute access through a facade
        # parsed and walked once for both passes (the second needs every name the first bound)
        nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    edges.add(alias.name)
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                source = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    if sub in modules:
                        edges.add(sub)
                        bound[alias.asname or alias.name] = sub
                    else:
                        edges.add(source)
                        target = lazy(source, alias.name)
                        if target:
                            edges.add(target)
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str) \
                    and (getattr(node.func, "attr", None) == "import_module"
                         or getattr(node.func, "id", None) in ("import_module", "__import__")):
                name = node.args[0].value
                if name.startswith(".") and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                    dots = len(name) - len(name.lstrip("."))
                    anchor = str(node.args[1].value).split(".")
                    name = ".".join(anchor[: len(anchor) - dots + 1] + [name.lstrip(".")])
                edges.add(name)
        for node in nodes:
            chain = _dotted_chain(node) if isinstance(node, ast.Attribute) else None
            if not chain or chain[0] not in bound:
                continue
            dotted = bound[chain[0]].split(".") + chain[1:]
            for i in range(1, len(dotted)):
                target = lazy(".".join(dotted[:i]), dotted[i])
                if target:
                    edges.add(target)
        graph[module] = {m for m in map(known, edges) if m and m != module}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of ``graph`` as paths ``[a, b, …, a]``: for every strongly connected component of
    more than one module, the shortest cycle through each of its modules (deduplicated), so every
    module caught in a cycle appears in at least one path; sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm (recursive: the package is a few hundred modules)
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    found: dict[tuple, list[str]] = {}
    for comp in components:
        for start in sorted(comp):  # breadth-first: the shortest way from start back to start
            parent: dict[str, str] = {}
            queue = [start]
            while queue and start not in parent:
                nxt = []
                for v in queue:
                    for w in sorted(graph[v] & comp):
                        if w not in parent:
                            parent[w] = v
                            nxt.append(w)
                queue = nxt
            path = [start]
            v = parent[start]
            while v != start:
                path.append(v)
                v = parent[v]
            path = [start] + path[1:][::-1] + [start]
            ring = path[:-1]
            k = ring.index(min(ring))
            key = tuple(ring[k:] + ring[:k])
            found.setdefault(key, list(key) + [key[0]])
    return sorted(found.values())


@pytest.mark.slow
def test_no_module_of_the_harness_imports_itself_through_others():
    """No cycle of modules in dpaudit/, however the import is spelled or hidden in a function
    (import-linter's layers see only module-level contracts between layers, not a cycle inside
    one folder, and not ``importlib`` calls). Break a cycle by moving the shared piece to a lower
    module under a public name, never by moving the import into a function."""
    cycles = import_cycles(import_graph(ROOT / "dpaudit"))
    assert cycles == [], "import cycles in dpaudit/:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_the_import_graph_sees_every_spelling(tmp_path):
    """The graph builder itself, on a throwaway package: each spelling is an edge, a lazy name
    table is an edge from its user, parent packages are not, and cycles come back as paths."""
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "import importlib\n_EXPORTS = {'thing': 'p.lazy'}\n"
                       "def __getattr__(n):\n    return getattr(importlib.import_module(_EXPORTS[n]), n)\n",
        "lazy.py": "thing = 1\n",
        "a.py": "import p.b\n",
        "b.py": "def f():\n    from p.sub import c\n",          # a module named in `from pkg import`
        "sub/__init__.py": "from .d import x\n",              # a package re-export
        "sub/c.py": "from .. import a\n",                     # relative, two levels
        "sub/d.py": "x = 1\ndef g():\n    import importlib\n    importlib.import_module('.e', 'p.sub')\n",
        "sub/e.py": "def h():\n    return __import__('p.f')\n",
        "f.py": "import p\ndef k():\n    return p.thing\n",   # through the lazy table
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    graph = import_graph(pkg)
    assert graph["p"] == set()
    assert graph["p.a"] == {"p.b"} and graph["p.b"] == {"p.sub.c"} and graph["p.sub.c"] == {"p.a"}
    assert graph["p.sub"] == {"p.sub.d"} and graph["p.sub.d"] == {"p.sub.e"}
    assert graph["p.sub.e"] == {"p.f"} and graph["p.f"] == {"p", "p.lazy"}
    assert import_cycles(graph) == [["p.a", "p.b", "p.sub.c", "p.a"]]
    (pkg / "lazy.py").write_text("from p.sub.d import x\n")  # now p.f → p.lazy → … → p.f
    (pkg / "sub" / "d.py").write_text("x = 1\nimport p.sub.e\n")
    assert import_cycles(import_graph(pkg)) == [
        ["p.a", "p.b", "p.sub.c", "p.a"], ["p.f", "p.lazy", "p.sub.d", "p.sub.e", "p.f"]]


# --------------------------------------------------------------------------- registries

def _registries():
    from dpaudit.formal.registry import CLAIMS
    from dpaudit.neighbours.registry import RELATIONS
    from dpaudit.report.kinds import KINDS
    from dpaudit.report.registry import REPORTERS

    return {"report format": (REPORTERS, "htm", "html"), "record kind": (KINDS, "audits", "audit"),
            "neighbours": (RELATIONS, "lin", "linf"), "claim": (CLAIMS, "l1-helly-3d", "l1-helly-2d")}


def test_every_registry_follows_one_rule_set():
    """Report formats, record kinds, relations and formal claims are each a
    dpaudit.registry.Registry: an unknown name lists the valid ones and the closest, and a taken
    name is refused (the same entry again is not an error)."""
    import pytest

    from dpaudit.errors import InvalidArgument
    from dpaudit.registry import DuplicateName, Registry

    for what, (reg, typo, meant) in _registries().items():
        assert isinstance(reg, Registry) and reg.what == what
        with pytest.raises(InvalidArgument, match=f"^{what} must be one of the valid names: .*{meant}.*; "
                                                  f"got '{typo}' \\(did you mean '{meant}'\\?\\)$"):
            reg.get(typo)
        entry = reg.get(meant)
        copy = reg.copy()
        assert copy.add(entry) is entry  # the same entry again: a no-op
        with pytest.raises(DuplicateName, match="already registered"):
            copy.add(_impostor(entry))
        assert reg.get(meant) is entry and copy.names() == reg.names()


def _impostor(entry):
    """Another entry with ``entry``'s name."""
    import dataclasses

    if isinstance(entry, type):
        return type(entry.__name__ + "Impostor", (entry,), {})
    if dataclasses.is_dataclass(entry):  # a Reporter or a Claim that says something else
        field = "help" if hasattr(entry, "help") else "statement"
        return dataclasses.replace(entry, **{field: "another " + getattr(entry, field)})
    return type(entry)()


def test_entry_point_plugins_load_once_and_a_broken_one_is_skipped(monkeypatch):
    import importlib.metadata

    from dpaudit.registry import Registry

    class EntryPoint:
        def __init__(self, name, load):
            self.name, self.load = name, load

    calls = []

    def entry_points(group):
        calls.append(group)
        return [EntryPoint("b", lambda: "beta"), EntryPoint("a", lambda: 1 / 0), EntryPoint("c", lambda: "gamma")]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    reg = Registry("word", name_of=str, group="test.words")
    reg.add("alpha")
    assert reg.find("alpha") == "alpha" and calls == []  # a hit loads nothing
    assert reg.find("gamma") == "gamma" and calls == ["test.words"]  # a miss loads the group
    assert reg.names() == ("alpha", "beta", "gamma") and calls == ["test.words"]  # once, in name order
