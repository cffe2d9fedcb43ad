"""dpaudit.loader: finding a mechanism in a third-party file, and one clear LoadError otherwise."""

import textwrap

import pytest

from dpaudit.errors import LoadError
from dpaudit.loader import load_mechanism, module_name_for, parse_target


def write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def one_line_error(target, function=None) -> str:
    with pytest.raises(LoadError) as info:
        load_mechanism(target, function)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_parse_target_splits_only_an_identifier_suffix():
    assert parse_target("a/b.py:noisy_sum") == ("a/b.py", "noisy_sum")
    assert parse_target("a/b.py:Cls.method") == ("a/b.py", "Cls.method")
    assert parse_target("a/b.py") == ("a/b.py", None)
    assert parse_target("C:\\x\\b.py") == ("C:\\x\\b.py", None)
    with pytest.raises(LoadError, match="empty FUNCTION"):
        parse_target("b.py:")


def test_finds_the_decorated_function(tmp_path):
    path = write(tmp_path, "dec.py", """
        import dpaudit
        def helper(x):
            return x
        @dpaudit.mechanism(epsilon=1.0)
        def noisy(data, rng):
            return float(data.sum() + rng.laplace())
        def mechanism(data, rng):
            return 0.0
    """)
    loaded = load_mechanism(path)
    assert (loaded.function, loaded.found_by) == ("noisy", "decorated")
    assert loaded.func.__name__ == "noisy"
    assert loaded.target.endswith("dec.py:noisy")


def test_falls_back_to_a_function_named_mechanism(tmp_path):
    path = write(tmp_path, "plain.py", """
        from dpaudit import mechanism as declare  # the decorator itself is never a candidate
        def helper(x):
            return x
        def mechanism(data, rng):
            return float(data.sum())
    """)
    loaded = load_mechanism(path)
    assert (loaded.function, loaded.found_by) == ("mechanism", "conventional")


def test_the_dpaudit_decorator_imported_as_mechanism_is_not_a_mechanism(tmp_path):
    path = write(tmp_path, "imp.py", """
        from dpaudit import mechanism
        def helper(data, rng):
            return 0.0
    """)
    assert "no mechanism found" in one_line_error(path)


def test_function_by_name_and_dotted_path(tmp_path):
    path = write(tmp_path, "named.py", """
        class Mech:
            @staticmethod
            def run(data, rng):
                return 1.0
        def a(data, rng):
            return 0.0
    """)
    assert load_mechanism(f"{path}:a").func.__name__ == "a"
    assert load_mechanism(path, "Mech.run").func.__name__ == "run"
    assert "no function named 'b'" in one_line_error(f"{path}:b")
    assert "functions in it: a" in one_line_error(f"{path}:b")


def test_sibling_modules_import(tmp_path):
    write(tmp_path, "helpers_for_loader_test.py", "SCALE = 2.0\n")
    path = write(tmp_path, "uses_sibling.py", """
        from helpers_for_loader_test import SCALE
        def mechanism(data, rng):
            return SCALE
    """)
    assert load_mechanism(path).func(None, None) == 2.0


def test_module_name_is_stable_and_distinct_per_path(tmp_path):
    a, b = str(tmp_path / "x" / "m.py"), str(tmp_path / "y" / "m.py")
    assert module_name_for(a) == module_name_for(a) != module_name_for(b)


# -- bad input: one clear line each -----------------------------------------------------------

def test_nonexistent_file(tmp_path):
    message = one_line_error(str(tmp_path / "missing.py"))
    assert message.endswith("missing.py: no such file")


def test_a_folder_is_not_a_file(tmp_path):
    assert "not a file" in one_line_error(str(tmp_path))


def test_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path, "syn.py", "def mechanism(data, rng):\n    return (\n")
    message = one_line_error(path)
    assert "syn.py:2: syntax error" in message or "syn.py:3: syntax error" in message


def test_import_error_names_the_exception_and_line(tmp_path):
    path = write(tmp_path, "imperr.py", "x = 1\nimport no_such_module_dpaudit_test\n")
    message = one_line_error(path)
    assert "imperr.py:2: importing it raised ModuleNotFoundError" in message
    assert "no_such_module_dpaudit_test" in message


def test_sys_exit_at_import_is_a_load_error(tmp_path):
    path = write(tmp_path, "exits.py", "import sys\nsys.exit(4)\n")
    assert "importing it raised SystemExit(4)" in one_line_error(path)


def test_no_mechanism_found_lists_functions(tmp_path):
    path = write(tmp_path, "none.py", """
        def f(data, rng):
            return 0.0
        def g(data, rng):
            return 1.0
    """)
    message = one_line_error(path)
    assert "no mechanism found" in message and "@dpaudit.mechanism" in message
    assert "functions in it: f, g" in message


def test_two_candidates_without_function_lists_them(tmp_path):
    path = write(tmp_path, "two.py", """
        import dpaudit
        @dpaudit.mechanism(epsilon=1.0)
        def first(data, rng):
            return 0.0
        @dpaudit.mechanism(epsilon=2.0)
        def second(data, rng):
            return 0.0
    """)
    message = one_line_error(path)
    assert "2 decorated mechanisms (first, second)" in message
    assert f"{path}:first" in message
    assert load_mechanism(f"{path}:second").func.__name__ == "second"


def test_not_callable(tmp_path):
    path = write(tmp_path, "notcall.py", "mechanism_value = 3\n")
    assert "'mechanism_value' is a int, not a function" in one_line_error(f"{path}:mechanism_value")
