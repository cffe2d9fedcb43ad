"""dpaudit.validation: every check of a value a user gives lives there once, and the modules that
always offered a check hand out that one function (the same object, not a copy)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from dpaudit import validation
from dpaudit.errors import InvalidArgument

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module, names", [
    ("dpaudit.claims", ["check_epsilon", "check_delta", "check_size", "check_confidence"]),
    ("dpaudit.rng", ["check_seed", "check_generator", "DEFAULT_SEED"]),
    ("dpaudit.config", ["parse_real", "parse_integer", "parse_seed", "parse_seconds", "MAX_SECONDS"]),
    ("dpaudit.auditor", ["MIN_SAMPLES", "MAX_SAMPLES"]),
])
def test_old_names_are_the_validation_modules_own(module, names):
    import importlib

    m = importlib.import_module(module)
    for name in names:
        assert getattr(m, name) is getattr(validation, name), f"{module}.{name}"


def test_no_other_module_defines_a_check_or_parse_of_its_own():
    """The checks the issue found in six places are defined in dpaudit.validation only."""
    moved = {"check_epsilon", "check_delta", "check_size", "check_confidence", "check_seed",
             "check_generator", "_check_samples", "_check_timeout", "_check_size",
             "_check_callable", "_check_bound", "parse_real", "parse_integer", "parse_seed",
             "parse_seconds", "_samples", "_memory", "_bound"}
    mine = ["claims.py", "rng.py", "config.py", "auditor.py", "sensitivity/problem.py"]
    for rel in mine:
        tree = ast.parse((ROOT / "dpaudit" / rel).read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert not defined & moved, f"dpaudit/{rel} defines {sorted(defined & moved)}"


def test_settings_import_no_engine():
    """The old cycle auditor → reproduce → config → auditor (config imported the auditor through
    importlib for the sample limits, which validation holds now)."""
    tree = ast.parse((ROOT / "dpaudit" / "config.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {node.args[0].value for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and getattr(node.func, "attr", None) == "import_module"
                 and node.args and isinstance(node.args[0], ast.Constant)}
    assert not {m for m in imported if m.startswith(("dpaudit.auditor", "dpaudit.auditing",
                                                     "dpaudit.search", "dpaudit.estimators"))}


@pytest.mark.parametrize("bad", [0, -1, -0.0, math.inf, math.nan])
def test_the_seconds_checks_refuse_the_same_values(bad):
    """One rule for "seconds > 0": the Python check (a timeout argument) and the parser of a flag."""
    with pytest.raises(InvalidArgument, match="timeout must be None or a finite number of seconds > 0"):
        validation.check_seconds(bad, "timeout")
    with pytest.raises(InvalidArgument, match="--timeout must be a number of seconds > 0"):
        validation.parse_seconds("--timeout", bad)


def test_the_seconds_checks_take_the_same_values():
    assert validation.check_seconds(None) is None
    assert validation.check_seconds(2) == validation.parse_seconds("--timeout", "2") == 2.0
    with pytest.raises(InvalidArgument, match="at most 1e9"):
        validation.parse_seconds("--timeout", "1e10")


def test_counts_samples_and_records():
    assert validation.check_samples(None) is None and validation.check_samples(1000) == 1000
    with pytest.raises(InvalidArgument, match="samples must be None or an integer >= 1000"):
        validation.check_samples(999)
    with pytest.raises(InvalidArgument, match="at most 1e15"):
        validation.check_samples(10 ** 16)
    assert validation.parse_samples("--samples", "2e5") == 200_000
    with pytest.raises(InvalidArgument, match="examples must be an integer >= 1"):
        validation.check_count(0, "examples")
    with pytest.raises(InvalidArgument, match=r"size must be an integer >= 1 \(the largest dataset\)"):
        validation.check_records(0, "add-remove")
    with pytest.raises(InvalidArgument, match=r"records per dataset under replace"):
        validation.check_records(0, "replace")


def test_typed_values():
    assert validation.parse_memory("512MiB") == 512 * 1024 ** 2
    with pytest.raises(InvalidArgument, match="at least 64M"):
        validation.parse_memory("1M")
    assert validation.parse_interval("--domain", "-10:10") == (-10.0, 10.0)
    with pytest.raises(InvalidArgument, match="finite LO < HI"):
        validation.parse_interval("--domain", "1:0")
    assert validation.parse_bound("--sensitivity", "1_000") == 1000.0
    assert validation.check_bound(0) == 0.0
    with pytest.raises(InvalidArgument, match="bound must be a finite number >= 0"):
        validation.check_bound(-1)
    assert validation.parse_choice("--isolation", " Strict ", ("strict", "process")) == "strict"
    with pytest.raises(InvalidArgument, match="strict | process"):
        validation.parse_choice("--isolation", "loose", ("strict", "process"))
    assert validation.parse_integer("--examples", "7", "an integer in [1, 10]", 1, 10) == 7
    with pytest.raises(InvalidArgument, match=r"an integer in \[1, 10\]"):
        validation.parse_integer("--examples", "11", "an integer in [1, 10]", 1, 10)
    with pytest.raises(InvalidArgument, match="executor must be None or an object with run"):
        validation.check_executor(object())


def test_an_epsilon_that_is_an_approximate_dp_maps_pair_says_how_to_split_it():
    # epsilon=meas.map(1) on an approximate-DP measurement gave "must be a finite number > 0,
    # got (2.419…, 1e-06)" and no way forward
    from dpaudit.validation import check_epsilon

    with pytest.raises(InvalidArgument, match=r"a pair \(ε, δ\), as an approximate-DP map gives: "
                                              r"write epsilon=m.map\(d_in\)\[0\], delta=m.map\(d_in\)\[1\]"):
        check_epsilon((2.419, 1e-6))
    with pytest.raises(InvalidArgument, match=r"got \(1, 2, 3\)$"):
        check_epsilon((1, 2, 3))
