"""The CI quickstart as shipped: ``action.yml`` (a composite GitHub Action) and
``.pre-commit-hooks.yaml``, each exercised as the runner would run it.

The action's ``run:`` steps are executed by bash in a temporary folder, in order, with the
``${{ ... }}`` expressions of their ``env:`` and ``if:`` evaluated (inputs, ``github.action_path``,
earlier steps' outputs through ``$GITHUB_OUTPUT``); steps that ``uses:`` another action (set up
Python, upload SARIF, upload an artifact) cannot run here and are checked by what they are given.
pip is replaced by a stand-in that records what it was asked to install, so the test leaves the
environment as it found it. The pre-commit hooks are run as pre-commit runs a hook: its
``entry``, then its ``args``, then (with ``pass_filenames``) the staged files its ``files``
pattern selects, from the repository's root.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
#: how a GitHub runner runs a ``shell: bash`` step
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]


# -- expressions: the small part of GitHub's language the action uses -----------------------------

def evaluate(expr: str, inputs: dict, outputs: dict, action_path: str):
    """A GitHub expression of ``inputs.X``, ``steps.ID.outputs.X``, ``github.action_path``, string
    literals, ``==``, ``!=``, ``&&``, ``||``, ``!`` and ``always()``."""
    def name(m: re.Match) -> str:
        word = m.group(0)
        if word == "always()":
            return "True"
        if word == "github.action_path":
            return repr(action_path)
        if word.startswith("inputs."):
            key = word[len("inputs."):]
            assert key in ACTION["inputs"], f"action.yml uses an undeclared input {key!r}"
            return repr(inputs[key])
        if word.startswith("steps."):
            _, step, _, key = word.split(".")
            return repr(outputs.get(step, {}).get(key, ""))
        raise AssertionError(f"unknown name in an expression: {word}")

    python = re.sub(r"always\(\)|github\.action_path|inputs\.[\w-]+|steps\.[\w-]+\.outputs\.[\w-]+",
                    name, expr)
    python = python.replace("&&", " and ").replace("||", " or ")
    python = re.sub(r"!(?!=)", " not ", python)
    return eval(python, {"__builtins__": {}}, {})  # noqa: S307 - our own file's expressions


def substitute(text: str, inputs: dict, outputs: dict, action_path: str) -> str:
    return EXPR.sub(lambda m: str(evaluate(m.group(1), inputs, outputs, action_path)), str(text))


def action_inputs(**given: str) -> dict:
    values = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    for key, value in given.items():
        key = key.replace("_", "-")
        assert key in values, key
        values[key] = value
    return values


def fake_pip(folder: Path) -> Path:
    """A ``python`` first on PATH that records ``python [-I] -m pip ...`` (its arguments, after the
    folder it ran in) and runs anything else. It then runs the real ``python [-I] -m pip
    --version`` in that folder, so a ``pip/`` package planted in the folder runs if the step would
    import it."""
    folder.mkdir()
    log = folder / "pip.log"
    shim = folder / "python"
    real = shlex.quote(sys.executable)
    shim.write_text(
        "#!/bin/sh\n"
        f"if [ \"$1 $2 $3\" = \"-I -m pip\" ]; then shift 3; echo \"$PWD | -I $*\" >> {shlex.quote(str(log))}; "
        f"exec {real} -I -m pip --version >/dev/null; fi\n"
        f"if [ \"$1 $2\" = \"-m pip\" ]; then shift 2; echo \"$PWD | $*\" >> {shlex.quote(str(log))}; "
        f"exec {real} -m pip --version >/dev/null; fi\n"
        f"exec {real} \"$@\"\n")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    return log


def pip_calls(log: Path) -> list[str]:
    """What pip was asked, without the folder: ``-I install /path``."""
    return [line.split(" | ", 1)[1] for line in log.read_text().splitlines()] if log.exists() else []


def run_action(tmp: Path, **given: str) -> dict:
    """Run the action's steps in ``tmp`` as the runner would; return what happened."""
    inputs = action_inputs(**given)
    log = fake_pip(tmp / "bin")
    env_base = dict(os.environ, PATH=f"{tmp / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
                    f"{os.environ.get('PATH', '')}", RUNNER_TEMP=str(tmp / "runner"), CI="true",
                    GITHUB_STEP_SUMMARY=str(tmp / "summary.md"), PYTHONPATH=str(ROOT))
    (tmp / "runner").mkdir()
    outputs: dict[str, dict] = {}
    ran, used, codes, logs = [], {}, {}, {}
    for i, step in enumerate(ACTION["runs"]["steps"]):
        sid = step.get("id", f"step{i}")
        if "if" in step and not evaluate(step["if"], inputs, outputs, str(ROOT)):
            continue
        if "uses" in step:
            used[step["uses"].split("@")[0]] = {k: substitute(v, inputs, outputs, str(ROOT))
                                                for k, v in step.get("with", {}).items()}
            continue
        assert step.get("shell") == "bash", f"step {step.get('name')}: a composite run step needs shell: bash"
        assert "${{" not in step["run"], f"step {step.get('name')}: inputs reach the script through env only"
        out_file = tmp / f"output-{i}"
        out_file.touch()
        env = dict(env_base, GITHUB_OUTPUT=str(out_file),
                   **{k: substitute(v, inputs, outputs, str(ROOT)) for k, v in step.get("env", {}).items()})
        done = subprocess.run([*BASH, step["run"]], cwd=tmp, env=env, capture_output=True,
                              text=True, timeout=300)
        outputs[sid] = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
        ran.append(step.get("name"))
        codes[step.get("name")] = done.returncode
        logs[step.get("name")] = done.stdout + done.stderr
        if done.returncode != 0:
            break  # the runner stops at a failing step (the uploads run on always())
    return {"inputs": inputs, "ran": ran, "used": used, "codes": codes, "logs": logs, "outputs": outputs,
            "pip": pip_calls(log)}


