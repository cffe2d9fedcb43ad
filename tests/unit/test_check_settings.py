"""dpaudit.commands.check: flags over [tool.dpaudit] over defaults, one-line validation errors, exit codes."""

import json

import pytest

from dpaudit.commands.check import exit_code, read_config, reproduce_command, resolve_settings
from dpaudit.claims import Domain, Neighbours, privacy_claim
from dpaudit.cli import ExitCode, _join_dash_values, build_parser, run  # private: the argv step before parsing
from dpaudit.errors import InvalidArgument, UsageError
from dpaudit.rng import DEFAULT_SEED
from dpaudit.execution.sandbox import DEFAULT_CALL_TIMEOUT, DEFAULT_MEMORY


def parse(*argv):
    return build_parser().parse_args(_join_dash_values(["check", "m.py", *argv]))


def settings(*argv, config=None):
    return resolve_settings(parse(*argv), config, "/somewhere/pyproject.toml" if config else None)


def test_defaults():
    s = settings()
    assert s.targets == ("m.py",) and s.claim == {}
    assert (s.seed, s.samples, s.confidence) == (DEFAULT_SEED, None, 0.95)
    assert (s.timeout, s.call_timeout, s.memory) == (None, DEFAULT_CALL_TIMEOUT, DEFAULT_MEMORY)
    assert set(s.origin.values()) == {"default"}


def test_flags_override_pyproject_which_overrides_defaults():
    config = {"seed": 5, "samples": "2e5", "confidence": 0.9, "call-timeout": 3, "memory": "1G"}
    with pytest.raises(InvalidArgument, match=r"pyproject.toml sets samples = '2e5', "
                                              r"confidence = 0.9, call-timeout = 3, memory = '1G' "
                                              r"under \[tool.dpaudit\]: .* give --trust-config"):
        settings("--seed", "7", config=config)  # the checkout's file may not weaken the audit
    s = settings("--seed", "7", "--trust-config", config=config)
    assert s.seed == 7 and s.origin["seed"] == "flag"
    assert s.samples == 200_000 and s.origin["samples"].endswith("pyproject.toml")
    assert (s.confidence, s.call_timeout, s.memory) == (0.9, 3.0, 1024 ** 3)
    assert s.timeout is None and s.origin["timeout"] == "default"


def test_claim_flags():
    s = settings("--epsilon", "0.5", "--delta=1e-6", "--neighbours", "replace",
                 "--domain", "-10:10", "--size", "20")
    assert s.claim == {"epsilon": 0.5, "delta": 1e-6, "neighbours": Neighbours.REPLACE,
                       "domain": Domain(-10.0, 10.0), "size": 20}
    assert settings("--domain=-2.5:-1").claim["domain"] == Domain(-2.5, -1.0)
    assert settings("--domain", "-.5:1").claim["domain"] == Domain(-0.5, 1.0)


