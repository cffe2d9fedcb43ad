"""What the audited checkout controls cannot weaken the audit, hang it, or turn its file names into flags.

* ``[tool.dpaudit]`` of the nearest pyproject.toml (inside a third-party checkout: that project's own
  file) cannot set a key that weakens the audit (float policy, samples, confidence, seed, time and
  sandbox limits, isolation, per-target claims) without ``--trust-config``: it is one usage error
  (exit 3) naming the key and the flag, before any audit runs. A key that can only make the audit
  stricter (``float = "error"``, ``isolation = "strict"``) is taken. With ``--trust-config`` the
  verdict line, the reproduce line and the JSON record say which values came from the file.
* A report path that is a FIFO, a socket, a device or a link to one inside a folder the checkout
  controls is refused before any audit runs (a FIFO without a reader hung dpaudit forever; a link
  to a device such as ``/dev/port`` would be written in place); ``/dev/stdout`` still works.
* ``dpaudit check -- FILE ...``: a file named ``--in-process`` or ``--pass-env=SECRET`` is a target,
  never a flag, and audited in the sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .test_hostile import ABI, ROOT, arena  # noqa: F401

TEXTBOOK = ("import dpaudit\n\n"
            "@dpaudit.mechanism(epsilon=1.0, neighbours='add-remove', domain=(0.0, 1.0), size=10)\n"
            "def porous_sum(data, rng):\n"
            "    return float(data.sum() + rng.laplace(scale=1.0))\n")
#: what a hostile checkout sets, and the key a refusal names
ISSUE = '[tool.dpaudit]\nfloat = "off"\nsamples = 1000\nconfidence = 0.999999\nseed = 7\n'


@pytest.fixture
def checkout(arena, capfd):
    arena["capfd"] = capfd
    mech = arena["work"] / "mech.py"
    mech.write_text(TEXTBOOK)
    arena["mech"] = mech
    return arena


def _check(checkout, *args: str) -> tuple[int, str, str]:
    from dpaudit.cli import run

    code = run(["check", *args])
    return int(code), *checkout["capfd"].readouterr()


def _pyproject(checkout, text: str) -> None:
    (checkout["work"] / "pyproject.toml").write_text(text)


@pytest.mark.parametrize("line,key", [
    ('float = "off"', "float"),
    ('float = "warn"', "float"),
    ("samples = 1000", "samples"),
    ("confidence = 0.999999", "confidence"),
    ("confidence = 0.5", "confidence"),
    ("seed = 7", "seed"),
    ("timeout = 1", "timeout"),
    ("call_timeout = 1000", "call-timeout"),
    ('memory = "64G"', "memory"),
    ('isolation = "none"', "isolation"),
    ('isolation = "process"', "isolation"),
])
def test_each_key_that_can_weaken_the_audit_is_refused_without_trust_config(checkout, line, key):
    _pyproject(checkout, f"[tool.dpaudit]\n{line}\n")
    report = checkout["tmp"] / "r.json"
    code, out, err = _check(checkout, "mech.py", "--quiet", f"--json={report}")
    assert code == 3 and out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"dpaudit: error: pyproject.toml sets {key} = ") and "--trust-config" in err
    assert f"--{key}" in err.split("--trust-config", 1)[1]  # and the flag that states it instead
    (rec,) = json.loads(report.read_text())["results"]  # CI still gets a record saying why
    assert rec["verdict"] == "error" and "--trust-config" in rec["error"]


def test_the_issues_checkout_is_refused_naming_every_key_and_a_flag_overrides_its_key(checkout):
    _pyproject(checkout, ISSUE)
    code, out, err = _check(checkout, "mech.py", "--quiet")
    assert code == 3 and out == ""
    assert err.splitlines() == [
        "dpaudit: error: pyproject.toml sets float = 'off', samples = 1000, confidence = 0.999999, "
        "seed = 7 under [tool.dpaudit]: the audited checkout may not weaken the audit; give "
        "--trust-config to take them from the file, or state them as flags (--float, --samples, "
        "--confidence, --seed)"]
    # a flag wins over its key, so the key is never taken: only the others are refused
    code, out, err = _check(checkout, "mech.py", "--quiet", "--float=error", "--samples=2000",
                            "--confidence=0.95")
    assert code == 3 and "sets seed = 7 under" in err and "float" not in err


def test_per_target_tables_are_refused_without_trust_config(checkout):
    _pyproject(checkout, '[tool.dpaudit.targets."mech.py:porous_sum"]\nepsilon = 100\n'
                         'domain = [0, 0.001]\nfloat = "off"\n')
    code, out, err = _check(checkout, "mech.py", "--quiet")
    assert code == 3 and len(err.splitlines()) == 1
    assert err.startswith('dpaudit: error: pyproject.toml [tool.dpaudit.targets."mech.py:porous_sum"] '
                          "sets epsilon = 100, domain = [0, 0.001], float = 'off': the audited "
                          "checkout may not weaken the audit; give --trust-config")


def test_keys_that_only_make_the_audit_stricter_are_taken(checkout):
    _pyproject(checkout, '[tool.dpaudit]\nfloat = "error"\nisolation = "strict"\n')
    report = checkout["tmp"] / "r.json"
    code, out, err = _check(checkout, "mech.py", "--quiet", "--samples=2000", f"--json={report}")
    assert code != 3 and err == "", out + err
    (rec,) = json.loads(report.read_text())["results"]
    assert rec["float_policy"] == "error" and "settings_from" not in rec
    assert rec["isolation"].startswith("landlock" if ABI >= 1 else "process only")


def test_trusted_values_are_said_to_come_from_the_file_on_every_line_and_in_the_record(checkout):
    _pyproject(checkout, ISSUE)
    report = checkout["tmp"] / "r.json"
    code, out, err = _check(checkout, "mech.py", "--quiet", "--trust-config", f"--json={report}")
    assert code == 0, out + err
    verdict = next(ln for ln in out.splitlines() if ln.startswith("mech.py:porous_sum: "))
    assert "float64: not asked (float = 'off' from pyproject.toml)" in verdict
    assert "--float off" not in verdict  # never as if the user had passed the flag
    assert verdict.endswith("[from pyproject.toml, taken with --trust-config: --samples=1000, "
                            "--confidence=0.999999, --seed=7, --float=off]")
    (reproduce,) = [ln for ln in out.splitlines() if ln.startswith("reproduce: ")]
    assert "--samples=1000 --confidence=0.999999 --seed=7 --float=off" in reproduce
    assert reproduce.endswith("  # --samples, --confidence, --seed, --float: from pyproject.toml")
    (rec,) = json.loads(report.read_text())["results"]
    assert rec["settings_from"] == {"file": "pyproject.toml", "settings": {
        "samples": 1000, "confidence": 0.999999, "seed": 7, "float": "off"}}


# -- report paths that are not regular files ----------------------------------------------------------

def _non_regular(kind: str, path: Path):
    if kind == "fifo":
        os.mkfifo(path)
        return None
    if kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        return s
    path.symlink_to(os.devnull)  # a link to a device: /dev/port, /dev/watchdog as root
    return None


@pytest.mark.parametrize("kind,words", [("fifo", "it is a FIFO"), ("socket", "it is a socket"),
                                        ("device-link", "it is a symbolic link (to /dev/null)")])
def test_a_report_path_that_is_not_a_regular_file_is_refused_before_any_audit(arena, kind, words):
    work = arena["work"]
    (work / "mech.py").write_text(TEXTBOOK)
    held = _non_regular(kind, work / "dpaudit-report.html")
    try:  # in a process of its own: on main a FIFO without a reader hangs dpaudit forever
        done = subprocess.run([sys.executable, "-m", "dpaudit", "check", "mech.py", "--samples=1000",
                               "--quiet", "--html=dpaudit-report.html"], cwd=work, capture_output=True,
                              text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    finally:
        if held is not None:
            held.close()
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout == ""  # before any audit
    assert done.stderr.splitlines() == [
        f"dpaudit: error: cannot write the html report to dpaudit-report.html: {words}; dpaudit "
        f"writes reports only to regular files (or /dev/stdout and other paths under /dev)"]


def test_a_fifo_without_a_reader_under_dev_is_one_line_not_a_hang(arena):
    """``/dev/fd/N`` and ``/dev/stdout`` are written in place, opened without blocking."""
    from dpaudit.errors import UsageError
    from dpaudit.report.json_io import write_text

    read_end, write_end = os.pipe()
    os.close(read_end)  # a pipe nobody reads
    try:
        with pytest.raises(UsageError, match=r"^cannot write /dev/fd/\d+: "):
            write_text(f"/dev/fd/{write_end}", "x" * 10)
    finally:
        os.close(write_end)
    read_end, write_end = os.pipe()
    try:
        write_text(f"/dev/fd/{write_end}", "through the pipe")
        assert os.read(read_end, 100) == b"through the pipe"
    finally:
        os.close(read_end)
        os.close(write_end)


# -- `dpaudit check -- FILE ...`: a target list from the checkout is never read as flags -------------------

def test_a_file_named_like_a_flag_after_double_dash_is_a_target_never_a_flag(checkout):
    """A target list built from the checkout (the files a pull request changed) holding a file named
    ``--in-process`` ran the others without the sandbox; after ``--`` it is a target like any other."""
    (checkout["work"] / "--in-process").write_text("")
    report = checkout["tmp"] / "r.json"
    code, out, err = _check(checkout, "--epsilon=1", "--samples=1000", "--quiet", f"--json={report}",
                            "--", "--in-process", "mech.py")
    assert code == 3 and out == ""
    assert err.splitlines() == ["dpaudit: error: --in-process: cannot be imported as a Python module"]
    assert [r["error"] for r in json.loads(report.read_text())["results"]] == [
        "--in-process: cannot be imported as a Python module",
        "not audited: an earlier target could not be loaded"]


def test_a_loadable_file_named_like_a_flag_is_audited_in_the_sandbox(checkout):
    name = "--pass-env=DPAUDIT_HOSTILE_SECRET.py"
    (checkout["work"] / name).write_text(
        "import os\n\ndef mechanism(data, rng):\n"
        "    return float(len(os.environ.get('DPAUDIT_HOSTILE_SECRET', '')) + rng.laplace())\n")
    report = checkout["tmp"] / "r.json"
    code, out, err = _check(checkout, "--epsilon=1", "--samples=1000", "--quiet", "--no-replay",
                            f"--json={report}", "--", name)
    assert code == 0, out + err
    (rec,) = json.loads(report.read_text())["results"]
    assert rec["target"] == f"{name}:mechanism" and rec["verdict"] == "not_refuted"
    assert rec["isolation"].startswith("landlock" if ABI >= 1 else "process only")
    # its reproduce line names it so that it is a target too
    assert rec["reproduce"].startswith(f"dpaudit check ./{name}:mechanism ")


def test_values_after_double_dash_are_not_joined_to_a_flag():
    from dpaudit.cli import _join_dash_values  # private: the argv rewrite itself, not reachable alone through main()

    assert _join_dash_values(["check", "--", "--domain", "-1:2"]) == ["check", "--", "--domain", "-1:2"]
    assert _join_dash_values(["check", "--domain", "-1:2", "--", "x.py"]) == ["check", "--domain=-1:2", "--", "x.py"]


def test_a_float_policy_the_mechanism_declares_is_not_shown_as_the_users_flag(checkout):
    """The decorator is the audited code's too: ``float="off"`` there is said to be its own."""
    checkout["mech"].write_text(TEXTBOOK.replace("size=10)", "size=10, float='off')"))
    code, out, err = _check(checkout, "mech.py", "--quiet", "--samples=2000", "--no-replay")
    assert code == 0, out + err
    assert "float64: not asked (float='off' declared by the mechanism)" in out and "--float off" not in out
    code, out, err = _check(checkout, "mech.py", "--quiet", "--samples=2000", "--no-replay", "--float=off")
    assert "float64: not asked (--float off)" in out
