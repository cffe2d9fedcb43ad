"""What a library sweep records: one :class:`Case` per object built and checked (or skipped, with
why), grouped per constructor in a :class:`SweepResult`, written as it goes (:class:`Journal`).

A case's ``verdict`` is one of ``refuted`` (a map the library declares does not hold: a stability
map exceeded on a pair, exactly; or a privacy claim refuted by sampling at the sweep's
family-wise confidence), ``not_refuted`` (checked: nothing found within the budget; ``bound``
says how close the evidence came), ``inconclusive`` (checked, no verdict: a time limit), ``error``
(the library raised on an input of its own domain, or an output dpaudit cannot read), or
``skipped`` (not built or not checkable; ``reason`` says why).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from dpaudit.results import jsonable

__all__ = ["Case", "SweepResult", "Journal", "VERDICTS"]

#: the verdicts a case can have, worst first
VERDICTS = ("refuted", "error", "inconclusive", "not_refuted", "skipped")


@dataclass
class Case:
    """One object the sweep built (or tried to): ``constructor`` (``opendp.measurements.make_laplace``),
    ``params`` (each as the code that builds it), the ``claim`` as the library declares it, the
    ``check`` run (``privacy`` by sampling, ``stability`` by exact distances on searched pairs),
    its ``verdict``, the ``bound`` (the strongest evidence as a number: ε_LB, ρ_LB, or the largest
    d_out / map(d_in)), ``evidence`` (the pair, the event), ``seconds`` (CPU seconds of the
    check), ``reason`` (for a skip or an error), ``code`` (Python that builds the object with the
    library alone) and, for a refutation, the ``reproduction`` and whether it ``confirmed``."""

    constructor: str
    params: dict
    claim: Optional[str] = None
    check: Optional[str] = None
    verdict: str = "skipped"
    bound: Optional[float] = None
    evidence: Optional[dict] = None
    seconds: float = 0.0
    reason: Optional[str] = None
    code: Optional[str] = None
    reproduction: Optional[str] = None
    confirmed: Optional[bool] = None
    details: dict = field(default_factory=dict)

    def row(self) -> dict:
        """The row of ``opendp_sweep.json``: constructor, params, claim, verdict, bound, seconds
        (then the check, the reason and the evidence)."""
        return jsonable({"constructor": self.constructor, "params": self.params, "claim": self.claim,
                         "verdict": self.verdict, "bound": self.bound, "seconds": round(self.seconds, 3),
                         "check": self.check, "reason": self.reason, "evidence": self.evidence,
                         "confirmed": self.confirmed, **({"details": self.details} if self.details else {})})


def _short(text: Any, width: int) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= width else s[: width - 1] + "…"


@dataclass
class SweepResult:
    """The cases of one sweep, in the order they ran; ``library``, ``version``, ``seed`` and the
    settings it ran with."""

    library: str
    version: str
    seed: int
    settings: dict
    cases: list = field(default_factory=list)
    elapsed_s: float = 0.0
    skipped_constructors: dict = field(default_factory=dict)

    #: the record kind (the result protocol of :class:`dpaudit.results.Result`)
    kind = "sweep"

    @property
    def target(self) -> str:
        return self.library

    @property
    def verdict(self) -> str:
        """The worst verdict of the cases (refuted over error over inconclusive over not refuted;
        ``"skipped"`` when every case was skipped)."""
        n = self.counts()
        return next((v for v in VERDICTS if n[v]), "skipped")

    @property
    def reproduce(self) -> str:
        """The command that runs the sweep again with its seed."""
        import shlex

        return shlex.join(["dpaudit", "sweep", self.library, "--seed", str(int(self.seed))])

    @property
    def refutations(self) -> list:
        return [c for c in self.cases if c.verdict == "refuted"]

    def constructors(self) -> list[str]:
        seen: dict = {}
        for c in self.cases:
            seen.setdefault(c.constructor, None)
        return list(seen)

    def by_constructor(self) -> dict:
        out: dict = {}
        for c in self.cases:
            out.setdefault(c.constructor, []).append(c)
        return out

    def counts(self) -> dict:
        """Cases per verdict, and ``float64_refuted``: the cases whose float64 outputs are porous
        (a finding apart from the map's verdict)."""
        out = {v: 0 for v in VERDICTS}
        for c in self.cases:
            out[c.verdict] = out.get(c.verdict, 0) + 1
        out["float64_refuted"] = sum(1 for c in self.cases
                                     if ((c.details or {}).get("float64") or {}).get("verdict") == "refuted")
        return out

    def summary_row(self, name: str, cases: list) -> dict:
        """One constructor's line: the cases per verdict, the worst verdict, the strongest evidence
        (the largest bound among checked cases) and the CPU seconds."""
        worst = min((VERDICTS.index(c.verdict) for c in cases), default=len(VERDICTS) - 1)
        checked = [c for c in cases if c.verdict in ("refuted", "not_refuted", "inconclusive")]
        strongest = max(checked, key=lambda c: -1 if c.bound is None else c.bound, default=None)
        return {"constructor": name, "verdict": VERDICTS[worst], "cases": len(cases),
                "checked": len(checked), "seconds": round(sum(c.seconds for c in cases), 3),
                "strongest": None if strongest is None else {
                    "check": strongest.check, "bound": strongest.bound, "claim": strongest.claim,
                    "params": strongest.params}}

    def table(self, width: int = 100) -> str:
        """A table per constructor: each case built (its parameters), the declared map, the
        verdict, the strongest evidence and the time; then the totals."""
        lines = [f"{self.library} {self.version}: {len(self.constructors())} constructors, "
                 f"{len(self.cases)} cases, seed {self.seed}"]
        for name, cases in self.by_constructor().items():
            s = self.summary_row(name, cases)
            lines.append("")
            lines.append(f"{name}: {s['verdict'].upper().replace('_', ' ')} ({s['checked']} checked of "
                         f"{s['cases']}, {s['seconds']:.1f} s CPU)")
            for c in cases:
                what = ", ".join(f"{k}={v}" for k, v in c.params.items()) or "(no parameters)"
                head = f"  {c.verdict.upper().replace('_', ' '):12} {c.seconds:6.1f}s  {_short(what, width)}"
                lines.append(head)
                if c.claim:
                    lines.append(f"      declared: {_short(c.claim, width)}")
                if c.bound is not None:
                    lines.append(f"      evidence: {c.check}: {_short(_evidence_text(c), width)}")
                flt = (c.details or {}).get("float64")
                if flt and flt.get("verdict") == "refuted":
                    lines.append(f"      float64: REFUTED apart from the map (ε_LB = {flt['epsilon_lower_bound']:.4g}): "
                                 f"{_short(flt.get('event'), width - 40)}")
                if c.reason:
                    lines.append(f"      why: {_short(c.reason, width)}")
        n = self.counts()
        lines.append("")
        lines.append("total: " + ", ".join(f"{v.replace('_', ' ')} {n[v]}" for v in VERDICTS)
                     + f"; float64 porous {n['float64_refuted']}; {self.elapsed_s:.1f} s CPU")
        return "\n".join(lines)

    def to_record(self) -> dict:
        return jsonable({"library": self.library, "version": self.version, "seed": self.seed,
                         "settings": self.settings, "counts": self.counts(),
                         "elapsed_s": round(self.elapsed_s, 3),
                         "constructors": [self.summary_row(k, v) for k, v in self.by_constructor().items()],
                         "skipped_constructors": self.skipped_constructors,
                         "cases": [c.row() for c in self.cases]})


def _evidence_text(c: Case) -> str:
    e = c.evidence or {}
    if c.check == "stability":
        return (f"largest d_out / map(d_in) = {c.bound:.6g}" + (f" at {e.get('part')}" if e.get("part") else "")
                + (f" on D = {e.get('dataset')}, D′ = {e.get('neighbour')}" if e.get("dataset") is not None else ""))
    text = f"{e.get('bound_name', 'ε_LB')} = {c.bound:.6g}"
    if e.get("claimed") is not None:
        text += f" (claimed {e['claimed']:.6g})"
    if e.get("event"):
        text += f", event {e['event']}"
    if e.get("dataset") is not None:
        text += f" on D = {e['dataset']}, D′ = {e['neighbour']}"
    return text


class Journal:
    """Writes each case as one JSON line as soon as it is known (``path``), so that a sweep that
    is stopped keeps what it found; :meth:`load` reads them back."""

    def __init__(self, path: Optional[os.PathLike]) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")

    def write(self, case: Case) -> None:
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(case.row(), allow_nan=False) + "\n")

    @staticmethod
    def load(path: os.PathLike) -> list[dict]:
        return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (a check's cost on the machine)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def wall() -> float:
    return time.perf_counter()


def rows(cases: Iterable[Case]) -> list[dict]:
    return [c.row() for c in cases]