#: what the audits run by the action and the hooks below are given: a small budget, and no replay
#: stage (about 0.7 CPU s a target in its own sandbox child). These tests are about the action's
#: and the hooks' wiring (steps, inputs, files passed, exit codes, reports, uploads); the replay
#: stage is tested with `dpaudit check` itself (tests/cli/test_check_replay.py), and buggy_mean is
#: refuted by the sampling alone at this budget (ε ≥ 5 against a claim of 1)
AUDIT_FLAGS = ["--samples=20000", "--no-replay"]


def workspace(tmp: Path) -> Path:
    (tmp / "examples").mkdir(parents=True)
    for name in ("laplace_sum.py", "buggy_mean.py"):
        shutil.copy(ROOT / "examples" / name, tmp / "examples" / name)
    return tmp


# -- action.yml -----------------------------------------------------------------------------------

def test_the_action_is_a_composite_action_with_documented_inputs():
    assert ACTION["runs"]["using"] == "composite"
    uses = [s["uses"].split("@")[0] for s in ACTION["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python", "github/codeql-action/upload-sarif", "actions/upload-artifact"]
    for key in ("targets", "command", "args", "float", "sarif", "junit", "version"):
        assert ACTION["inputs"][key]["description"], key
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    for used in set(re.findall(r"inputs\.([\w-]+)", text)):
        assert used in ACTION["inputs"], used
    from dpaudit.exitcodes import ExitCode

    verdict = ACTION["runs"]["steps"][-1]["run"]
    for code in ExitCode:  # every exit code of dpaudit is said in the job's log
        assert re.search(rf"^\s*{int(code)}\)|\*\)", verdict, re.M), code
    assert re.search(r"^\s*6\) .*error in the audited code.*exit 6", verdict, re.M)
    assert re.search(r"^\s*3\) .*usage error.*exit 3", verdict, re.M)


def _install(tmp_path: Path, **given: str) -> tuple[subprocess.CompletedProcess, Path]:
    """Run the install step in ``tmp_path`` (the workspace) with the fake pip; return the result
    and the pip log."""
    step = next(s for s in ACTION["runs"]["steps"] if s.get("name") == "Install dpaudit")
    bin_dir = tmp_path / "bin"
    log = fake_pip(bin_dir)
    env = {k: substitute(v, action_inputs(**given), {}, str(ROOT)) for k, v in step["env"].items()}
    done = subprocess.run([*BASH, step["run"]], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, **env, RUNNER_TEMP=str(tmp_path.parent / f"{tmp_path.name}-runner"),
                                   PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}"
                                        f"{os.pathsep}{os.environ['PATH']}"), timeout=60)
    return done, log


