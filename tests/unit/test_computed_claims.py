"""A claim the source computes with OpenDP's own map is recomputed from OpenDP alone, in a fresh
process, and a file that forges it is caught (dpaudit/execution/computed_claims.py)."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest
from cli_in_process import dpaudit as in_process

pytest.importorskip("opendp")

from dpaudit.execution.computed_claims import recipe, recompute  # noqa: E402
from dpaudit.execution.isolation import landlock_abi  # noqa: E402

HEADER = textwrap.dedent('''
    import opendp.prelude as dp
    import dpaudit

    dp.enable_features("contrib")
    SPACE = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    meas = dp.m.make_laplace(*SPACE, scale=2.0)
''')


def _expr(source: str, name: str = "CLAIM") -> tuple:
    tree = ast.parse(source)
    (node,) = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == name]
    return node.value, tree


def test_a_map_claim_is_recomputed_from_the_sources_opendp_calls_alone():
    expr, tree = _expr(HEADER + "CLAIM = meas.map(1.0)\n")
    program = recipe(expr, tree)
    assert program is not None and "import dpaudit" not in program
    assert program.splitlines()[-1] == "__claim__ = meas.map(1.0)"
    value, where = recompute(program)
    assert value == 0.5 and where.startswith("OpenDP ")
    # the recipe is the audited file's text: it runs under the sandbox child's own isolation
    assert ("isolated: landlock" if landlock_abi() >= 1 else "isolated: process only") in where, where


@pytest.mark.parametrize("line", [
    "def scale():\n    return 2.0\nm2 = dp.m.make_laplace(*SPACE, scale=scale())\nCLAIM = m2.map(1.0)\n",
    "CLAIM = (lambda: meas)().map(1.0)\n",
    "meas = meas\nCLAIM = meas.map(1.0)\n",                 # bound twice
    "CLAIM = meas.__class__.map(meas, 1.0)\n",            # a private attribute
    "CLAIM = [m for m in (meas,)][0].map(1.0)\n",
    # a private module (the native calls) or opendp.extras is never a root of a recipe
    "from opendp._lib import import_optional_dependency\nCLAIM = import_optional_dependency('this')\n",
    "import opendp.extras.polars as pl\nCLAIM = pl.foo(1.0)\n",
])
def test_what_needs_the_files_own_code_is_not_recomputable(line):
    expr, tree = _expr(HEADER + line)
    assert recipe(expr, tree) is None


APPROX = HEADER + textwrap.dedent('''
    approx = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*SPACE, scale=2.0)),
                                 delta=1e-6)
''')


@pytest.mark.parametrize("lines, name, expected", [
    ("EPS, DELTA = approx.map(1.0)\n", "EPS", 0), ("EPS, DELTA = approx.map(1.0)\n", "DELTA", 1),
    ("CLAIM = approx.map(1.0)[1]\n", "CLAIM", 1),
])
def test_an_approximate_dp_maps_parts_are_recomputed(lines, name, expected):
    # ``EPS, DELTA = meas.map(1)`` and ``meas.map(1)[0]`` were refused as "not a literal, nor
    # OpenDP's map …", though their arguments are literals: an approximate-DP map is a pair
    tree = ast.parse(APPROX + lines)
    program = recipe(ast.Name(name, ast.Load()), tree)
    assert program is not None, lines
    value, _ = recompute(program)
    pair = recompute(recipe(ast.parse("approx.map(1.0)[0]", mode="eval").body, tree))[0], 1e-6
    assert value == pytest.approx(pair[expected], rel=1e-12) and 1.0 < pair[0] < 5.0


def test_a_pair_or_a_subscript_of_an_opendp_object_is_not_a_claim():
    tree = ast.parse(APPROX)
    of = lambda text: recipe(ast.parse(text, mode="eval").body, tree)  # noqa: E731
    value, why = recompute(of("approx.map(1.0)"))
    assert value is None and "write epsilon=meas.map(d_in)[0], delta=meas.map(d_in)[1]" in why
    # only a builtin tuple is subscripted: an OpenDP object's own __getitem__ never runs
    value, why = recompute(of("dp.atom_domain(T=float)[0]"))
    assert value is None and "a subscript of something other than a tuple by an int" in why
    assert of("approx.map(1.0)[0:1]") is None and of("approx.map(1.0)[-1]") is None


def test_the_recomputing_process_calls_nothing_but_opendp():
    # dp.re is the re module, reachable from OpenDP's prelude: the interpreter refuses its call
    value, why = recompute("import opendp.prelude as dp\n__claim__ = dp.re.escape('1')")
    assert value is None and "not OpenDP's" in why


def _check(tmp_path, body: str) -> tuple[int, dict, str]:
    path = tmp_path / "mech.py"
    path.write_text(HEADER + body)
    out = tmp_path / "out.json"
    done = in_process("check", path, "--samples", "2000", "--no-replay", "--json", out, "--quiet",
                      cwd=tmp_path, env={"RUST_LIB_BACKTRACE": "0"})  # the entry point, in this process
    rec = json.loads(out.read_text())["results"][0] if out.exists() else {}
    return done.returncode, rec, done.stdout + done.stderr


DECLARED = textwrap.dedent('''

    @dpaudit.mechanism(epsilon=meas.map(1.0), neighbours="linf", domain=(0.0, 1.0), size=1)
    def release(data, rng):
        return meas(float(data[0]))
''')


@pytest.mark.slow
def test_check_takes_a_map_claim_and_says_where_it_came_from(tmp_path):
    code, rec, text = _check(tmp_path, DECLARED)
    assert rec["claim"]["epsilon"] == 0.5, text
    assert rec["claim_computed"] == {"epsilon": "meas.map(1.0) = 0.5"}


@pytest.mark.slow
def test_a_file_that_forges_its_map_claim_is_caught(tmp_path):
    # the file replaces OpenDP's map in its own process: the child reports ε = 100, the fresh
    # process that runs OpenDP alone says 0.5
    forged = "dp.Measurement.map = lambda self, d_in: 100.0\n" + DECLARED
    code, rec, text = _check(tmp_path, forged)
    assert rec.get("verdict") == "error" or code != 0
    assert "tampered" in text and "100" in text


@pytest.mark.parametrize("program", [
    # a module beside OpenDP's own, reached as an attribute of the prelude, even unused
    "import opendp.prelude as dp\nx = dp.np\n__claim__ = 1.0",
    # OpenDP's example datasets are fetched from the network: not a map
    "import opendp.prelude as dp\n__claim__ = dp.examples.get_california_pums_path()",
    # user-defined functions need this feature: a recipe never enables it
    "import opendp.prelude as dp\ndp.enable_features('contrib', 'honest-but-curious')\n__claim__ = 1.0",
    # deserialize unpickles what a Polars plan holds: a hostile review ran its own code through
    # it, unsandboxed, and read dpaudit's environment; only constructors are called now
    "import opendp.prelude as dp\ndp.enable_features(*dp.deserialize('[\"contrib\"]'))\n__claim__ = 1.0",
    "import opendp.prelude as dp\n__claim__ = dp.serialize(1.0)",
    "from opendp._lib import import_optional_dependency\n__claim__ = import_optional_dependency('this')",
    "import opendp.extras.examples as ex\n__claim__ = 1.0",
])
def test_the_recomputing_process_reaches_nothing_but_opendp(program):
    value, why = recompute(program)
    assert value is None and ("not OpenDP's" in why or "honest-but-curious" in why
                              or "constructors" in why or "import" in why or "private" in why), why


# -- what the map's number is: its measurement's output measure ---------------------------------

ZCDP = textwrap.dedent('''
    import dpaudit, opendp.prelude as dp

    dp.enable_features("contrib")
    SPACE = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance()
    meas = SPACE >> dp.t.then_sum() >> dp.m.then_gaussian(scale=1.0)
''')


def test_the_recomputed_map_says_its_measure_and_a_mixed_import_line_is_read():
    # ``import dpaudit, opendp.prelude as dp`` on one line: its OpenDP name is a root
    from dpaudit.execution.computed_claims import recompute_measured

    expr, tree = _expr(ZCDP + "CLAIM = meas.map(1)\n")
    program = recipe(expr, tree)
    assert program is not None and "dpaudit" not in program
    value, _, measure = recompute_measured(program)
    assert abs(value - 0.5) < 1e-6 and measure == "ZeroConcentratedDivergence"
    expr, tree = _expr(HEADER + "CLAIM = meas.map(1.0)\n")
    assert recompute_measured(recipe(expr, tree))[2] == "MaxDivergence"


def _declared(tmp_path, keyword: str):
    from dpaudit.execution.declared import read_declaration, reconcile

    path = tmp_path / "m.py"
    path.write_text(ZCDP + textwrap.dedent(f'''
        @dpaudit.mechanism({keyword}=meas.map(1), neighbours="add-remove", domain=(0.0, 1.0), size=10)
        def noisy_sum(data):
            return meas([float(v) for v in data])
    '''), encoding="utf-8")
    source = read_declaration(str(path), "noisy_sum")
    return reconcile(source, {"neighbours": "add-remove", "domain": (0.0, 1.0), "size": 10},
                     path=str(path))


def test_a_zcdp_map_declared_as_epsilon_is_refused_and_as_rho_is_the_claim(tmp_path):
    # OpenDP's Gaussian is ρ-zCDP: its map's 0.5 read as ε = 0.5 made a correct mechanism look
    # broken (a library user's probe); as rho it is recomputed and audited
    from dpaudit.errors import LoadError

    with pytest.raises(LoadError, match=r"output measure is ZeroConcentratedDivergence.*write rho=meas.map\(1\)"):
        _declared(tmp_path, "epsilon")
    declared, unchecked = _declared(tmp_path, "rho")
    assert abs(declared["rho"] - 0.5) < 1e-6 and "epsilon" not in declared and not unchecked


def test_an_approximate_dp_maps_parts_are_still_taken(tmp_path):
    # OpenDP 0.16 names the measure Approximate(MaxDivergence): its (ε, δ) parts are the claim
    from dpaudit.execution.declared import read_declaration, reconcile

    path = tmp_path / "m.py"
    path.write_text(HEADER + textwrap.dedent('''
        approx = dp.c.make_approximate(meas)

        @dpaudit.mechanism(epsilon=approx.map(1.0)[0], delta=approx.map(1.0)[1], neighbours="linf",
                           domain=(0.0, 1.0), size=1)
        def release(data, rng):
            return meas(float(data[0]))
    '''), encoding="utf-8")
    declared, _ = reconcile(read_declaration(str(path), "release"),
                            {"epsilon": 0.5, "delta": 0.0, "neighbours": "linf", "domain": (0.0, 1.0),
                             "size": 1}, path=str(path))
    assert declared["epsilon"] == 0.5 and declared["delta"] == 0.0

