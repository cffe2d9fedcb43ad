"""The ``@dpaudit.mechanism(...)`` declaration of a function, read from its file's source text.

Sandboxed, the audited file is imported only in the child, and the child runs the audited code,
which can patch dpaudit's modules there: the declaration the child reports (its claim: ε, δ,
neighbours, domain, size) is that code's word. A forged ``domain=(0, 1e-6)`` for a file whose
source says ``(0, 1)`` let a leaky sum pass, its noise audited against records a millionth as
large. So dpaudit's own process reads the declaration from the source with :mod:`ast`, without
importing or running anything of the file: the decorator of the function (``@mechanism(...)``,
``@dpaudit.mechanism(...)``, under any name the file's imports bind them to) and its literal
arguments (:func:`ast.literal_eval`). :func:`reconcile` compares them with the child's report: a
field on which they disagree is a tampered sandbox; a field whose argument is not a literal
(``epsilon=EPS``, ``**claim``) is taken from the child and said to be so.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dpaudit.errors import DpauditError, LoadError

__all__ = ["SourceDeclaration", "read_declaration", "reconcile", "computed_text", "CLAIM_FIELDS",
           "POLICY_FIELDS", "COMPUTABLE", "FROM_THE_CHILD"]

#: the declaration's fields the child reports, in the order a claim is written
CLAIM_FIELDS = ("epsilon", "delta", "neighbours", "domain", "size", "output")
#: the decorator's float policy (``float``, or its older spelling ``float_events``)
POLICY_FIELDS = ("float", "float_events")
#: a claim stated as a curve, read as a literal from the source (a ``profile=`` callable cannot be)
CURVE_FIELDS = ("rho", "mu", "renyi")
#: the claim fields a source may compute with OpenDP's own map (recomputed, never taken on the
#: child's word: :mod:`dpaudit.execution.computed_claims`)
COMPUTABLE = ("epsilon", "delta", "rho")
#: the measure whose map is ρ: a field other than ``rho`` computed from it, or ``rho`` computed from
#: another, is refused (:func:`_wrong_measure`)
ZCDP_MEASURE = "ZeroConcentratedDivergence"


@dataclass(frozen=True)
class SourceDeclaration:
    """What the source says: ``literal`` (keyword -> value) for the literal arguments of the
    function's ``@mechanism`` decorator, ``opaque`` the keywords (``"**"`` for an unpacked dict)
    whose values are not literals. ``found`` is False when no such decorator is on the function
    in the source (it may be declared some other way, e.g. ``f = mechanism(...)(g)``)."""

    found: bool
    literal: Mapping[str, Any] = field(default_factory=dict)
    opaque: tuple = ()
    line: Optional[int] = None
    #: ε or δ computed by OpenDP's map (``epsilon=meas.map(1.0)``): the keyword -> (its source
    #: text, the program that recomputes it from OpenDP alone,
    #: :func:`dpaudit.execution.computed_claims.recipe`)
    computed: Mapping[str, tuple] = field(default_factory=dict)


def read_declaration(path: str, function: str) -> Optional[SourceDeclaration]:
    """The declaration on ``function`` (a dotted name: ``Class.method``) in the file at ``path``;
    None when the file cannot be read or parsed, or defines no such function with ``def``
    (then only the child can say what it is). Never imports or runs the file."""
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), filename=str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    modules, names = _dpaudit_names(tree)
    node = _function_node(tree.body, function.split("."))
    if node is None:
        return None
    for deco in node.decorator_list:
        call = deco if isinstance(deco, ast.Call) else None
        target = call.func if call is not None else deco
        if not _is_mechanism(target, modules, names):
            continue
        if call is None:  # a bare @mechanism: nothing declared
            return SourceDeclaration(True, {}, (), node.lineno)
        literal, opaque, computed = {}, [], {}
        if call.args:  # mechanism(f, ...) as a decorator call: not a declaration we read
            opaque.append("*")
        for kw in call.keywords:
            if kw.arg is None:
                opaque.append("**")
                continue
            value = _constant(kw.value, tree.body)
            try:
                literal[kw.arg] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                opaque.append(kw.arg)
                if kw.arg in COMPUTABLE:
                    from dpaudit.execution.computed_claims import recipe

                    program = recipe(value, tree)
                    if program is not None:
                        computed[kw.arg] = (ast.unparse(kw.value), program)
        return SourceDeclaration(True, literal, tuple(opaque), node.lineno, computed)
    return SourceDeclaration(False, {}, (), node.lineno)


def _constant(node: ast.AST, body: list) -> ast.AST:
    """``node``, or where it is a name the module binds exactly once, at module level, to a
    literal (``EPSILON = 0.5``, or one place of ``EPS, DELTA = 0.5, 1e-5``), that literal: the
    common way to spell a claim, which can then be read here rather than taken on the sandboxed
    code's word. A tuple or list (``domain=(LO, HI)``) is read element by element. A name that a
    function declares ``global`` is never read (the function may rebind it before the
    decorator runs)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        elts = [_constant(e, body) for e in node.elts]
        return ast.Tuple(elts=elts, ctx=ast.Load()) if isinstance(node, ast.Tuple) \
            else ast.List(elts=elts, ctx=ast.Load())
    if not isinstance(node, ast.Name):
        return node
    bound = [stmt for stmt in _statements(body) if _binds(stmt, node.id)]
    bound += [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                  ast.ClassDef, ast.Import, ast.ImportFrom))
              and _names_bound(n, node.id)]
    if len(bound) != 1 or not isinstance(bound[0], (ast.Assign, ast.AnnAssign)) \
            or bound[0].value is None or len(getattr(bound[0], "targets", [None])) != 1 \
            or _declared_global(body, node.id):
        return node
    stmt = bound[0]
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
    if isinstance(target, ast.Name):
        return stmt.value
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(stmt.value.elts) \
            and all(isinstance(t, ast.Name) for t in target.elts):
        return stmt.value.elts[[t.id for t in target.elts].index(node.id)]
    return node


