"""Reports, configuration and the child's text against a hostile checkout
(report paths, the Markdown report, and a report that fails at the end).

* A report path that is a symbolic link (dangling or not) is refused with one line before any audit
  runs, by every writer (``dpaudit check``, ``dpaudit audit``'s folder, ``dpaudit report``, the
  pytest plugin): a checkout holding ``dpaudit-report.html -> <venv>/site-packages/x.pth`` made
  the next Python start of that venv run a command.
* Nothing the sandbox child sends (an exception's message or type name, its forged description of
  the mechanism) carries a line break into any report: no line of any report starts with
  ``import``, and a report copied into a ``.pth`` file runs nothing.
* Markdown text from the audited code cannot mention anyone, autolink a URL, open an HTML tag or
  leave its table cell.
* ``isolation`` weaker than ``strict`` is taken from pyproject.toml only with ``--trust-config``
  (without it: a usage error, exit 3).
* A report that cannot be written at the end (a file-size limit, its folder replaced by a file)
  loses neither the verdict, nor the reproduce line, nor the other reports.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .cases import LAPLACE, Case, _f
from .test_hostile import ABI, FLAGS, ROOT, arena, mechanism_file, wait_until_no_tagged  # noqa: F401

FORMATS = ("json", "html", "junit", "sarif", "markdown")
MARKER = "DPAUDIT_PTH_MARKER"

#: the issue's payload, and one without quotes (HTML escaping cannot break it) that still creates
#: the marker when a line of it runs: ``import os;exec(bytes([...]).decode())``
_CODE = f"open(os.environ['{MARKER}'], 'w').write('ran')"
PAYLOADS = ("\nimport os; os.system('touch MARKER')\n",
            "\nimport os;exec(bytes([" + ",".join(str(b) for b in _CODE.encode()) + "]).decode())\n")
PAYLOAD = "".join(PAYLOADS) + "\u2028import os\x85import os\rimport os"


def _patch(target: str, value: str) -> str:
    """Import-time code of a mechanism that makes the child's dpaudit send ``value``."""
    return f"PAYLOAD = {value!r}\n" + target


HOSTILE = {
    # the child's dpaudit.spec._message builds the cause of what the mechanism raised
    "message": _f("raise ValueError('boom')", _patch(
        "import dpaudit.spec as _s\n_s._message = lambda exc: ': boom' + PAYLOAD\n", PAYLOAD)),
    # an exception class whose name carries the lines (no patching needed)
    "type_name": _f("raise E()", f"E = type({('Bad' + PAYLOAD)!r}, (Exception,), {{}})\n"),
    # the child's description of the mechanism, forged: a call-form error (a load error)
    "facts_call_form": _f(LAPLACE, _patch(
        "import dpaudit.execution.child as _c\n_d = _c._describe_loaded\n"
        "_c._describe_loaded = lambda m: dict(_d(m), call_form=None, call_form_error='x' + PAYLOAD)\n",
        PAYLOAD)),
    # ... and its source path and how it was found (the audit runs)
    "facts_source": _f(LAPLACE, _patch(
        "import dpaudit.execution.child as _c\n_d = _c._describe_loaded\n"
        "_c._describe_loaded = lambda m: dict(_d(m), source=('/x' + PAYLOAD, 1), "
        "found_by='by' + PAYLOAD, path='/p' + PAYLOAD)\n", PAYLOAD)),
}


def _site_packages(tmp: Path) -> Path:
    sp = tmp / "venv" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    sp.mkdir(parents=True, exist_ok=True)
    return sp


def _runs_pth(sp: Path, tmp: Path) -> bool:
    """Whether processing the ``.pth`` files of ``sp`` as Python's start-up does ran the payload."""
    marker = tmp / "marker"
    subprocess.run([sys.executable, "-S", "-c", f"import site; site.addsitedir({str(sp)!r})"],
                   cwd=tmp, env=dict(os.environ, **{MARKER: str(marker)}), capture_output=True,
                   timeout=60)
    return marker.exists() or (tmp / "MARKER").exists()