@pytest.mark.slow
def test_the_install_step_installs_the_actions_checkout_or_the_version(tmp_path):
    from dpaudit import __version__

    # empty, or the version the action's own checkout is: that checkout, which always exists
    for version in ("", __version__):
        work = tmp_path / f"v{version}"
        work.mkdir()
        (tmp_path / f"v{version}-runner").mkdir()
        done, log = _install(work, version=version)
        assert done.returncode == 0, done.stderr
        assert pip_calls(log) == [f"-I install {ROOT}"]
        assert done.stdout.strip().splitlines()[-1].startswith("dpaudit ")  # `dpaudit --version`
    # another version: from the package index, saying what to do when it is not there
    work = tmp_path / "other"
    work.mkdir()
    (tmp_path / "other-runner").mkdir()
    done, log = _install(work, version="99.0")
    assert pip_calls(log) == ["-I install dpaudit==99.0"]


def test_the_install_step_runs_no_pip_package_from_the_workspace(tmp_path):
    """A pull request that adds ``pip/__main__.py`` ran it, with the job's environment, when the
    step ran ``python -m pip`` in the workspace: pip is run isolated (``-I``), from outside it."""
    marker = tmp_path / "planted-pip-ran"
    work = tmp_path / "workspace"
    (work / "pip").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py"):
        (work / "pip" / name).write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (tmp_path / "workspace-runner").mkdir()
    done, log = _install(work)
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "the workspace's pip/ package ran"
    (call,) = log.read_text().splitlines()
    folder, args = call.split(" | ", 1)
    assert args.startswith("-I install ")
    assert not Path(folder).resolve().is_relative_to(work.resolve())


def test_the_run_step_builds_the_command_from_the_inputs(tmp_path):
    """With a stand-in ``dpaudit`` that records its arguments: each input reaches its flag."""
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "audit")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    argv_file = tmp_path / "argv.json"
    fake = bin_dir / "dpaudit"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\n"
                    f"sys.exit(6)\n")
    fake.chmod(0o755)
    inputs = action_inputs(targets="a.py b.py:f", args="--samples 1000 --seed 3", float="warn", html="")
    env = {k: substitute(v, inputs, {}, str(ROOT)) for k, v in step["env"].items()}
    out = tmp_path / "out"
    done = subprocess.run([*BASH, step["run"]], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, **env, GITHUB_OUTPUT=str(out), RUNNER_TEMP=str(tmp_path),
                                   PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}"), timeout=60)
    assert done.returncode == 0, done.stderr  # the verdict is acted on by the last step
    # the targets come last, after `--`: a file named like a flag is a target, never a flag
    assert json.loads(argv_file.read_text()) == [
        "check", "--float", "warn", "--sarif", "dpaudit.sarif", "--junit",
        "dpaudit-junit.xml", "--markdown", str(tmp_path / "dpaudit-summary.md"),
        "--fail-on-inconclusive", "--samples", "1000", "--seed", "3", "--", "a.py", "b.py:f"]
    assert "exit-code=6" in out.read_text().splitlines()
    env["DPAUDIT_TARGETS"] = "--in-process mech.py --pass-env=SECRET_TOKEN"
    done = subprocess.run([*BASH, step["run"]], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, **env, GITHUB_OUTPUT=str(out), RUNNER_TEMP=str(tmp_path),
                                   PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}"), timeout=60)
    argv = json.loads(argv_file.read_text())
    assert argv[argv.index("--"):] == ["--", "--in-process", "mech.py", "--pass-env=SECRET_TOKEN"]
    # an inconclusive result may pass the job only when the workflow says so
    env["DPAUDIT_FAIL_ON_INCONCLUSIVE"] = "false"
    done = subprocess.run([*BASH, step["run"]], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, **env, GITHUB_OUTPUT=str(out), RUNNER_TEMP=str(tmp_path),
                                   PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}"), timeout=60)
    assert "--fail-on-inconclusive" not in json.loads(argv_file.read_text())
    # one target a line: a library target keeps its spaces
    env["DPAUDIT_TARGETS"] = "a.py\n  lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))  \n\n"
    done = subprocess.run([*BASH, step["run"]], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, **env, GITHUB_OUTPUT=str(out), RUNNER_TEMP=str(tmp_path),
                                   PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}"), timeout=60)
    assert done.returncode == 0, done.stderr
    argv = json.loads(argv_file.read_text())
    assert argv[argv.index("--"):] == ["--", "a.py", "lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))"]


