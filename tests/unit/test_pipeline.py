"""The check pipeline (dpaudit/pipeline/): ``dpaudit.check()`` writes the record ``dpaudit check
--in-process`` writes, the plan picks one engine per target from ENGINES, engines plug in with
their own module plus one registration line, and the result is frozen."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

import dpaudit
from dpaudit.pipeline.plan import ENGINES, load, plan_for
from dpaudit.pipeline.stages import Engine, Stage
from dpaudit.report import make_run

ROOT = Path(__file__).resolve().parents[2]
#: fields that measure time, not the audit: they differ between any two runs
TIMINGS = {"elapsed_s", "seconds", "wall_s", "cpu_s", "estimated_seconds", "seconds_per_call",
           "started", "finished"}

LEAKY = '''
import numpy as np

import dpaudit

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 4), size=5)
def total(data, rng):
    return np.sum(data) + rng.laplace(scale=1.0)  # records up to 4, noise for 1
'''


def _timeless(value):
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _differences(a, b, path: str = "") -> list[str]:
    """Where two records differ, as paths (the assertion's message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str) for d in _differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {str(a)[:120]} != {str(b)[:120]}"]


def _as_written(record: dict) -> dict:
    """A record as the JSON report writes it (make_run adds what a report adds)."""
    return make_run([record], seed=0, started=0.0, finished=1.0, command="x", git=False)["results"][0]


def _cli_record(tmp_path: Path, target: str, *flags: str) -> dict:
    from cli_in_process import dpaudit as in_process  # the command's entry point in this process

    out = tmp_path / "out.json"
    done = in_process("check", target, "--in-process", "--quiet", "--json", out, *flags, cwd=tmp_path)
    assert out.exists(), done.stderr
    return json.loads(out.read_text())["results"][0]


@pytest.mark.slow
def test_dpaudit_check_gives_the_record_the_command_writes(tmp_path, monkeypatch):
    """Same target, same seed: the Python entry and ``dpaudit check --in-process`` give one record
    (the replay stage, which decides this leaky sum's verdict exactly, included)."""
    (tmp_path / "leaky.py").write_text(LEAKY)
    cli = _cli_record(tmp_path, "leaky.py:total", "--seed=5", "--samples=6000")
    monkeypatch.chdir(tmp_path)
    result = dpaudit.check("leaky.py:total", seed=5, samples=6000)
    py = _as_written(result.to_record())
    assert cli["verdict"] == "refuted" and cli["decided_by"] == "replay" and "replay" in cli
    assert _timeless(py) == _timeless(cli), _differences(_timeless(py), _timeless(cli))
    assert result.verdict is dpaudit.Verdict.REFUTED and result.kind == "audit"
    assert result.stages == ("replay stage", "sampling")
    assert isinstance(result.result, dpaudit.AuditResult)
    assert result.reproduce == cli["reproduce"]


def test_a_function_is_checked_under_the_name_its_file_gives_it(tmp_path, monkeypatch):
    (tmp_path / "leaky.py").write_text(LEAKY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import leaky  # noqa: E402 - the file written just above

    by_function = dpaudit.check(leaky.total, seed=5, samples=3000, replay_stage=False)
    by_name = dpaudit.check("leaky.py:total", seed=5, samples=3000, replay_stage=False)
    assert by_function.target == by_name.target == "leaky.py:total"
    assert _timeless(by_function.to_record()) == _timeless(by_name.to_record())


def test_a_check_result_is_frozen_and_its_record_a_copy():
    result = dpaudit.CheckResult(record={"kind": "audit", "verdict": "error", "target": "t"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.record = {}  # type: ignore[misc]
    rec = result.to_record()
    rec["verdict"] = "refuted"
    assert result.verdict is dpaudit.Verdict.ERROR


def test_an_unknown_keyword_is_one_clear_error():
    with pytest.raises(dpaudit.InvalidArgument, match="unknown keyword 'epsilom'"):
        dpaudit.check("x.py", epsilom=1)


class _Settings:
    def __init__(self, **kw):
        self.sensitivity = kw.get("sensitivity")
        self.replay = kw.get("replay")
        self.replay_stage = kw.get("replay_stage", True)
        self.seed, self.samples = 1, None


class _Target:
    def __init__(self, curve=None, fresh=None):
        self.curve, self.fresh = curve or {}, fresh


@pytest.mark.parametrize("settings, target, engine, stages", [
    (_Settings(sensitivity={"bound": 1}), _Target(), "sensitivity", ("sensitivity",)),
    (_Settings(replay={"nonfinite": False}), _Target(), "replay", ("replay",)),
    (_Settings(), _Target(curve={"rho": 0.5}), "curve", ("curve",)),
    (_Settings(), _Target(), "sampling", ("replay stage", "sampling")),
    (_Settings(), _Target(fresh=object()), "sampling",
     ("fresh processes", "replay stage", "sampling", "fresh verdict")),
])
def test_the_plan_picks_the_first_engine_that_wants_the_target(settings, target, engine, stages):
    plan = plan_for(settings, target)
    assert plan.engine.name == engine and plan.names == stages


def test_every_engine_has_the_protocol_and_lives_in_its_own_folder():
    for path in ENGINES:
        cls = load(path)
        assert isinstance(cls(), Engine) and isinstance(cls(), Stage), path
        module = path.partition(":")[0]
        # an engine's stage is in its engine's package (the sampled audit's is the pipeline's own)
        assert module.endswith(".stage") or module == "dpaudit.pipeline.stages", path


@pytest.mark.slow
def test_the_curve_engine_is_registered_by_one_line():
    """Adding an engine touches its own folder plus registration lines: the curve engine's class
    is named in dpaudit/ only by its module and one line of ENGINES."""
    uses = []
    for path in (ROOT / "dpaudit").rglob("*.py"):
        if path.parent.name == "curves" and path.name == "stage.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "CurveAudit" in node.value:
                uses.append(str(path.relative_to(ROOT)))
            elif isinstance(node, ast.Name) and node.id == "CurveAudit":
                uses.append(str(path.relative_to(ROOT)))
    assert uses == ["dpaudit/pipeline/plan.py"]


@pytest.mark.parametrize("where", [
    "dpaudit.results:AuditResult", "dpaudit.curves.result:CurveResult",
    "dpaudit.sensitivity.result:SensitivityResult", "dpaudit.formal.result:FormalResult",
    "dpaudit.sweep.result:SweepResult", "dpaudit.onerun.result:OneRunResult",
    "dpaudit.replay.result:ReplayResult", "dpaudit.pipeline.result:CheckResult"])
def test_every_result_class_has_the_one_result_protocol(where):
    """kind, verdict, target, reproduce and to_record: as a field or an attribute of the class."""
    cls = load(where)
    names = {f.name for f in dataclasses.fields(cls)}
    for attr in ("kind", "verdict", "target", "reproduce", "to_record"):
        assert attr in names or hasattr(cls, attr), f"{where} has no {attr}"


def test_a_replay_record_names_only_the_libraries_the_mechanism_called():
    """A DP library imported by the process (here by an earlier import) but never called by the
    mechanism is not named: a record does not depend on what else the process loaded."""
    pytest.importorskip("diffprivlib")
    import numpy as np

    from dpaudit.replay import replay_audit

    def plain(data, rng):
        return float(np.sum(data) + rng.laplace(scale=1.0))

    rec = replay_audit(plain, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3,
                       seed=1).to_record()
    assert rec["libraries"] == []
