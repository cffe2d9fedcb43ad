"""The architecture contracts: layers point down (import-linter), and the generic harness never
imports this repository's reference mechanisms (docs/ARCHITECTURE.md)."""

import ast
import os
from pathlib import Path

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