def _verdict(code: str, **given: str) -> subprocess.CompletedProcess:
    """The Verdict step, run after dpaudit exited ``code`` (``""``: the run step never said)."""
    step = ACTION["runs"]["steps"][-1]
    assert step["name"] == "Verdict"
    outputs = {"audit": {"exit-code": code}}
    env = {k: substitute(v, action_inputs(**given), outputs, str(ROOT)) for k, v in step.get("env", {}).items()}
    return subprocess.run([*BASH, step["run"]], env=dict(os.environ, **env), capture_output=True,
                          text=True, timeout=30)


def test_the_gate_fails_closed_unless_the_workflow_lets_an_undecided_audit_pass():
    """INCONCLUSIVE (a timed-out audit) and an interrupted run decided nothing: the job fails on
    them unless ``fail-on-inconclusive: false``; every other code but 0 fails it whatever the
    inputs, an unknown one and a missing one too."""
    from dpaudit.exitcodes import ExitCode

    undecided = {int(ExitCode.INCONCLUSIVE)}
    if hasattr(ExitCode, "INTERRUPTED"):
        undecided.add(int(ExitCode.INTERRUPTED))
    assert ACTION["inputs"]["fail-on-inconclusive"]["default"] == "true"
    for code in [*(str(int(c)) for c in ExitCode), "9", "130", "143", "255", ""]:
        strict = _verdict(code)
        assert (strict.returncode == 0) == (code == "0"), (code, strict.stdout)
        if code != "0":
            assert "::error title=dpaudit::" in strict.stdout, (code, strict.stdout)
        lenient = _verdict(code, fail_on_inconclusive="false")
        passes = code == "0" or (code.isdigit() and int(code) in undecided)
        assert (lenient.returncode == 0) == passes, (code, lenient.stdout)
        if code.isdigit() and int(code) in undecided:
            assert "::warning title=dpaudit::" in lenient.stdout, lenient.stdout
    assert "inconclusive" in _verdict(str(int(ExitCode.INCONCLUSIVE))).stdout


