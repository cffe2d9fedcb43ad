"""The suite's marks are used as tests/README.md says: ``slow`` leaves a test out of the fast subset
(``python -m pytest -m "not slow" -n auto``), ``statistical`` names a seeded statistical test with
an explicit α.

The marks are read from the source (the abstract syntax tree of every ``tests/**/test_*.py``), not
from a pytest collection, so that this check costs well under a second and sees the whole suite
whatever subset runs it. A test's marks are those of its module (``pytestmark``), its class and its
decorators; a mark inside ``pytest.param(..., marks=...)`` in a ``parametrize`` decorator marks
some of its cases only. A test's sample budget is the largest integer literal passed as the
keyword argument ``samples=`` (to ``dpaudit.audit``, ``dict``, ``sampled``...) in its body or in any
module-level function or constant that its body names, followed name by name. A ``"samples"`` key
of a dict literal is data (a progress event, a record), not a budget.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: a sampled audit with a budget this large takes seconds: it belongs to the whole suite only
LARGE_BUDGET = 10**6
#: slow test functions: 139 when the marks were set (244 cases with their parametrisations)
MIN_SLOW = 100
MARKS = ("slow", "statistical")


@dataclass
class Case:
    path: str
    name: str
    marks: set[str] = field(default_factory=set)  # marks every case of the test
    some: set[str] = field(default_factory=set)  # marks some parametrised cases only
    budget: int = 0


def _mark_names(node: ast.AST) -> list[str]:
    """The NAME of every ``pytest.mark.NAME`` under ``node``."""
    return [n.attr for n in ast.walk(node)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"
            and isinstance(n.value.value, ast.Name) and n.value.value.id == "pytest"]


def _number(node: ast.AST) -> int | None:
    """An integer literal such as ``1_000_000``, ``10**6`` or ``4 * 10**6``; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult, ast.Pow)):
        a, b = _number(node.left), _number(node.right)
        if a is not None and b is not None and (not isinstance(node.op, ast.Pow) or b <= 64):
            return a + b if isinstance(node.op, ast.Add) else a * b if isinstance(node.op, ast.Mult) else a ** b
    return None


def _own_budget(nodes: list[ast.AST]) -> int:
    return max([0, *(_number(n.value) or 0 for top in nodes for n in ast.walk(top)
                     if isinstance(n, ast.keyword) and n.arg == "samples")])


def _names(nodes: list[ast.AST]) -> set[str]:
    return {n.id for top in nodes for n in ast.walk(top) if isinstance(n, ast.Name)}


