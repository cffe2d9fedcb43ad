"""A claim the source computes with the library's own map (``epsilon=meas.map(1.0)``), recomputed
without running the audited file.

Sandboxed, the audited file runs only in the child, where it can patch dpaudit and report any
claim it likes; a literal declaration is therefore read from the source
(:mod:`dpaudit.execution.declared`). A claim computed by OpenDP's map is not a literal, but it can
be recomputed without the file's own code: the expression is read from the source with
:mod:`ast`, together with the module-level assignments it names (``meas = dp.m.make_laplace(...)``,
``SPACE = dp.atom_domain(T=float), dp.absolute_distance(T=float)``), the file's OpenDP imports and
its ``enable_features`` calls, and only that is evaluated, in a fresh ``python -I`` process under
the sandbox child's own isolation (Landlock, seccomp, rlimits: entered before OpenDP is imported), by
a small interpreter that calls nothing but OpenDP's constructors (the functions of its
measurements, transformations, combinators, domains, metrics, measures and accuracy modules, a few
named helpers such as ``enable_features`` and ``binary_search_param``, and the ``map`` and ``check``
methods of its objects), the types ``float``, ``int``, ``str``, ``bool``, with literal arguments,
a tuple's part by an int (``meas.map(1)[0]``, and ``EPS, DELTA = meas.map(1)`` read as that),
reads no attribute or module whose name starts with ``_`` and nothing of ``opendp.extras``, holds no
value that is not OpenDP's (numpy, ``re`` and the like are attributes of OpenDP's prelude: reaching
one ends the recomputation) and enables no feature but ``contrib`` and ``floating-point`` (so no
user-defined function can be built). OpenDP's ``deserialize`` unpickles what Polars plans hold: a
hostile review ran its own code in this process through it, unsandboxed, and read the parent's
environment; it is not a constructor, and the process is sandboxed now in any case. A lambda, a comprehension, a name bound twice or by the
file's own function, a call of anything else: the claim is not recomputable and stays refused (give
``--epsilon``). The child's value must equal the recomputed one; if not, the file tampered with
dpaudit in the sandbox (a LoadError, the mechanism's ERROR).

What this shows: the claim is OpenDP's map of a measurement built from the source's literal calls,
as installed here. It does not show that the released function *is* that measurement: the audit
checks that, by sampling the function against the claim.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from typing import Optional

__all__ = ["recipe", "recompute", "recompute_measured", "public_opendp", "RECOMPUTE_SECONDS"]

#: the fresh process that recomputes a claim is stopped after this many seconds
RECOMPUTE_SECONDS = 60.0
_TYPES = ("float", "int", "str", "bool")
_MAX_NODES = 2000


def public_opendp(module: object) -> bool:
    """Whether ``module`` names one of OpenDP's public modules: none of a private part
    (``opendp._lib``: the native calls) and nothing of ``opendp.extras`` (Polars, scikit-learn,
    example datasets). The source's imports are read by it, and so are the evaluator's values."""
    if not isinstance(module, str):
        return False
    parts = module.split(".")
    return parts[0] == "opendp" and not any(p.startswith("_") for p in parts) \
        and parts[1:2] != ["extras"]


def _roots(tree: ast.Module) -> tuple[list, set]:
    """The module-level imports of OpenDP's public modules (statements) and the names they bind."""
    stmts, names = [], set()
    for node in tree.body:
        if isinstance(node, ast.Import) and any(public_opendp(a.name) for a in node.names):
            # ``import dpaudit, opendp.prelude as dp``: the OpenDP names of it only
            ours = [a for a in node.names if public_opendp(a.name)]
            stmts.append(ast.copy_location(ast.Import(names=ours), node))
            names.update(a.asname or a.name.split(".")[0] for a in ours)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module \
                and public_opendp(node.module) \
                and all(a.name != "*" and not a.name.startswith("_") for a in node.names):
            stmts.append(node)
            names.update(a.asname or a.name for a in node.names)
    return stmts, names