@pytest.mark.parametrize("argv,message", [
    (("--epsilon", "0"), "--epsilon must be a finite number > 0, got 0.0"),
    (("--epsilon", "-1"), "--epsilon must be a finite number > 0, got -1.0"),
    (("--epsilon", "inf"), "--epsilon must be a finite number > 0"),
    (("--epsilon", "one"), "--epsilon must be a number, got 'one'"),
    (("--delta", "1"), "--delta must be a number in [0, 1), got 1.0"),
    (("--delta", "-0.1"), "--delta must be a number in [0, 1)"),
    (("--domain", "10:-10"), "--domain must be LO:HI with finite LO < HI"),
    (("--domain", "1:1"), "--domain must be LO:HI with finite LO < HI"),
    (("--domain", "0-1"), "--domain must be LO:HI"),
    (("--domain", "-inf:inf"), "--domain must be LO:HI with finite LO < HI"),  # not an argparse puzzle
    (("--domain", "a:1"), "--domain LO must be a number, got 'a'"),
    (("--neighbours", "hamming"), "--neighbours must be one of add-remove, replace, linf, l1"),
    (("--size", "0"), "--size must be an integer in [1, 100000], got '0'"),
    (("--size", "1e9"), "--size must be an integer in [1, 100000], got '1e9'"),
    (("--size", "2.5"), "--size must be an integer in [1, 100000]"),
    (("--samples", "many"), "--samples must be an integer >= 1000, got 'many'"),
    (("--samples", "10"), "--samples must be an integer >= 1000, got '10'"),
    (("--confidence", "1"), "--confidence must be a number strictly between 0 and 1"),
    (("--seed", "-3"), "--seed must be an integer >= 0"),
    (("--timeout", "0"), "--timeout must be a number of seconds > 0"),
    (("--call-timeout", "nan"), "--call-timeout must be a number of seconds > 0"),
    (("--memory", "tiny"), "--memory must be a size such as 2G or 512M"),
    # sizes past what the samplers and the sandbox's rlimits (C longs) hold: internal errors before
    (("--samples", "1e30"), "--samples must be at most 1e15, got '1e30'"),
    (("--timeout", "1e300"), "--timeout must be a number of seconds > 0 and at most 1e9"),
    (("--call-timeout", "1e12"), "--call-timeout must be a number of seconds > 0 and at most 1e9"),
    (("--memory", "99999999T"), "--memory must be a size from 64M to 1024T"),
])
def test_invalid_flags_are_one_line_naming_the_flag(argv, message):
    with pytest.raises(InvalidArgument) as info:
        settings(*argv)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_contradictions_and_misspellings_are_one_line():
    with pytest.raises(InvalidArgument, match=r"^pyproject.toml \[tool.dpaudit\] key must be one of seed, "
                                              r"samples, .*, targets, got 'sample'$"):
        resolve_settings(parse(), {"sample": 10_000}, "pyproject.toml")  # silently ignored before
    with pytest.raises(InvalidArgument, match=r"^--in-process .* contradicts --isolation strict$"):
        settings("--in-process", "--isolation", "strict")
    with pytest.raises(InvalidArgument, match=r"^--json and --html both write r.out$"):
        settings("--json", "r.out", "--html", "r.out")
    assert settings("--in-process", "--isolation", "none").in_process


def test_invalid_pyproject_value_names_the_file_and_key():
    with pytest.raises(InvalidArgument, match=r"pyproject.toml \[tool.dpaudit\] samples must be"):
        settings(config={"samples": -1})


