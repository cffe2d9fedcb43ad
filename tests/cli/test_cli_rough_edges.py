"""The command line's rough edges, smoothed: one ``dpaudit:`` prefix and a "did you mean" on a
usage error, an exit code of its own for an ERROR of the audited code (6, not the usage error's
3), library targets (``lib:``) checked from the command line with every report format, and
reproduce lines that name files relative to the project root (the pytest fixture's)."""

import importlib.util
import json
import os
import shlex
import subprocess
import sys
import textwrap

import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process

from dpaudit.cli import run
from dpaudit.exitcodes import ExitCode

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["--samples", "2000"]


def dpaudit(*args, cwd=ROOT):
    return in_process(*args, cwd=cwd)  # the command's entry point in this process


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# -- usage errors: one prefix, one line, a suggestion ---------------------------------------------

@pytest.mark.parametrize("argv, line", [
    (["chek", "examples/laplace_sum.py"],
     "dpaudit: error: unknown command 'chek'; did you mean 'check'? (commands: check, audit, verify, "
     "report, list, sweep, train-audit)"),
    (["check", "examples/laplace_sum.py", "--epslion", "1"],
     "dpaudit: error: unrecognized arguments: --epslion 1; did you mean --epsilon?"),
    (["check", "examples/laplace_sum.py", "--epslion=1", "--sampels=9"],
     "dpaudit: error: unrecognized arguments: --epslion=1 --sampels=9; did you mean --epsilon or --samples?"),
    (["audit", "--ouT"], "dpaudit: error: unrecognized arguments: --ouT; did you mean --out?"),
    # δ = 1e-400 read as 0.0 and was audited as pure DP without a word
    (["check", "examples/laplace_sum.py", "--delta", "1e-400"],
     "dpaudit: error: --delta must be a number a double can hold (this one underflows to 0; write "
     "0 if 0 is meant), got '1e-400'"),
    # an abbreviation names the one flag it starts (difflib's nearest was --help)
    (["check", "examples/laplace_sum.py", "--eps", "1"],
     "dpaudit: error: unrecognized arguments: --eps 1; did you mean --epsilon?"),
    # a prefix is not the flag: argparse took --sample 2000 as --samples without a word
    (["check", "examples/laplace_sum.py", "--sample", "2000"],
     "dpaudit: error: unrecognized arguments: --sample 2000; did you mean --samples?"),
    (["check", "x.py", "--isolation", "stric"],
     "dpaudit: error: argument --isolation: invalid choice 'stric'; did you mean 'strict'? (choose "
     "from strict, process, none)"),
    (["check"], "dpaudit: error: the following arguments are required: FILE.py[:FUNCTION] (see "
                "dpaudit check --help)"),
    (["frobnicate"], "dpaudit: error: unknown command 'frobnicate' (commands: check, audit, verify, "
                     "report, list, sweep, train-audit)"),
    (["check", "x.py", "--zzz"], "dpaudit: error: unrecognized arguments: --zzz"),
    (["check", "x.py", "--bogus"], "dpaudit: error: unrecognized arguments: --bogus"),  # not --neighbours
])
def test_a_usage_error_is_one_line_with_one_prefix_and_a_suggestion(capsys, argv, line):
    assert run(argv) is ExitCode.USAGE_ERROR
    assert one_line(capsys) == line


def test_help_lists_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        run(["--help"])
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code in ExitCode:
        assert f"  {int(code)}  {code.description}" in out
    assert ExitCode.MECHANISM_ERROR == 6 and len({int(c) for c in ExitCode}) == len(ExitCode)


# -- an ERROR of the audited code is not a usage error --------------------------------------------

RAISES = """
import dpaudit

@dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=5)
def raises(data, rng):
    raise ZeroDivisionError("division by zero")
"""


@pytest.mark.slow
def test_a_raising_mechanism_and_a_usage_error_exit_with_different_codes(tmp_path):
    (tmp_path / "m.py").write_text(RAISES)
    raised = dpaudit("check", "m.py", *TINY, "--json", "r.json", cwd=tmp_path)
    assert raised.returncode == ExitCode.MECHANISM_ERROR == 6, raised.stdout + raised.stderr
    assert ": ERROR" in raised.stdout and "raised ZeroDivisionError" in raised.stdout
    assert json.loads((tmp_path / "r.json").read_text())["results"][0]["verdict"] == "error"
    typo = dpaudit_process("check", "m.py", "--epslion", "1", cwd=tmp_path)  # a fresh process
    assert typo.returncode == ExitCode.USAGE_ERROR == 3
    assert typo.stderr.strip() == "dpaudit: error: unrecognized arguments: --epslion 1; did you mean --epsilon?"


