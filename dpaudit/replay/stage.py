"""The gray-box replay in the check pipeline (:mod:`dpaudit.pipeline`): as the engine of a
target (``--replay``: :class:`ReplayAudit`) and as the stage before a sampled audit
(:class:`ReplayStage`, the default; ``--no-replay`` skips it).

Both run :func:`dpaudit.replay.command.run_replay` where the mechanism runs (the sandbox child or
this process); a library target goes through :func:`library_replay` (an OpenDP chain to the
stability check, :func:`dpaudit.stability.check_target`, any other to
:func:`dpaudit.replay_audit` on the adapter's function). What the stage's record says about the target's verdict is
:func:`verdict_of_stage`, which the pipeline applies once when it decides the verdict.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Optional

from dpaudit.replay.command import before_sampling, finished, flags, refused, run_replay
from dpaudit.replay.result import RECORD_KIND
from dpaudit.results import Verdict, error_record

__all__ = ["ReplayAudit", "ReplayStage", "library_replay", "verdict_of_stage"]


def _reproduce(run: Any, nonfinite: bool, cut: bool = False) -> str:
    """The replay's rerun line; ``cut``: the time limit stopped its search, so the line carries
    ``--timeout`` (the pairs it tried depend on the limit)."""
    from dpaudit.reproduce import check_line

    claim = run.target.claim_flags(run.spec)
    return check_line(run.target.name, flags(run.spec, nonfinite=nonfinite, claim=claim),
                      seed=int(run.settings.seed), in_process=run.target.in_process_flag,
                      settings=run.settings, timeout=run.settings.timeout if cut else None)


def _replay(run: Any, nonfinite: bool, timeout: Optional[float], *, engine: bool) -> dict:
    """The replay record of the run's target under its claim, within ``timeout`` (as the
    target's engine, it names the isolation it ran under)."""
    target, reproduce = run.target, _reproduce(run, nonfinite)
    if target.library is not None:
        rec = library_replay(run.spec, run.settings.seed, target.name, nonfinite, timeout,
                             reproduce)
    else:
        rec = run_replay(run.spec, run.settings, target.name, func=target.func,
                         executor=target.executor, nonfinite=nonfinite, timeout=timeout,
                         isolation=target.isolation if engine else None,
                         reproduce=reproduce).to_record()
    if isinstance(rec, dict) and any(isinstance(f, dict) and f.get("kind") == "time_limit"
                                     for f in rec.get("findings") or ()):
        rec["reproduce"] = _reproduce(run, nonfinite, cut=True)  # reran without it: all the pairs
    return rec


class ReplayAudit:
    """``--replay``: the replay audit alone is the target's engine (an (ε, δ) claim only)."""

    name = "replay"

    @classmethod
    def wanted(cls, settings: Any, target: Any) -> bool:
        return settings.replay is not None

    def flags(self, run: Any) -> list[str]:
        return flags(run.spec, nonfinite=self._nonfinite(run),
                     claim=run.target.claim_flags(run.spec))

    @staticmethod
    def _nonfinite(run: Any) -> bool:
        return bool((run.settings.replay or {}).get("nonfinite"))

    def run(self, run: Any) -> None:
        run.begin("replay")
        if run.target.curve:
            key = next(iter(run.target.curve))
            name = run.target.name
            run.outcomes[self.name] = error_record(
                RECORD_KIND, name, f"the replay audits an (ε, δ) claim and {name} states its "
                f"claim as a curve ({key}=): give --epsilon (and --delta) with --replay, or audit "
                f"the curve without --replay")
            return
        run.outcomes[self.name] = _replay(run, self._nonfinite(run), run.left(), engine=True)


class ReplayStage:
    """The replay before a sampled audit: at most :data:`dpaudit.replay.command.STAGE_SHARE` of
    the time left; the pairs its findings point at are sampled first (``run.spec`` gains them,
    :func:`dpaudit.replay.command.first_pairs`)."""

    name = "replay stage"

    def run(self, run: Any) -> None:
        run.begin("replay stage" if run.settings.replay_stage else "sampling")
        if run.failure is not None:  # the mechanism failed already: the audit reports it
            run.outcomes[self.name] = None
            return
        ticking = getattr(run.progress, "ticking", None)
        per_call = run.partial.get("seconds_per_call")
        spec = run.spec

        def replay(timeout: Optional[float]) -> dict:
            return _replay(run, False, timeout, engine=False)

        with nullcontext() if ticking is None else ticking(per_call):
            stage, run.spec = before_sampling(spec, run.settings, run.target.name, replay,
                                              run.left(), run.progress)
        run.outcomes[self.name] = stage
        if stage is not None:
            run.finished("replay", stage.get("verdict"))
            run.partial["replay"] = stage