def _binding(tree: ast.Module, name: str) -> Optional[ast.Assign]:
    """The one module-level ``name = …`` of the file; None when ``name`` is bound anywhere else
    too (another assignment, a loop, a ``with``, a ``def``, an import, ``global``)."""
    stores = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
              and isinstance(n.ctx, (ast.Store, ast.Del))]
    others = [n for n in ast.walk(tree)
              if (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name)
              or (isinstance(n, (ast.Import, ast.ImportFrom))
                  and any((a.asname or a.name.split(".")[0]) == name for a in n.names))
              or (isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names)]
    if len(stores) != 1 or others:
        return None
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            return stmt
        # ``EPS, DELTA = meas.map(1)`` (an approximate-DP map is a pair): read as ``EPS = …[0]``
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            at = [i for i, e in enumerate(target.elts) if e.id == name]
            if at:
                one = ast.Assign(targets=[ast.Name(name, ast.Store())],
                                 value=ast.Subscript(stmt.value, ast.Constant(at[0]), ast.Load()))
                return ast.fix_missing_locations(ast.copy_location(one, stmt))
    return None


def recipe(expr: ast.AST, tree: ast.Module) -> Optional[str]:
    """The source of a small program computing ``expr`` from OpenDP alone (module docstring), or
    None when ``expr`` needs anything else. Its last statement binds ``__claim__``."""
    imports, roots = _roots(tree)
    if not roots:
        return None
    needed: dict = {}

    def ok(node: ast.AST, depth: int = 0) -> bool:
        if depth > 50:
            return False
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float, str, bool, type(None)))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return ok(node.operand, depth + 1)
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(ok(e, depth + 1) for e in node.elts)
        if isinstance(node, ast.Starred):
            return ok(node.value, depth + 1)
        if isinstance(node, ast.Attribute):
            return not node.attr.startswith("_") and ok(node.value, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.RShift):
            return ok(node.left, depth + 1) and ok(node.right, depth + 1)
        if isinstance(node, ast.Subscript):  # ``meas.map(1)[0]``: one part of a map's pair
            return isinstance(node.slice, ast.Constant) and type(node.slice.value) is int \
                and ok(node.value, depth + 1)
        if isinstance(node, ast.Call):
            return ok(node.func, depth + 1) and all(ok(a, depth + 1) for a in node.args) \
                and all(k.arg is not None and ok(k.value, depth + 1) for k in node.keywords)
        if isinstance(node, ast.Name):
            if node.id in roots or node.id in _TYPES:
                return True
            if node.id in needed:
                return True
            bound = _binding(tree, node.id)
            if bound is None:
                return False
            needed[node.id] = bound
            return ok(bound.value, depth + 1)
        return False

    if sum(1 for _ in ast.walk(expr)) > _MAX_NODES or not ok(expr):
        return None
    features = [n for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                and isinstance(n.value.func, (ast.Attribute, ast.Name))
                and getattr(n.value.func, "attr", getattr(n.value.func, "id", None)) == "enable_features"
                and ok(n.value)]
    body = sorted(imports + features + list(needed.values()), key=lambda n: n.lineno)
    lines = [ast.unparse(n) for n in body] + [f"__claim__ = {ast.unparse(expr)}"]
    return "\n".join(lines)