def _no_line_starts_with_import(name: str, text: str) -> None:
    for line in text.splitlines():  # str.splitlines: every line break Python knows, U+2028 too
        assert not line.lstrip().startswith("import"), f"{name}: {line[:120]!r}"


def _check(arena, *args: str) -> tuple[int, str, str]:
    from dpaudit.cli import run

    code = run(["check", *args])
    return int(code), *arena["capfd"].readouterr()


@pytest.fixture
def hostile(arena, capfd):
    arena["capfd"] = capfd
    return arena


# -- escape 2: a symbolic link at a report path ---------------------------------------------------

def test_a_symlinked_report_path_is_refused_before_any_audit_and_runs_nothing(hostile):
    tmp = hostile["tmp"]
    sp = _site_packages(tmp)
    victim = tmp / "victim.txt"
    victim.write_text("keep me\n")
    path = mechanism_file(hostile, Case("message", HOSTILE["message"], 3, "error"))
    links = {}
    for fmt in FORMATS:  # every report a link planted in the checkout: .pth files, and a file
        link = hostile["work"] / f"dpaudit-report.{fmt}"
        link.symlink_to(victim if fmt == "junit" else sp / f"x_{fmt}.pth")
        links[fmt] = link.name
    code, out, err = _check(hostile, f"{path}:f", *FLAGS, *[f"--{k}={v}" for k, v in links.items()])
    assert code == 3 and out == ""
    assert err.splitlines() == [
        f"dpaudit: error: cannot write the json report to dpaudit-report.json: it is a symbolic link "
        f"that points nowhere (to {sp / 'x_json.pth'}); dpaudit does not follow links when writing "
        f"reports"]
    assert list(sp.iterdir()) == [] and victim.read_text() == "keep me\n"
    assert not _runs_pth(sp, tmp)
    # a link to a file that exists is refused as well
    code, out, err = _check(hostile, f"{path}:f", *FLAGS, "--junit=dpaudit-report.junit")
    assert code == 3 and err.splitlines() == [
        f"dpaudit: error: cannot write the junit report to dpaudit-report.junit: it is a symbolic "
        f"link (to {victim}); dpaudit does not follow links when writing reports"]
    assert victim.read_text() == "keep me\n"


@pytest.mark.slow
def test_a_symlinked_folder_in_the_checkout_is_refused_and_devices_are_still_written(hostile):
    outside = hostile["tmp"] / "outside"
    outside.mkdir()
    (hostile["work"] / "out").symlink_to(outside)
    path = hostile["tmp"] / "mech" / "ok.py"
    path.parent.mkdir()
    path.write_text("def f(data, rng):\n    return " + LAPLACE.removeprefix("return ") + "\n")
    code, out, err = _check(hostile, f"{path}:f", *FLAGS, "--html=out/r.html")
    assert code == 3 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"dpaudit: error: cannot write the html report to out/r.html: "
                          f"{hostile['work'] / 'out'} is a symbolic link (to {outside}); ")
    assert list(outside.iterdir()) == []
    # a device under /dev is written in place (users write --json /dev/stdout), and an absolute
    # folder outside the working folder may be reached through a link (/tmp on some systems)
    (hostile["tmp"] / "alias").symlink_to(outside)
    code, out, err = _check(hostile, f"{path}:f", *FLAGS, f"--json={os.devnull}",
                            f"--html={hostile['tmp'] / 'alias' / 'r.html'}")
    assert code == 0, err
    assert (outside / "r.html").is_file()


