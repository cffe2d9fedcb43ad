"""``pytest --dpaudit``: audit definitions become test items; without the flag nothing changes."""

import json
import textwrap

import pytest

AUDITS = textwrap.dedent('''\
    from dpaudit.suite import sampled

    def broken_factory():
        raise RuntimeError("the mechanism could not be built")

    AUDITS = [
        sampled("ctrl.crashes", broken_factory, expected="error", description="a control that must error"),
        sampled("ref.should-pass", broken_factory, description="expected not refuted, but it errors"),
    ]
''')


@pytest.fixture
def project(pytester):
    pytester.makepyfile(**{"audits/crashy": AUDITS})
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    return pytester


def test_options_all_start_with_dpaudit(pytester):
    out = pytester.runpytest("--help").stdout.str()
    section = out[out.index("differential-privacy audits (dpaudit)"):]
    section = section[: section.index("\n\n")]
    opts = [w for w in section.split() if w.startswith("--")]
    assert {"--dpaudit", "--dpaudit-path", "--dpaudit-id", "--dpaudit-seed", "--dpaudit-json",
            "--dpaudit-html"} <= {o.split("=")[0].rstrip(",") for o in opts}
    assert all(o.startswith("--dpaudit") for o in opts)


@pytest.mark.slow
def test_without_the_flag_audits_are_ignored_and_nothing_heavy_is_imported(project):
    project.makeconftest(textwrap.dedent('''\
        import sys

        def pytest_sessionfinish(session):
            heavy = [m for m in ("numpy", "dpaudit.suite", "dpaudit.report", "jinja2", "matplotlib")
                     if m in sys.modules]
            print("HEAVY-MODULES", heavy)
    '''))
    project.makepyfile(**{"audits/explodes": "raise RuntimeError('imported without --dpaudit')\n"})
    result = project.runpytest_subprocess("-s", "audits", "test_plain.py")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*HEAVY-MODULES []"])
    result.stdout.no_fnmatch_line("*dpaudit*audits*")


def test_audits_are_items_with_readable_failures(project):
    result = project.runpytest("--dpaudit", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)  # test_plain, ctrl.crashes; ref.should-pass fails
    out = result.stdout.str()
    assert "audits/crashy.py::ctrl.crashes PASSED" in project.runpytest("--dpaudit", "-v").stdout.str()
    assert "dpaudit audit ref.should-pass: expected NOT REFUTED, got ERROR" in out
    assert "RuntimeError: the mechanism could not be built" in out
    assert "reproduce: dpaudit audit audits/crashy.py --id ref.should-pass --seed 20261122" in out
    assert "Traceback" not in out and "def runtest" not in out
    assert "2 audits, 1 with the expected verdict, 1 not" in out


def test_select_by_id_and_by_path(project):
    result = project.runpytest("--dpaudit", "--dpaudit-id", "ctrl.crashes")
    result.assert_outcomes(passed=2)
    result = project.runpytest("--dpaudit", "audits/crashy.py", "--dpaudit-seed", "7", "-v")
    result.assert_outcomes(passed=1, failed=1)
    assert "--seed 7" in result.stdout.str()


def test_a_broken_audit_file_is_one_clear_collection_error(pytester):
    pytester.makepyfile(**{"audits/bad": "def f(:\n"})
    result = pytester.runpytest("--dpaudit")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*dpaudit: *bad.py:1: syntax error*"])


def test_bad_seed_and_missing_folder_are_usage_errors(pytester):
    result = pytester.runpytest("--dpaudit")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dpaudit: no audit folder*"])
    pytester.mkdir("audits")
    result = pytester.runpytest("--dpaudit", "--dpaudit-seed", "minus one")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dpaudit-seed must be an integer*"])


def test_session_report_carries_id_and_expected(project):
    project.runpytest("--dpaudit", "--dpaudit-json", "run.json", "--dpaudit-html", "run.html")
    run = json.loads((project.path / "run.json").read_text())
    assert [(r["id"], r["verdict"], r["expected"]) for r in run["results"]] == [
        ("ctrl.crashes", "error", "error"), ("ref.should-pass", "error", "not_refuted")]
    assert "ref.should-pass" in (project.path / "run.html").read_text()