def test_a_pyproject_that_is_not_utf8_is_one_line(tmp_path):
    from dpaudit.errors import UsageError

    (tmp_path / "pyproject.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(UsageError, match=r"pyproject.toml: cannot read \[tool.dpaudit\]: 'utf-8' codec"):
        read_config(str(tmp_path))


def test_read_config_finds_the_nearest_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dpaudit]\nseed = 3\ncall_timeout = 2\n")
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    config, path = read_config(str(inner))
    assert config == {"seed": 3, "call-timeout": 2} and path == str(tmp_path / "pyproject.toml")
    (inner / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert read_config(str(inner)) == ({}, str(inner / "pyproject.toml"))
    (inner / "pyproject.toml").write_text("[tool.dpaudit\n")
    with pytest.raises(UsageError, match="cannot read"):
        read_config(str(inner))


def test_exit_codes_follow_the_worst_verdict():
    def recs(*verdicts):
        return [{"verdict": v} for v in verdicts]

    assert exit_code(recs("not_refuted", "proved")) is ExitCode.OK
    assert exit_code(recs("not_refuted", "refuted")) is ExitCode.REFUTED
    assert exit_code(recs("refuted"), exit_zero=True) is ExitCode.OK
    assert exit_code(recs("inconclusive")) is ExitCode.OK
    assert exit_code(recs("inconclusive"), fail_on_inconclusive=True) is ExitCode.INCONCLUSIVE
    assert exit_code(recs("refuted", "error")) is ExitCode.MECHANISM_ERROR
    assert exit_code(recs("error"), exit_zero=True) is ExitCode.MECHANISM_ERROR
    assert exit_code([]) is ExitCode.NOTHING_TO_AUDIT


def test_reproduce_command_spells_out_the_claim_and_seed():
    s = settings("--samples", "1000", "--confidence", "0.9", "--seed", "4")
    cmd = reproduce_command("ex dir/m.py:f", s, privacy_claim(0.5, 1e-6), "replace",
                            Domain(-1, 1), 7)
    assert cmd == ("dpaudit check 'ex dir/m.py:f' --epsilon=0.5 --delta=1e-06 "
                   "--neighbours=replace --domain=-1:1 --size=7 --samples=1000 "
                   "--confidence=0.9 --seed=4")
    s = settings("--call-timeout", "2", "--memory", "1G")
    cmd = reproduce_command("m.py:f", s, privacy_claim(1.0), "add-remove", Domain(0, 1), 10,
                            samples=4000)
    assert cmd.endswith("--samples=4000 --seed=20261122 --call-timeout=2 --memory=1073741824")


def test_a_usage_error_still_writes_the_report(tmp_path, capsys):
    out = tmp_path / "r.json"
    code = run(["check", str(tmp_path / "m.py"), "--epsilon", "-1", "--json", str(out)])
    assert code is ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert err.strip() == "dpaudit: error: --epsilon must be a finite number > 0, got -1.0"
    run_record = json.loads(out.read_text())
    (record,) = run_record["results"]
    assert record["verdict"] == "error" and "--epsilon must be" in record["error"]
    assert run_record["command"].startswith(f"dpaudit check {tmp_path / 'm.py'} --epsilon -1")


def test_a_missing_file_fails_before_any_audit(tmp_path, capsys):
    out = tmp_path / "r.json"
    good = tmp_path / "good.py"
    good.write_text("def mechanism(data, rng):\n    return 0.0\n")
    code = run(["check", str(good), str(tmp_path / "missing.py"), "--epsilon", "1",
                "--json", str(out)])
    assert code is ExitCode.USAGE_ERROR
    assert capsys.readouterr().err.strip().endswith("missing.py: no such file")
    records = json.loads(out.read_text())["results"]
    assert [r["verdict"] for r in records] == ["error", "error"]
    assert records[0]["error"] == "not audited: another target could not be loaded"


def test_suite_exit_code_compares_with_the_expected_verdict():
    from dpaudit.exitcodes import suite_exit_code

    ok = {"verdict": "refuted", "expected": "refuted"}
    bad = {"verdict": "not_refuted", "expected": "refuted"}
    inconclusive = {"verdict": "inconclusive", "expected": "inconclusive"}
    assert suite_exit_code([ok]) is ExitCode.OK
    assert suite_exit_code([ok, bad]) is ExitCode.REFUTED
    assert suite_exit_code([bad], exit_zero=True) is ExitCode.OK
    assert suite_exit_code([inconclusive]) is ExitCode.OK
    assert suite_exit_code([inconclusive], fail_on_inconclusive=True) is ExitCode.INCONCLUSIVE
    assert suite_exit_code([]) is ExitCode.NOTHING_TO_AUDIT


def test_one_seed_parser_for_flags_pyproject_and_the_plugin():
    from dpaudit.config import parse_seed, resolve_seed

    assert parse_seed("--seed", "18446744073709551616") == 2 ** 64  # exact, not through a float
    assert parse_seed("--seed", "1e3") == 1000 and parse_seed("--seed", 7) == 7
    for bad in ("-1", "x", 1.5, True, ""):
        with pytest.raises(InvalidArgument, match="--seed must be an integer >= 0"):
            parse_seed("--seed", bad)
    assert resolve_seed("4", config={"seed": 9}) == (4, "flag")
    assert resolve_seed(None, config={"seed": 9}, config_path="/x/pyproject.toml")[0] == 9
    assert resolve_seed(None, config={}, read=False) == (DEFAULT_SEED, "default")
    with pytest.raises(InvalidArgument, match=r"\[tool.dpaudit\] seed must be an integer"):
        resolve_seed(None, config={"seed": "minus one"})


def test_exit_codes_are_importable_without_the_command_line():
    import subprocess
    import sys

    code = ("import sys, dpaudit.exitcodes, dpaudit.config, dpaudit.reproduce, dpaudit.commands.check, "
            "dpaudit.suite; assert 'dpaudit.cli' not in sys.modules, 'dpaudit.cli was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_target_named_twice_is_audited_once():
    # `check m.py m.py` audited it twice, each at half the confidence's α (Bonferroni over two)
    assert settings("b.py", "m.py", "b.py").targets == ("m.py", "b.py")