def test_a_refused_sarif_upload_does_not_fail_the_job():
    """A pull request from a fork gets a read-only token: code scanning refuses its upload, and
    the job must still end on dpaudit's verdict."""
    (step,) = [s for s in ACTION["runs"]["steps"]
               if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")]
    assert step.get("continue-on-error") is True


@pytest.mark.slow
def test_the_action_audits_a_correct_mechanism_and_uploads_its_reports(tmp_path):
    got = run_action(workspace(tmp_path), targets="examples/laplace_sum.py", args=" ".join(AUDIT_FLAGS))
    assert got["ran"] == ["Install dpaudit", "Run dpaudit", "Verdict"], got["logs"]
    assert got["pip"] == [f"-I install {ROOT}"]
    assert got["codes"]["Verdict"] == 0, got["logs"]
    assert "examples/laplace_sum.py:noisy_sum: NOT REFUTED" in got["logs"]["Run dpaudit"]
    assert got["outputs"]["audit"]["exit-code"] == "0"
    assert got["used"]["actions/setup-python"] == {"python-version": "3.11"}
    assert got["used"]["github/codeql-action/upload-sarif"] == {"sarif_file": "dpaudit.sarif",
                                                                 "category": "dpaudit"}
    assert got["used"]["actions/upload-artifact"]["path"].split() == [
        "dpaudit-junit.xml", "dpaudit-report.html", "dpaudit.sarif"]
    sarif = json.loads((tmp_path / "dpaudit.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert "<testsuite" in (tmp_path / "dpaudit-junit.xml").read_text()
    assert (tmp_path / "dpaudit-report.html").stat().st_size > 0
    assert "NOT REFUTED" in (tmp_path / "summary.md").read_text()  # the job summary


@pytest.mark.slow
def test_the_action_fails_the_job_on_a_refuted_claim_after_uploading(tmp_path):
    got = run_action(workspace(tmp_path), targets="examples/buggy_mean.py", args=" ".join(AUDIT_FLAGS),
                     python_version="", upload_sarif="true")
    assert "actions/setup-python" not in got["used"]  # python-version "" uses the runner's
    assert got["outputs"]["audit"]["exit-code"] == "1"
    assert got["codes"]["Verdict"] == 1
    assert "::error title=dpaudit::a privacy claim was refuted" in got["logs"]["Verdict"]
    assert "github/codeql-action/upload-sarif" in got["used"]  # uploaded before the job fails
    results = json.loads((tmp_path / "dpaudit.sarif").read_text())["runs"][0]["results"]
    assert results and all(r["locations"] for r in results)


# -- .pre-commit-hooks.yaml -----------------------------------------------------------------------

def _hook(hook_id: str) -> dict:
    (hook,) = [h for h in HOOKS if h["id"] == hook_id]
    return hook


def selected(hook: dict, paths: list[str]) -> list[str]:
    """The staged files pre-commit passes to ``hook``: its ``files`` pattern (re.search), not its
    ``exclude``, and of its ``types`` (here: Python files)."""
    files = re.compile(hook.get("files", ""))
    exclude = re.compile(hook["exclude"]) if hook.get("exclude") else None
    assert hook.get("types") == ["python"]
    return [p for p in paths if p.endswith(".py") and files.search(p) and not (exclude and exclude.search(p))]


def run_hook(hook: dict, repo: Path, args: list[str], staged: list[str]) -> subprocess.CompletedProcess:
    """The hook as pre-commit runs it: entry + args (+ the selected files), from the repository root."""
    cmd = shlex.split(hook["entry"]) + args + (selected(hook, staged) if hook.get("pass_filenames", True) else [])
    return subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, CI="true", PYTHONPATH=str(ROOT),
                                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"))


def test_the_hooks_are_python_hooks_running_dpaudit_check():
    assert [h["id"] for h in HOOKS] == ["dpaudit-check", "dpaudit-check-targets"]
    for hook in HOOKS:
        assert hook["language"] == "python" and shlex.split(hook["entry"])[:2] == ["dpaudit", "check"]
        assert hook["require_serial"] is True
        # an audit that decided nothing stops the commit (a mechanism can force INCONCLUSIVE)
        assert "--fail-on-inconclusive" in shlex.split(hook["entry"])
    assert _hook("dpaudit-check")["pass_filenames"] is True
    assert _hook("dpaudit-check-targets")["pass_filenames"] is False
    assert selected(_hook("dpaudit-check"), [
        "mechanisms/noisy_sum.py", "src/pkg/mechanism.py", "mechanism_sum.py", "mechanisms.py",
        "README.md", "src/utils.py", "tests/test_x.py", "mechanisms/data.csv"]) == [
        "mechanisms/noisy_sum.py", "src/pkg/mechanism.py", "mechanism_sum.py", "mechanisms.py"]


@pytest.mark.slow
def test_the_changed_files_hook_audits_the_staged_mechanisms(tmp_path):
    (tmp_path / "mechanisms").mkdir()
    shutil.copy(ROOT / "examples" / "laplace_sum.py", tmp_path / "mechanisms" / "noisy_sum.py")
    shutil.copy(ROOT / "examples" / "buggy_mean.py", tmp_path / "mechanisms" / "mean.py")
    hook = _hook("dpaudit-check")
    ok = run_hook(hook, tmp_path, AUDIT_FLAGS, ["README.md", "mechanisms/noisy_sum.py"])
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("mechanisms/noisy_sum.py:noisy_sum: NOT REFUTED")
    bad = run_hook(hook, tmp_path, AUDIT_FLAGS, ["mechanisms/noisy_sum.py", "mechanisms/mean.py"])
    assert bad.returncode == 1, bad.stdout + bad.stderr  # the commit is stopped
    assert "mechanisms/mean.py:buggy_mean: REFUTED" in bad.stdout


@pytest.mark.slow
def test_the_configured_targets_hook_audits_its_args(tmp_path):
    workspace(tmp_path)
    done = run_hook(_hook("dpaudit-check-targets"), tmp_path,
                    ["examples/laplace_sum.py", *AUDIT_FLAGS], ["anything.py"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("examples/laplace_sum.py:noisy_sum: NOT REFUTED")


# -- the documented workflow and hook configuration use what is shipped ----------------------------

def _yaml_blocks(path: Path) -> list:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)]


def test_the_documented_workflow_and_hooks_use_the_shipped_inputs_and_ids():
    docs = ROOT / "docs" / "ci.md"
    blocks = _yaml_blocks(docs) + _yaml_blocks(ROOT / "README.md")
    workflow = next(b for b in blocks if isinstance(b, dict) and "jobs" in b)
    assert workflow["permissions"]["security-events"] == "write"  # what upload-sarif needs
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    snippets = [s for b in blocks if isinstance(b, list) for s in b if isinstance(s, dict) and "uses" in s]
    ours = [s for s in steps + snippets if str(s.get("uses", "")).startswith("./")]
    assert len(ours) >= 2  # the workflow's and the README's
    for step in ours:
        assert set(step["with"]) <= set(ACTION["inputs"]), step["with"]
    for name in re.findall(r"steps\.dpaudit\.outputs\.([\w-]+)", docs.read_text(encoding="utf-8")):
        assert name in ACTION["outputs"]
    configs = [b for b in blocks if isinstance(b, dict) and "repos" in b]
    used = {h["id"] for c in configs for r in c["repos"] for h in r["hooks"]}
    assert used == {h["id"] for h in HOOKS}


def test_the_documented_workflow_is_copyable_as_is():
    """No owner to fill in: the action is checked out at a pinned ref of this repository (out of a
    pull request's reach) and used by its path; it fails closed on an undecided audit, installs a
    dpaudit that exists, and audits files that exist here."""
    from dpaudit import __version__

    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    workflow = next(b for b in _yaml_blocks(ROOT / "docs" / "ci.md") if isinstance(b, dict) and "jobs" in b)
    assert "OWNER" not in yaml.safe_dump(workflow)
    (job,) = [j for j in workflow["jobs"].values() if any(str(s.get("uses", "")).startswith("./") for s in j["steps"])]
    steps = job["steps"]
    (i, audit), = [(i, s) for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("./")]
    folder = audit["uses"][2:].rstrip("/")
    checkouts = [s for s in steps[:i] if str(s.get("uses", "")).startswith("actions/checkout@")]
    action_checkout = [s for s in checkouts if s.get("with", {}).get("path", "").rstrip("/") == folder]
    assert action_checkout and action_checkout[0]["with"].get("ref"), "the action at a pinned ref"
    assert "repository" not in action_checkout[0]["with"]  # this repository: nothing to fill in
    inputs = audit["with"]
    assert inputs.get("fail-on-inconclusive", "true") == "true"  # the default: fails closed
    assert inputs.get("version", "") in ("", __version__)
    for target in str(inputs["targets"]).split():
        assert (ROOT / target.split(":")[0]).is_file(), target
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif")]
    for step in uploads:  # a fork's read-only token cannot upload: never the job's failure
        assert step.get("continue-on-error") is True or "head.repo.full_name" in str(step.get("if", ""))
    assert "INCONCLUSIVE" in text and "fail-on-inconclusive" in text
    assert re.search(r"`dpaudit check [^`]*-- FILE \.\.\.`", text)  # the form for untrusted file lists