@pytest.mark.slow
def test_every_writer_refuses_a_symlinked_report_path(hostile, request):
    """``dpaudit report``, ``dpaudit audit``'s report folder and the pytest plugin's reports."""
    from dpaudit.cli import run

    work, capfd = hostile["work"], hostile["capfd"]
    sp = _site_packages(hostile["tmp"])
    (work / "x.html").symlink_to(sp / "x.pth")
    path = hostile["tmp"] / "mech" / "ok.py"
    path.parent.mkdir()
    path.write_text("def f(data, rng):\n    return " + LAPLACE.removeprefix("return ") + "\n")
    result = hostile["tmp"] / "r.json"
    assert run(["check", f"{path}:f", *FLAGS, "--no-replay", f"--json={result}"]) == 0  # a result to report
    capfd.readouterr()
    assert run(["report", str(result), "--html=x.html"]) == 3
    out, err = capfd.readouterr()
    assert err.splitlines() == [f"dpaudit: error: cannot write x.html: it is a symbolic link that "
                                f"points nowhere (to {sp / 'x.pth'}); dpaudit does not follow links "
                                f"when writing reports"]
    assert list(sp.iterdir()) == []

    # dpaudit audit: its reports/ folder a link out of the checkout
    audits = hostile["tmp"] / "audits"
    audits.mkdir()
    (audits / "tiny.py").write_text(textwrap.dedent("""\
        from dpaudit.spec import MechanismSpec
        from dpaudit.suite import sampled

        def f(data, rng):
            return round(float(data.sum() + rng.laplace()), 3)

        AUDITS = [sampled("tiny", lambda: MechanismSpec.from_function(f, epsilon=1.0), samples=1000)]
        """))
    elsewhere = hostile["tmp"] / "elsewhere"
    elsewhere.mkdir()
    (work / "reports").symlink_to(elsewhere)
    assert run(["audit", str(audits), "--quiet"]) == 3
    out, err = capfd.readouterr()
    assert err.splitlines() == [f"dpaudit: error: cannot write the json report to "
                                f"reports/results.json: {work / 'reports'} is a symbolic link (to "
                                f"{elsewhere}); dpaudit does not follow links inside the working "
                                f"folder when writing reports"]
    assert list(elsewhere.iterdir()) == []

    # the pytest plugin's --dpaudit-html: refused where pytest configures the plugin, before any
    # test is collected, so pytester's run in this process meets it as `python -m pytest` does
    # (its folder becomes the working folder here; the same link is planted there)
    pytester = request.getfixturevalue("pytester")
    (pytester.path / "x.html").symlink_to(sp / "x.pth")
    pytester.makepyfile(test_uses_fixture=textwrap.dedent("""\
        def f(data, rng):
            return round(float(data.sum() + rng.laplace()), 3)

        def test_it(dpaudit_audit):
            dpaudit_audit(f, epsilon=1.0, samples=1000)
        """))
    done = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "test_uses_fixture.py",
                                        "--dpaudit-html=x.html")
    assert done.ret == 4, done.stdout.str() + done.stderr.str()
    assert "cannot write the --dpaudit-html report to x.html: it is a symbolic link" in done.stderr.str()
    assert list(sp.iterdir()) == []


# -- the child's text: no line break in any report ------------------------------------------------

@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "facts_source" else n for n in HOSTILE])
def test_child_text_never_starts_a_line_in_any_report(hostile, name):
    tmp = hostile["tmp"]
    path = mechanism_file(hostile, Case(name, HOSTILE[name], 3, "error"))
    paths = {k: tmp / "out" / f"r.{k}" for k in FORMATS}
    code, out, err = _check(hostile, f"{path}:f", *FLAGS, *[f"--{k}={v}" for k, v in paths.items()])
    assert "Traceback" not in out + err
    sp = _site_packages(tmp)
    for fmt, p in paths.items():
        shutil.copy(p, sp / f"report_{fmt}.pth")
    assert not _runs_pth(sp, tmp), "a report run as a .pth file ran the mechanism's code"
    for fmt, p in paths.items():
        _no_line_starts_with_import(fmt, p.read_text(encoding="utf-8"))
    _no_line_starts_with_import("terminal", out + err)
    (rec,) = json.loads(paths["json"].read_text())["results"]
    if name != "facts_source":  # a forged call form is a load error (3), the others the mechanism's (6)
        assert code == (3 if name == "facts_call_form" else 6) and rec["verdict"] == "error"
        assert "import os" in rec["error"] and "\\n" in rec["error"]  # said, as visible text
    assert not wait_until_no_tagged(hostile["tag"])


