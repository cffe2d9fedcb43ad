"""The sensitivity searches that left the test suite at full length: the same tests, longer searches.

tests/property/test_sensitivity_refutations.py (its three slow tests),
tests/property/test_sensitivity_preprocessed.py and the whole-range search of
tests/property/test_spf_float_limits.py search each function over ``EXAMPLES`` neighbouring pairs
(a module constant: 250, 250 and 500 in the suite, where every search still reaches its bound and
refutes its power control). This runs those very test functions with ``EXAMPLES`` set to the
length the suite used before (1,000, 1,000 and 2,000), so the longer searches keep being run and
their results recorded:
a bound refuted, a ratio below the test's floor (the search no longer reaches the bound), or a
power control no longer refuted shows as a failed test here. Each test's seeds are its own
(hypothesis derandomised, as in the suite's ``ci`` profile).

Run::

    nice python benchmarks/property_searches.py            # results/property_searches.{json,txt}
    nice python benchmarks/property_searches.py --scale 0.25 --quick   # about the suite's lengths
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
import time

from hypothesis import settings

from _record import ROOT, cpu_seconds, emit, machine, save

TESTS = ROOT / "tests" / "property"
#: test module: (the tests to run, or None for all; the search length the suite used before)
MODULES = {
    "test_sensitivity_refutations": (("test_planted_bugs_only_break_where_the_bug_is",
                                      "test_quantile_utility_of_seed_004",
                                      "test_duff_utility_has_sensitivity_one"), 1_000),
    "test_sensitivity_preprocessed": (None, 1_000),
    "test_spf_float_limits": (("test_search_over_the_whole_float_range_does_not_refute",), 2_000),
}


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"_ps_{name}", TESTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _cases(module, only) -> list[tuple[str, object, dict]]:
    """(id, test function, keyword arguments) of every case of the module's tests to run."""
    out = []
    for name, fn in inspect.getmembers(module, inspect.isfunction):
        if not name.startswith("test_") or (only is not None and name not in only):
            continue
        marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
        if not marks:
            out.append((name, fn, {}))
            continue
        (mark,) = marks
        argnames = [a.strip() for a in mark.args[0].split(",")]
        for value in mark.args[1]:
            value = value.values if hasattr(value, "values") else value
            value = value if isinstance(value, tuple) else (value,)
            out.append((f"{name}[{'-'.join(map(str, value))}]", fn, dict(zip(argnames, value))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="a factor on every search length")
    parser.add_argument("--quick", action="store_true", help="write results/property_searches_quick.*")
    args = parser.parse_args()
    settings.register_profile("ci", derandomize=True, database=None, deadline=None)
    settings.load_profile("ci")
    record = {"machine": machine(), "scale": args.scale, "quick": args.quick, "cases": {}}
    lines: list[str] = []
    emit(lines, "each test run with its module's EXAMPLES set to its length; pass = the test's assertions hold")
    failed = 0
    for name, (only, length) in MODULES.items():
        module = _module(name)
        suite, module.EXAMPLES = module.EXAMPLES, max(1, round(length * args.scale))
        record[name] = {"examples": module.EXAMPLES, "suite_examples": suite}
        emit(lines, f"{name}: EXAMPLES = {module.EXAMPLES} (the suite: {record[name]['suite_examples']})")
        for case, fn, kw in _cases(module, only):
            cpu, wall = cpu_seconds(), time.monotonic()
            try:
                fn(**kw)
                outcome = "pass"
            except AssertionError as exc:
                outcome, failed = f"FAIL: {str(exc).splitlines()[0][:160]}", failed + 1
            took = {"cpu_s": round(cpu_seconds() - cpu, 2), "wall_s": round(time.monotonic() - wall, 2)}
            record["cases"][f"{name}::{case}"] = {"outcome": outcome, **took}
            emit(lines, f"{name}::{case}: {outcome} ({took['cpu_s']:.1f} CPU s)")
    emit(lines, f"{len(record['cases']) - failed} of {len(record['cases'])} pass")
    for p in save("property_searches", record, lines):
        print("wrote", p.relative_to(ROOT))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