# -- the pytest fixture: reproduce lines from the rootdir, the exit code on the test --------------

FIXTURE_TESTS = """
    import dpaudit

    @dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=4)
    def leaky_sum(data, rng, size=None):
        return data.sum() + rng.laplace(scale=0.1, size=size)

    @dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=4)
    def raises(data, rng):
        raise ValueError("boom")

    def test_leaky(dpaudit_audit):
        dpaudit_audit(leaky_sum, samples=20000)

    def test_raises(dpaudit_audit):
        dpaudit_audit(raises, samples=2000)

    def test_bad_argument(dpaudit_audit):
        dpaudit_audit(leaky_sum, epsilon=-1)
"""


@pytest.mark.slow
def test_the_fixture_names_files_from_the_rootdir_and_records_the_exit_code(pytester):
    pytester.makeini("[pytest]\n")  # the rootdir: where the reproduce line is run from
    sub = pytester.mkpydir("pkg")
    (sub / "test_user.py").write_text(textwrap.dedent(FIXTURE_TESTS))
    result = pytester.runpytest("pkg/test_user.py", "-p", "no:cacheprovider", "--junitxml=j.xml",
                                "--dpaudit-json=f.json")
    result.assert_outcomes(failed=3)
    out = result.stdout.str()
    assert "reproduce: dpaudit check pkg/test_user.py:leaky_sum --epsilon=1" in out
    assert str(pytester.path) not in out.split("reproduce:", 1)[1].splitlines()[0]
    assert "got ERROR (an error in the audited code, exit code 6 in dpaudit check" in out
    junit = (pytester.path / "j.xml").read_text()
    for name, code in (("test_leaky", 1), ("test_raises", 6), ("test_bad_argument", 3)):
        case = junit.split(f'name="{name}"', 1)[1].split("</testcase>", 1)[0]
        assert f'<property name="dpaudit_exit_code" value="{code}" />' in case, case
    records = json.loads((pytester.path / "f.json").read_text())["results"]
    assert {r["location"]["path"] for r in records} == {"pkg/test_user.py"}


def test_a_reproduce_line_names_a_file_below_the_root_relative_to_it(tmp_path):
    from dpaudit.reproduce import ROOT as REPRODUCE_ROOT
    from dpaudit.reproduce import project_path

    inside = tmp_path / "src" / "m.py"
    assert project_path(str(inside)) == str(inside)  # outside the working folder: kept whole
    token = REPRODUCE_ROOT.set(str(tmp_path))
    try:
        assert project_path(str(inside)) == "src/m.py"
    finally:
        REPRODUCE_ROOT.reset(token)


# -- library targets ------------------------------------------------------------------------------

def test_library_targets_parse_into_a_name_and_literal_keywords():
    from dpaudit.errors import InvalidArgument
    from dpaudit.commands.library_check import parse_library_target

    assert parse_library_target("lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))") == (
        "library", "tools.mean", {"epsilon": 1, "bounds": (0, 1)})
    assert parse_library_target("lib:pydp:Count(epsilon=0.5)") == ("library", "Count", {"epsilon": 0.5})
    assert parse_library_target("lib:targets.py:mean") == ("file", "targets.py", {"name": "mean"})
    assert parse_library_target("lib:dir/targets.py") == ("file", "dir/targets.py", {"name": None})
    for bad, said in [("lib:diffprivlib:tools.mean(1)", "KEYWORD=VALUE"),
                      ("lib:diffprivlib:tools.mean(epsilon=eps)", "must be a literal"),
                      ("lib:diffprivlib:tools.mean(", "NAME(KEYWORD=VALUE, ...)"),
                      ("lib:opendp:x", "build it in a file"),
                      ("lib:nothing", "a library target is lib:LIBRARY:NAME")]:
        with pytest.raises(InvalidArgument) as err:
            parse_library_target(bad)
        assert said in str(err.value), (bad, str(err.value))