def test_the_child_facts_are_cleaned_in_dpaudit():
    from dpaudit.pipeline.target import clean_facts

    facts = {"function": "f", "path": "/p\nimport os", "found_by": "x\u2028y\tz",
             "call_form_error": "a\rb\x1b[2J\u202e", "source": ("/s\nimport os", 3),
             "declaration": {"epsilon": 1.0, "neighbours": "replace\n", "domain": (0, 1)}}
    got = clean_facts(facts)
    assert got == {"function": "f", "path": "/p\\nimport os", "found_by": "x\\u2028y\\tz",
                   "call_form_error": "a\\rb\\x1b[2J\\u202e", "source": ("/s\\nimport os", 3),
                   "declaration": {"epsilon": 1.0, "neighbours": "replace\\n", "domain": (0, 1)}}
    assert clean_facts(["not", "a", "table"]) == {}


# -- Markdown: nothing from the audited code is live in a PR comment ------------------------------

@pytest.mark.slow
def test_markdown_text_from_the_audited_code_is_inert(hostile):
    message = "ping @octocat see https://evil.example/x <img src=x> | ` www.evil.example a@b.example"
    folder = hostile["tmp"] / "mech"
    folder.mkdir()
    path = folder / "m|`@octocat.py"  # the file's name reaches the table's first cell
    path.write_text(_f(f"raise ValueError({message!r})"))
    md = hostile["tmp"] / "r.md"
    code, out, err = _check(hostile, f"{path}:f", *FLAGS, f"--markdown={md}")
    assert code == 6, err
    text = md.read_text(encoding="utf-8")
    assert "ping @" in text.replace("\u2060", "")  # the message is there, as text
    assert not re.search(r"(?<![\w`])@[\w-]", text), "a live @mention"
    assert not re.search(r"(?i)(https?|ftp)://|(?<![\w.-])www\.|\w@\w", text), "a bare-URL autolink"
    assert "<img" not in text
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and "evil" not in ln[:3]]
    header = rows[0]
    width = len(re.findall(r"(?<!\\)\|", header))
    for row in rows[1:]:
        assert len(re.findall(r"(?<!\\)\|", row)) == width, row  # no cell broken out of
    spans = [ln.split(": ", 1)[1] for ln in text.splitlines()
             if ln.startswith(("Command: ", "  - reproduce: "))]
    assert spans and all("`@octocat" in span for span in spans)
    for span in spans:  # one code span to the end of the line, its fence longer than any run inside
        fence = re.match(r"`+", span).group(0)
        inner = span[len(fence):-len(fence)]
        assert span.endswith(fence) and max(map(len, re.findall(r"`+", inner))) < len(fence), span


# -- escape 5: pyproject.toml cannot turn the sandbox off -----------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("level", ["none", "process"])
def test_isolation_from_pyproject_needs_trust_config(hostile, level):
    (hostile["work"] / "pyproject.toml").write_text(f'[tool.dpaudit]\nisolation = "{level}"\n')
    path = hostile["tmp"] / "mech" / "ok.py"
    path.parent.mkdir()
    path.write_text("def f(data, rng):\n    return " + LAPLACE.removeprefix("return ") + "\n")
    report = hostile["tmp"] / "r.json"
    flags = (*FLAGS, "--no-replay")  # the isolation setting is the subject, not the replay stage
    code, out, err = _check(hostile, f"{path}:f", *flags, f"--json={report}")
    assert code == 3, err  # refused (tests/hostile/test_checkout_config.py: every weakening key)
    assert err.splitlines() == [
        f"dpaudit: error: pyproject.toml sets isolation = '{level}' under [tool.dpaudit]: the "
        f"audited checkout may not weaken the audit; give --trust-config to take it from the file, "
        f"or state it as a flag (--isolation)"]
    code, out, err = _check(hostile, f"{path}:f", *flags, f"--json={report}", "--isolation=strict")
    assert code == 0, err
    (rec,) = json.loads(report.read_text())["results"]
    assert rec["isolation"].startswith("landlock" if ABI >= 1 else "process only"), rec["isolation"]
    code, out, err = _check(hostile, f"{path}:f", *flags, f"--json={report}", "--trust-config")
    assert code == 0, err
    (rec,) = json.loads(report.read_text())["results"]
    assert rec["isolation"].startswith("none" if level == "none" else "process only")
    assert err.startswith(f"dpaudit: note: isolation = '{level}' from pyproject.toml: ")