_EVALUATOR = r'''
import ast, json, sys

import types


def isolate(root, here):
    # the sandbox child's own isolation (Landlock, seccomp, rlimits), entered before OpenDP is
    # imported: a recipe is the audited file's text, and OpenDP can reach code (deserialize)
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    spec = PathFinder.find_spec("dpaudit", [root])
    sys.modules["dpaudit"] = package = module_from_spec(spec)
    spec.loader.exec_module(package)
    from dpaudit.execution.computed_claims import public_opendp
    from dpaudit.execution.isolation import enter, limit_resources

    global of_opendp
    of_opendp = public_opendp  # the rule the source's imports were read by
    limit_resources(4 << 30, 120, 256, 64)  # memory, CPU seconds, files, threads
    return enter("strict", workdir=here, readable=[])[0]


FEATURES = {"contrib", "floating-point"}
#: OpenDP's modules whose functions build domains, metrics, measures, transformations and
#: measurements from literals: the only functions a recipe may call, with the few below
CONSTRUCTORS = {"opendp.measurements", "opendp.transformations", "opendp.combinators",
                "opendp.domains", "opendp.metrics", "opendp.measures", "opendp.accuracy"}
NAMED = {"opendp.mod": {"enable_features", "binary_search", "binary_search_param",
                        "binary_search_chain", "exponential_bounds_search"},
         "opendp.context": {"loss_of", "space_of", "domain_of", "metric_of", "unit_of"}}
#: methods of OpenDP's objects a recipe may call (a measurement's map, a transformation's check,
#: a privacy profile's epsilon and delta)
METHODS = {"map", "check", "epsilon", "delta"}
FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
             types.BuiltinMethodType)


def may_call(f):
    if f in (float, int, str, bool):
        return True
    if not isinstance(f, FUNCTIONS):
        return False
    name, owner = getattr(f, "__name__", ""), getattr(f, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        return name in METHODS and of_opendp(getattr(type(owner), "__module__", None))
    module = getattr(f, "__module__", None)
    return module in CONSTRUCTORS or name in NAMED.get(module, ())


def owned(v):
    # a value the recipe may hold: a literal, one of the four types, a function it may call, or
    # OpenDP's own module, class or object
    if v is None or isinstance(v, (bool, int, float, str)) or v in (float, int, str, bool):
        return True
    if isinstance(v, (tuple, list)):
        return all(owned(x) for x in v)
    if isinstance(v, types.ModuleType):
        return of_opendp(v.__name__)
    if isinstance(v, FUNCTIONS):
        return may_call(v)
    if isinstance(v, type):
        return of_opendp(v.__module__)
    return of_opendp(getattr(type(v), "__module__", None))


def run(source):
    tree = ast.parse(source)
    env = {"float": float, "int": int, "str": str, "bool": bool}

    def checked(v, what):
        if not owned(v):
            raise ValueError(f"{what} reaches {type(v).__name__}, not OpenDP's")
        return v

    def ev(n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else +v
        if isinstance(n, ast.Tuple):
            return tuple(x for e in n.elts for x in (ev(e.value) if isinstance(e, ast.Starred) else [ev(e)]))
        if isinstance(n, ast.List):
            return [x for e in n.elts for x in (ev(e.value) if isinstance(e, ast.Starred) else [ev(e)])]
        if isinstance(n, ast.Name):
            return env[n.id]
        if isinstance(n, ast.Attribute):
            if n.attr.startswith("_"):
                raise ValueError("a private attribute")
            return checked(getattr(ev(n.value), n.attr), "." + n.attr)
        if isinstance(n, ast.BinOp):
            return checked(ev(n.left) >> ev(n.right), ">>")
        if isinstance(n, ast.Subscript):
            # one part of a tuple (an approximate-DP map's (ε, δ)): a builtin tuple only, an int
            # index only, so no object's own __getitem__ runs
            v = ev(n.value)
            if type(v) is not tuple or not isinstance(n.slice, ast.Constant) or type(n.slice.value) is not int:
                raise ValueError("a subscript of something other than a tuple by an int")
            return checked(v[n.slice.value], "[i]")
        if isinstance(n, ast.Call):
            f = ev(n.func)
            if not may_call(f):
                raise ValueError(f"a call of {getattr(f, '__qualname__', type(f).__name__)}, not one of OpenDP's constructors")
            args = [x for a in n.args for x in (ev(a.value) if isinstance(a, ast.Starred) else [ev(a)])]
            if getattr(f, "__name__", "") == "enable_features" and not set(args) <= FEATURES:
                raise ValueError(f"features {sorted(set(args) - FEATURES)} (only {sorted(FEATURES)})")
            return checked(f(*args, **{k.arg: ev(k.value) for k in n.keywords}), "a call")
        raise ValueError(type(n).__name__)

    import importlib
    for st in tree.body:
        if isinstance(st, ast.Import):
            for a in st.names:
                if not of_opendp(a.name):
                    raise ValueError(f"an import of {a.name}")
                mod = importlib.import_module(a.name)
                env[a.asname or a.name.split(".")[0]] = mod if a.asname else importlib.import_module(a.name.split(".")[0])
        elif isinstance(st, ast.ImportFrom):
            if not of_opendp(st.module):
                raise ValueError(f"an import from {st.module}")
            mod = importlib.import_module(st.module)
            for a in st.names:
                if a.name.startswith("_"):
                    raise ValueError("a private name")
                value = getattr(mod, a.name) if hasattr(mod, a.name) else importlib.import_module(st.module + "." + a.name)
                env[a.asname or a.name] = checked(value, a.name)
        elif isinstance(st, ast.Expr):
            ev(st.value)
        elif isinstance(st, ast.Assign):
            env[st.targets[0].id] = ev(st.value)
    from importlib.metadata import version
    claim = env["__claim__"]
    if type(claim) is tuple:  # an approximate-DP map: (ε, δ)
        raise ValueError(f"the map gives a pair {tuple(float(x) for x in claim)!r}, not a number: "
                         f"write epsilon=meas.map(d_in)[0], delta=meas.map(d_in)[1]")
    return float(claim), version("opendp"), measure_of(tree.body[-1].value, ev)


def measure_of(expr, ev):
    """The output measure (its name, e.g. ZeroConcentratedDivergence) of the measurement whose
    map gives the claim (the outermost ``X.map(d_in)`` in it), or None: what the number means."""
    calls = [n for n in ast.walk(expr) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "map"]
    if not calls:
        return None
    measure = getattr(ev(calls[0].func.value), "output_measure", None)
    return None if measure is None else str(measure)[:80]

try:
    isolation = isolate(sys.argv[1], sys.argv[2])
    value, version, measure = run(sys.stdin.read())
    print(json.dumps({"value": repr(value), "version": version, "isolation": isolation,
                      "measure": measure}))
except BaseException as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}))
'''