@pytest.mark.parametrize("argv, said", [
    (["check", "lib:diffprivlib:tools.mean(epsilon=1)", "--epsilon", "2"],
     "dpaudit: error: --epsilon does not apply to a library target"),
    (["check", "lib:diffprivlib:tools.mean(epsilon=1)", "examples/laplace_sum.py"],
     "dpaudit: error: examples/laplace_sum.py: give library targets (lib:...) and files in separate runs"),
    (["check", "lib:targets.py:mean"], "dpaudit: error: lib:targets.py:mean: lib:FILE.py imports the file"),
    (["check", "lib:opendp:then_laplace"], "dpaudit: error: lib:opendp:then_laplace: an OpenDP measurement"),
])
def test_library_target_refusals_are_one_line_and_exit_3(capsys, argv, said):
    assert run(argv) is ExitCode.USAGE_ERROR
    assert one_line(capsys).startswith(said)


@pytest.mark.slow
def test_a_library_target_is_checked_from_the_command_line_with_every_report(tmp_path):
    if importlib.util.find_spec("diffprivlib") is None:  # looked up, not imported here
        pytest.skip("the library adapters need diffprivlib: pip install 'dpaudit[libraries]'")
    target = "lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))"
    files = {k: tmp_path / f"r.{k}" for k in ("json", "html", "junit", "sarif", "markdown")}
    flags = [a for k, f in files.items() for a in (f"--{k}", f)]
    proc = dpaudit("check", target, "--samples", "20000", "--seed", "3", *flags, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("diffprivlib 0.6.6: tools.mean(epsilon=1, bounds=(0, 1)): ")
    assert lines[-1] == f"reproduce: dpaudit check '{target}' --samples=20000 --seed=3 --float=error"
    assert all(f.stat().st_size > 0 for f in files.values())
    (rec,) = json.loads(files["json"].read_text())["results"]
    assert rec["library"]["name"] == "diffprivlib" and rec["verdict"] in ("refuted", "not_refuted")
    rerun = shlex.split(lines[-1].removeprefix("reproduce: "))[1:]  # the line, as a shell reads it
    again = dpaudit(*rerun, "--json", tmp_path / "again.json", cwd=tmp_path)
    (rec2,) = json.loads((tmp_path / "again.json").read_text())["results"]
    assert again.returncode == proc.returncode and rec2["epsilon_lower_bound"] == rec["epsilon_lower_bound"]


@pytest.mark.slow
def test_a_file_of_library_targets_runs_each_in_process(tmp_path):
    if importlib.util.find_spec("diffprivlib") is None:  # looked up, not imported here
        pytest.skip("the library adapters need diffprivlib: pip install 'dpaudit[libraries]'")
    (tmp_path / "targets.py").write_text(textwrap.dedent("""\
        from dpaudit.adapters import diffprivlib

        geometric = diffprivlib.target("mechanisms.Geometric", epsilon=1, sensitivity=1)
        misused = diffprivlib.target("tools.count_nonzero", epsilon=1, neighbours="add-remove")
        """))
    proc = dpaudit("check", "lib:targets.py", "--in-process", "--samples", "20000", "--json", "r.json",
                   cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the misuse: n leaks, true ε = ∞
    recs = json.loads((tmp_path / "r.json").read_text())["results"]
    assert [r["verdict"] for r in recs] == ["not_refuted", "refuted"]
    assert [r["family"]["targets"] for r in recs] == [2, 2]
    # named by the file's own names first (two chains of one metric and measure read alike)
    assert [r["target"].split(" (")[0] for r in recs] == ["targets.py:geometric", "targets.py:misused"]
    assert "reproduce: dpaudit check lib:targets.py:misused --samples=20000 --confidence=0.975 " \
           "--seed=20261122 --in-process --float=error" in proc.stdout


def test_a_report_path_that_is_the_audited_file_is_refused_and_the_file_kept(tmp_path):
    # `--json mech.py` replaced the mechanism's source with the report (exit 0); the refusal's
    # error record went there too. Now one line, exit 3, the file as it was, and the other report
    # still says why nothing ran
    mech = tmp_path / "mech.py"
    source = open(os.path.join(ROOT, "examples", "laplace_sum.py"), encoding="utf-8").read()
    mech.write_text(source, encoding="utf-8")
    for flags in (["--json", "mech.py"], ["--html", "./mech.py", "--json", "r.json"]):
        proc = dpaudit("check", "mech.py:noisy_sum", *TINY, *flags, cwd=tmp_path)
        assert proc.returncode == ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
        assert "would overwrite mech.py, which this run reads" in proc.stderr
        assert mech.read_text(encoding="utf-8") == source
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert rec["verdict"] == "error" and "would overwrite mech.py" in rec["error"]


def test_the_reproduce_line_gives_the_code_what_the_sandbox_gave_it(tmp_path):
    # a mechanism that reads a passed variable was an ERROR when rerun from its reproduce line:
    # the line dropped --pass-env (and --isolation process)
    (tmp_path / "env_mech.py").write_text(textwrap.dedent("""\
        import os
        import dpaudit

        @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3)
        def mech(data, rng):
            return float(sum(data)) + rng.laplace(0, 1.0 / float(os.environ["SCALE_FROM_ENV"]))
        """), encoding="utf-8")
    env = dict(os.environ, SCALE_FROM_ENV="1")
    first = dpaudit_process("check", "env_mech.py", *TINY, "--float", "off", "--isolation",
                            "process", "--pass-env", "SCALE_FROM_ENV", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    line = first.stdout.strip().splitlines()[-1]
    assert "--isolation=process --pass-env=SCALE_FROM_ENV" in line, line
    again = dpaudit_process(*shlex.split(line.removeprefix("reproduce: "))[1:], cwd=tmp_path, env=env)
    assert again.returncode == 0 and again.stdout.splitlines()[0] == first.stdout.splitlines()[0]


@pytest.mark.parametrize("where", ["/dev/stdout", "-"])
def test_a_report_on_stdout_is_all_that_stdout_holds(tmp_path, where):
    # the verdict line came before the JSON on stdout (and `-` wrote a file named "-"): a pipe
    # into a JSON reader failed; the lines for the person now go to stderr
    proc = dpaudit_process("check", "examples/laplace_sum.py", *TINY, "--json", where, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    (rec,) = json.loads(proc.stdout)["results"]
    assert rec["verdict"] == "not_refuted" and not os.path.exists(os.path.join(ROOT, "-"))
    assert "laplace_sum.py:noisy_sum: NOT REFUTED" in proc.stderr and "reproduce: " in proc.stderr


def test_a_lib_targets_file_is_never_a_report_path(tmp_path):
    # lib:targets.py's file was not among the files the run reads: --json targets.py replaced it
    (tmp_path / "targets.py").write_text("x = 1\n", encoding="utf-8")
    for flags in (["--json", "targets.py"], ["--in-process", "--json", "./targets.py"]):
        proc = dpaudit("check", "lib:targets.py", *flags, cwd=tmp_path)
        assert proc.returncode == ExitCode.USAGE_ERROR and "would overwrite targets.py" in proc.stderr
        assert (tmp_path / "targets.py").read_text(encoding="utf-8") == "x = 1\n"


def test_a_report_on_stdout_appended_to_a_file_keeps_what_the_file_held(tmp_path):
    # `--json - >> log`: the report was written from the start of the file, truncating the log
    log = tmp_path / "log.txt"
    log.write_text("line1\n", encoding="utf-8")
    with open(log, "a", encoding="utf-8") as out:
        done = subprocess.run([sys.executable, "-m", "dpaudit", "check",
                               os.path.join(ROOT, "examples", "laplace_sum.py"), *TINY, "--json", "-"],
                              stdout=out, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, CI="1"), timeout=300)
    assert done.returncode == 0, done.stderr
    text = log.read_text(encoding="utf-8")
    assert text.startswith("line1\n") and json.loads(text[len("line1\n"):])["results"][0]["verdict"] == "not_refuted"


def test_two_formats_to_one_path_write_neither_there(tmp_path):
    # `--json same.out --html same.out` was refused (exit 3) and then the refusal's HTML report
    # was written to same.out anyway (a hurried user's probe); another report still says why
    proc = dpaudit("check", os.path.join(ROOT, "examples", "laplace_sum.py"), *TINY, "--json", "same.out",
                   "--html", "same.out", "--junit", "r.xml", cwd=tmp_path)
    assert proc.returncode == ExitCode.USAGE_ERROR and "both write same.out" in proc.stderr
    assert not (tmp_path / "same.out").exists() and "both write same.out" in (tmp_path / "r.xml").read_text()