# -- a report that cannot be written at the end ---------------------------------------------------

def _limit_file_size() -> None:  # in the child, before exec: a file-size limit dpaudit runs under
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))


@pytest.mark.slow
def test_a_file_size_limit_loses_no_verdict_and_no_other_report(hostile):
    tmp = hostile["tmp"]
    path = tmp / "mech" / "ok.py"
    path.parent.mkdir()
    # outputs as floats through the pipe (a shared output buffer is a file the limit covers too)
    path.write_text("def f(data, rng):\n    return " + LAPLACE.removeprefix("return ") + "\n")
    out_dir = tmp / "out"
    paths = {k: out_dir / f"r.{k}" for k in ("json", "markdown", "html")}  # the HTML is > 64 kB
    done = subprocess.run([sys.executable, "-m", "dpaudit", "check", f"{path}:f", "--epsilon=1",
                           "--samples=1000", "--no-replay",  # the reports are the subject
                           *[f"--{k}={v}" for k, v in paths.items()]],
                          preexec_fn=_limit_file_size, cwd=hostile["work"], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 3, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{path}:f: NOT REFUTED"), done.stdout + done.stderr
    assert f"wrote json: {paths['json']}" in lines and f"wrote markdown: {paths['markdown']}" in lines
    assert lines[-1].startswith("reproduce: dpaudit check ")
    assert done.stderr.splitlines() == [f"dpaudit: error: the html report was not written: cannot "
                                        f"write {paths['html']}: File too large"]
    assert json.loads(paths["json"].read_text())["results"][0]["verdict"] == "not_refuted"
    assert sorted(p.name for p in out_dir.iterdir()) == ["r.json", "r.markdown"]  # no temporary


@pytest.mark.slow
def test_a_report_folder_replaced_after_the_precheck_loses_no_verdict(hostile, monkeypatch):
    import dpaudit.commands.check  # private: _precheck, wrapped to replace the folder right after it

    tmp = hostile["tmp"]
    path = tmp / "mech" / "ok.py"
    path.parent.mkdir()
    path.write_text("def f(data, rng):\n    return " + LAPLACE.removeprefix("return ") + "\n")
    gone = tmp / "gone"
    gone.mkdir()
    precheck = dpaudit.commands.check._precheck

    def then_replace(*args, **kwargs):
        precheck(*args, **kwargs)
        gone.rmdir()
        gone.write_text("")  # the folder is now a file: nothing can be written under it

    monkeypatch.setattr(dpaudit.commands.check, "_precheck", then_replace)
    report = tmp / "r.json"
    code, out, err = _check(hostile, f"{path}:f", *FLAGS, "--no-replay", f"--json={report}",
                            f"--html={gone / 'r.html'}")  # the reports are the subject, not the replay
    assert code == 3
    assert "NOT REFUTED" in out and f"wrote json: {report}" in out
    assert out.splitlines()[-1].startswith("reproduce: dpaudit check ")
    assert err.splitlines() == [f"dpaudit: error: the html report was not written: cannot write "
                                f"{gone / 'r.html'}: {gone} is not a folder"]
    assert json.loads(report.read_text())["results"][0]["verdict"] == "not_refuted"