def recompute(source: str, *, timeout: float = RECOMPUTE_SECONDS) -> tuple[Optional[float], str]:
    """``(value, "OpenDP <version>, isolated: <the isolation in force>")`` of a :func:`recipe`,
    evaluated in a fresh, sandboxed ``python -I`` process in an empty folder; ``(None, why)`` when
    it fails or runs past ``timeout``. :func:`recompute_measured` also says the map's measure."""
    value, why, _ = recompute_measured(source, timeout=timeout)
    return value, why


def recompute_measured(source: str, *, timeout: float = RECOMPUTE_SECONDS
                       ) -> tuple[Optional[float], str, Optional[str]]:
    """:func:`recompute` and the output measure of the measurement whose map it is
    (``MaxDivergence``, ``ZeroConcentratedDivergence``, …; None where the value is no map's):
    what the number means, an ε or a ρ."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT")}
    env["RUST_LIB_BACKTRACE"] = env["RUST_BACKTRACE"] = "0"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory(prefix="dpaudit-claim-") as here:
        try:
            done = subprocess.run([sys.executable, "-I", "-c", _EVALUATOR, root, here], input=source,
                                  capture_output=True, text=True, timeout=timeout, cwd=here, env=env,
                                  start_new_session=True)
        except subprocess.TimeoutExpired:
            return None, f"recomputing it took more than {timeout:g} s", None
    try:
        reply = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"the process that recomputes it ended with code {done.returncode}", None
    if "error" in reply:
        return None, str(reply["error"])[:200], None
    measure = reply.get("measure")
    try:
        return float(reply["value"]), (f"OpenDP {reply.get('version', '?')}, "
                                       f"isolated: {reply.get('isolation', '?')}"), \
            (measure if isinstance(measure, str) else None)
    except (TypeError, ValueError, KeyError):
        return None, "no number came back", None