def library_replay(spec: Any, seed: int, name: str, nonfinite: bool, remaining: Optional[float],
                   reproduce: str) -> dict:
    """The replay record of one library target (kind ``"replay"``): an OpenDP target by the
    stability check, :func:`dpaudit.stability.check_target`, any other by
    :func:`dpaudit.replay_audit` on the adapter's function (diffprivlib's mechanisms are
    intercepted), under the library's claim."""
    from dpaudit.errors import DpauditError
    from dpaudit.replay.audit import replay_audit
    from dpaudit.stability import check_target, opendp_of

    timeout = {} if remaining is None else {"timeout": max(remaining, 0.001)}
    label = getattr(spec, "name", None) or name  # as the sampled audit names it
    try:
        if opendp_of(spec) is not None:
            result = check_target(spec, seed=seed, name=label, nonfinite=nonfinite, **timeout)
        else:
            result = replay_audit(spec.func, epsilon=spec.epsilon, delta=spec.delta,
                                  neighbours=spec.neighbours, domain=spec.domain, size=spec.size,
                                  seed=seed, nonfinite=nonfinite, name=label, **timeout)
    except DpauditError as exc:  # the library refused: an ERROR of the target
        return error_record(RECORD_KIND, name, str(exc), reproduce=reproduce,
                            isolation="none (in process)")
    return finished(result, reproduce=reproduce, isolation="none (in process)").to_record()


def verdict_of_stage(sampled: dict, stage: dict) -> Optional[dict]:
    """What the replay stage's record says of the target's verdict, given the sampled audit's
    record; None when it leaves it as the sampling found it. A declared sensitivity exceeded at a
    call site (the replay's REFUTED) refutes the target even where the sampling did not confirm
    it (``decided_by = "replay"``; the ε lower bound stays the sampling's, the replay gives
    none). An exact privacy loss above the claim (``exact_loss_exceeded``,
    :mod:`dpaudit.replay.exact`) decides even where the sampling refutes too: it is
    deterministic, and its ε is in the stage's finding (``values.epsilon_exact``). A stage record
    refused from the child (:func:`~dpaudit.replay.command.refused`) is ERROR, the sampled
    audit's numbers kept, and so is a stage ERROR for noise drawn from a generator dpaudit did not
    hand over (:mod:`dpaudit.replay.outside`): what the sampling saw is not what the mechanism
    releases. The replay's other findings are reported beside the verdict, never in it."""
    from dpaudit.replay.outside import MARK
    from dpaudit.reproduce import OWN_RANDOMNESS_NOTE

    was = sampled.get("verdict")
    if was == Verdict.ERROR.value:
        return None
    # an ERROR has no bound: its rerun line drops the sampling's "(the bound stays valid)" note
    line = str(sampled.get("reproduce") or "").split(f"  # {OWN_RANDOMNESS_NOTE}")[0]
    if refused(stage):
        said = str(was or "no verdict").replace("_", " ").upper()
        return {"verdict": Verdict.ERROR.value, "decided_by": "replay", "reproduce": line,
                "error": f"the replay stage was refused: {stage.get('error')} (the sampling alone: {said})"}
    if stage.get("verdict") == Verdict.ERROR.value and MARK in str(stage.get("error") or ""):
        return {"verdict": Verdict.ERROR.value, "decided_by": "replay", "reproduce": line,
                "error": str(stage.get("error"))}
    exact = stage.get("verdict") == Verdict.REFUTED.value and any(
        isinstance(f, dict) and f.get("kind") == "exact_loss_exceeded"
        for f in stage.get("findings") or ())
    if stage.get("verdict") != Verdict.REFUTED.value or not (
            was in (Verdict.NOT_REFUTED.value, Verdict.INCONCLUSIVE.value)
            or (exact and was == Verdict.REFUTED.value)):
        return None
    out: dict = {"verdict": Verdict.REFUTED.value, "decided_by": "replay"}
    if stage.get("location") and (exact or not sampled.get("location")):
        out["location"] = stage["location"]
    return out