def _declared_global(body: list, name: str) -> bool:
    """Whether some function or class of the module declares ``global name``."""
    return any(isinstance(n, ast.Global) and name in n.names
               for stmt in body for n in ast.walk(stmt))


def _names_bound(stmt: ast.AST, name: str) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in stmt.names)
    return getattr(stmt, "name", None) == name


def _dpaudit_names(tree: ast.Module) -> tuple[set, set]:
    """The names the file binds to the dpaudit package (``import dpaudit as dp``) and to its
    ``mechanism`` decorator (``from dpaudit import mechanism as declare``), anywhere in it."""
    modules, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "dpaudit":
                    modules.add(a.asname or "dpaudit")
                elif a.name.startswith("dpaudit.") and a.asname is None:
                    modules.add("dpaudit")  # `import dpaudit.spec` binds `dpaudit`
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in ("dpaudit",
                                                                                    "dpaudit.spec"):
            for a in node.names:
                if a.name == "mechanism":
                    names.add(a.asname or "mechanism")
    return modules, names


def _is_mechanism(node: ast.AST, modules: set, names: set) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute) and node.attr == "mechanism":
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr == "spec":  # dpaudit.spec.mechanism
            base = base.value
        return isinstance(base, ast.Name) and base.id in modules
    return False


def _function_node(body: list, parts: list[str]) -> Optional[ast.AST]:
    """The last definition of ``parts[0]`` in ``body`` (module or class level, also inside
    ``if``/``try``/``with`` blocks: the one the import leaves bound), descending into classes."""
    found = None
    for stmt in _statements(body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == parts[0] \
                and len(parts) == 1:
            found = stmt
        elif isinstance(stmt, ast.ClassDef) and stmt.name == parts[0] and len(parts) > 1:
            inner = _function_node(stmt.body, parts[1:])
            found = inner if inner is not None else found
        elif _binds(stmt, parts[0]):
            found = None  # rebound by an assignment after the def: not the def we saw
    return found


def _statements(body: list):
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _statements(stmt.body)
            yield from _statements(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _statements(stmt.body)
            for h in stmt.handlers:
                yield from _statements(h.body)
            yield from _statements(stmt.orelse)
            yield from _statements(stmt.finalbody)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from _statements(stmt.body)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            yield from _statements(stmt.body)
            yield from _statements(stmt.orelse)


def _binds(stmt: ast.AST, name: str) -> bool:
    """Whether the module-level statement ``stmt`` binds ``name``: an assignment (in a tuple
    too), a loop's target, a ``with ... as``, or a walrus anywhere in it."""
    targets: list = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    if any(name in _target_names(t) for t in targets):
        return True
    expr = [getattr(stmt, f) for f in ("value", "test", "iter")
            if getattr(stmt, f, None) is not None]
    return any(isinstance(n, ast.NamedExpr) and n.target.id == name
               for e in expr for n in ast.walk(e))


def _target_names(t: ast.AST) -> set:
    if isinstance(t, ast.Name):
        return {t.id}
    if isinstance(t, ast.Starred):
        return _target_names(t.value)
    if isinstance(t, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(e) for e in t.elts)) if t.elts else set()
    return set()


def _fields(decl: Any) -> dict:
    """A :class:`~dpaudit.spec.Declaration`'s claim fields as the child reports them."""
    return {"epsilon": decl.epsilon, "delta": decl.delta, "size": decl.size,
            "neighbours": None if decl.neighbours is None else decl.neighbours.value,
            "domain": None if decl.domain is None else (decl.domain.lo, decl.domain.hi),
            "output": None if decl.output is None else decl.output.value}


def _shown(name: str, value: Any) -> str:
    if name == "domain" and isinstance(value, (tuple, list)) and len(value) == 2:
        return f"({value[0]:g}, {value[1]:g})" if all(isinstance(v, (int, float)) for v in value) \
            else repr(tuple(value))
    return repr(value)


def reconcile(source: Optional[SourceDeclaration], reported: Optional[Mapping[str, Any]],
              *, path: str) -> tuple[dict, tuple]:
    """The declaration to audit, as :func:`dpaudit.spec.mechanism` keywords, and the fields taken
    from the child unchecked (``source`` could not say: no decorator in the source, or an
    argument that is not a literal).

    Raises :class:`~dpaudit.errors.LoadError` when the source's literal declaration and the
    child's report disagree (the audited code tampered with dpaudit in the sandbox), or when the
    source's literal declaration is itself invalid (the same message the import would give)."""
    from dpaudit.spec import Declaration, float_policy_of

    reported = {k: v for k, v in (reported or {}).items() if k in CLAIM_FIELDS and v is not None}
    if source is None or not source.found:
        return dict(reported), tuple(reported)
    literal = {k: v for k, v in source.literal.items() if k in CLAIM_FIELDS + POLICY_FIELDS + CURVE_FIELDS}
    mixed = _mixed_d_in(source)
    if mixed:
        raise LoadError(f"{path}: line {source.line}: {mixed}")
    literal.update(_recomputed(source, reported, path))
    try:
        stated = _fields(Declaration.make(**literal))
    except DpauditError as exc:
        raise LoadError(f"{path}: line {source.line}: {exc}") from None
    stated = {k: v for k, v in stated.items() if k in literal}
    complete = not (set(source.opaque) - set(literal))
    for name in CLAIM_FIELDS:
        said, got = stated.get(name), reported.get(name)
        if name in stated:
            if not _same(said, got):
                raise LoadError(
                    f"the sandbox child reported {name} {_shown(name, got) if got is not None else 'none'} "
                    f"but the source declares {_shown(name, said)} (the audited file tampered "
                    f"with dpaudit in the sandbox)")
        elif got is not None and complete:
            raise LoadError(f"the sandbox child reported {name} {_shown(name, got)} but the source "
                            f"declares none (the audited file tampered with dpaudit in the sandbox)")
    out = {k: v for k, v in literal.items() if k in CLAIM_FIELDS}  # the source's own spelling
    # the float policy as the source spells it (never the child's word: a policy it reported
    # could only weaken the audit, so a policy that is not a literal is the default, "error")
    words = {k: v for k, v in literal.items() if k in POLICY_FIELDS}
    if words:
        out["float"] = float_policy_of(**words)
    out.update({k: v for k, v in literal.items() if k in CURVE_FIELDS})
    unchecked = []
    for name in CLAIM_FIELDS:
        if name not in out and name in reported:
            out[name] = reported[name]
            unchecked.append(name)
    return out, tuple(unchecked)


def _map_inputs(text: str) -> set:
    """The literal ``d_in`` of every ``.map(d_in)`` call in a claim's expression text."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {_distance(n.args[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "map"
            and len(n.args) == 1 and isinstance(n.args[0], ast.Constant)}


def _distance(v: Any) -> str:
    """A ``d_in`` as text, one text a number (``1`` and ``1.0`` are one distance)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return format(float(v), "g")
    return repr(v)


def _mixed_d_in(source: SourceDeclaration) -> Optional[str]:
    """Why claim fields computed from OpenDP's map at different ``d_in`` make no claim, or None:
    ``epsilon=meas.map(2)[0], delta=meas.map(1)[1]`` pairs the ε of one distance with the δ of
    another (a probe took it as written)."""
    inputs = {name: _map_inputs(text) for name, (text, _) in source.computed.items()}
    used = {d for ds in inputs.values() for d in ds}
    if len(used) <= 1:
        return None
    named = ", ".join(f"{name} at d_in = {' and '.join(sorted(ds))}" for name, ds in sorted(inputs.items()) if ds)
    return (f"the claim's parts come from the map at different input distances ({named}): a claim "
            f"is one map's value at one d_in; use one, e.g. EPS, DELTA = meas.map(1)")


def _recomputed(source: SourceDeclaration, reported: Mapping[str, Any], path: str) -> dict:
    """The claim fields the source computes with OpenDP's map, recomputed from OpenDP alone in a
    fresh process (:func:`dpaudit.execution.computed_claims.recompute`); a field that cannot be
    recomputed is left out (then taken from nobody: refused unless a flag gives it)."""
    from dpaudit.execution.computed_claims import recompute_measured

    out = {}
    for name, (text, program) in source.computed.items():
        value, _, measure = recompute_measured(program)
        if value is None:
            continue
        wrong = _wrong_measure(name, text, value, measure)
        if wrong:
            raise LoadError(f"{path}: line {source.line}: {wrong}")
        out[name] = value
    return out


def _wrong_measure(name: str, text: str, value: float, measure: Optional[str]) -> Optional[str]:
    """Why ``name=text`` is not the claim it names, or None: OpenDP's Gaussian mechanism is
    ρ-zCDP, and its map's 0.5 read as ε = 0.5 made a correct Gaussian look broken. Only the
    mismatch the measure proves is refused (its whole name, e.g. ``ZeroConcentratedDivergence``,
    ``Approximate(MaxDivergence)``): ρ declared as ε or δ, or ``rho`` from a measure that is not
    zCDP; ε and δ from any other measure stay as they were (a conversion's ``.epsilon(δ)``)."""
    kind = str(measure or "").strip()
    if not kind:
        return None
    if name != "rho" and kind == ZCDP_MEASURE:
        return (f"{name}={text} is the map of a measurement whose output measure is {kind}: its "
                f"{value!r} is the ρ of ρ-zCDP, not the {name} declared; write rho={text}")
    if name == "rho" and kind != ZCDP_MEASURE:
        return (f"rho={text} is the map of a measurement whose output measure is {kind}, not "
                f"zCDP: its {value!r} is no ρ; declare what it is (epsilon= for MaxDivergence)")
    return None


def computed_text(source: Optional[SourceDeclaration], declared: Mapping[str, Any]) -> dict:
    """``{"epsilon": "meas.map(1.0) = 0.5"}`` for the claim fields the source computed with
    OpenDP's map and dpaudit recomputed (what the verdict line and the reports show)."""
    if source is None:
        return {}
    return {name: f"{text} = {declared[name]!r}" for name, (text, _) in source.computed.items()
            if declared.get(name) is not None and name not in source.literal}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    return a == b