def scan(source: str, path: str = "<test>") -> list[Case]:
    """The tests of one module, with their marks and sample budgets."""
    tree = ast.parse(source)
    module_marks: set[str] = set()
    bodies: dict[str, list[ast.AST]] = {}  # module-level name -> what its budget is read from
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bodies[node.name] = list(node.body)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    bodies[t.id] = [node.value] if node.value is not None else []
                    if t.id == "pytestmark" and node.value is not None:
                        module_marks |= set(_mark_names(node.value))

    memo: dict[str, int] = {}

    def budget(nodes: list[ast.AST], seen: frozenset[str]) -> int:
        linked = [memo.get(n) if n in memo else reach(n, seen) for n in _names(nodes) & bodies.keys() - seen]
        return max([_own_budget(nodes), *linked])

    def reach(name: str, seen: frozenset[str]) -> int:
        memo[name] = value = budget(bodies[name], seen | {name})
        return value

    def case(fn: ast.FunctionDef | ast.AsyncFunctionDef, inherited: set[str]) -> Case:
        c = Case(path, fn.name, set(inherited))
        for d in fn.decorator_list:
            names = _mark_names(d)
            if isinstance(d, ast.Call) and "parametrize" in _mark_names(d.func):
                c.some |= set(_mark_names(ast.Tuple(elts=[*d.args, *[k.value for k in d.keywords]])))
            else:
                c.marks |= set(names)
        c.budget = budget(list(fn.body), frozenset({fn.name}))
        return c

    cases = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            cases.append(case(node, module_marks))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            class_marks = module_marks | {m for d in node.decorator_list for m in _mark_names(d)}
            cases += [case(fn, class_marks) for fn in node.body
                      if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test")]
    return cases


def _unread(source: str) -> list[str]:
    """``pytest.mark.slow``/``statistical`` written where :func:`scan` does not look (an alias, a
    helper): such a mark would be invisible to the checks below."""
    tree = ast.parse(source)
    read: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                read += _mark_names(d)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            read += _mark_names(node.value)
    written = _mark_names(tree)
    return [m for m in MARKS if written.count(m) > read.count(m)]


@lru_cache(maxsize=1)
def _suite() -> tuple[Case, ...]:
    return tuple(c for p in sorted(TESTS.rglob("test_*.py"))
                 for c in scan(p.read_text(encoding="utf-8"), p.relative_to(TESTS).as_posix()))


def test_the_scan_sees_each_way_of_marking_and_of_setting_a_budget():
    cases = {c.name: c for c in scan('''
import pytest
pytestmark = [pytest.mark.statistical]
CLAIM = dict(epsilon=1.0, samples=4 * 10**6)
def _audit():
    return audit(f, **CLAIM)
@pytest.mark.slow
def test_a():
    audit(f, samples=2_000_000)
@pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_b(x):
    _audit()
def test_c():
    audit(f, samples=999_999, event={"samples": 4_000_000})
@pytest.mark.slow
class TestD:
    def test_e(self):
        pass
''')}
    assert set(cases) == {"test_a", "test_b", "test_c", "test_e"}
    assert cases["test_a"].marks == {"statistical", "slow"} and cases["test_a"].budget == 2_000_000
    assert cases["test_b"].marks == {"statistical"} and cases["test_b"].some == {"slow"}
    assert cases["test_b"].budget == 4_000_000
    assert cases["test_c"].budget == 999_999 and "slow" not in cases["test_c"].marks
    assert cases["test_e"].marks == {"statistical", "slow"}
    assert _unread("import pytest\nslow = pytest.mark.slow\n@slow\ndef test_f():\n    pass\n") == ["slow"]


def test_every_mark_is_written_where_the_scan_reads_it():
    unread = {p.relative_to(TESTS).as_posix(): m for p in sorted(TESTS.rglob("test_*.py"))
              if (m := _unread(p.read_text(encoding="utf-8")))}
    assert not unread, f"write these marks as @pytest.mark.X, pytestmark or pytest.param(marks=...): {unread}"


def test_enough_tests_are_slow_and_every_file_keeps_a_fast_one():
    cases = _suite()
    slow = [c for c in cases if "slow" in c.marks | c.some]
    assert len(slow) >= MIN_SLOW, f"only {len(slow)} tests are marked slow"
    # a whole file may be slow only in statistical/, whose features all have unit tests as well
    files = {c.path for c in cases if not c.path.startswith("statistical/")}
    all_slow = sorted(f for f in files if all("slow" in c.marks for c in cases if c.path == f))
    assert not all_slow, f"these files have no test in the fast subset: {all_slow}"


def test_every_test_in_statistical_is_marked_statistical():
    unmarked = [f"{c.path}::{c.name}" for c in _suite()
                if c.path.startswith("statistical/") and "statistical" not in c.marks]
    assert not unmarked, f"mark these pytest.mark.statistical: {unmarked}"


def test_every_test_with_a_sample_budget_of_a_million_or_more_is_slow():
    fast = [f"{c.path}::{c.name} (samples={c.budget:_})" for c in _suite()
            if c.budget >= LARGE_BUDGET and "slow" not in c.marks]
    assert not fast, f"mark these pytest.mark.slow: {fast}"
