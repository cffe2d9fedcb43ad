"""Progress of ``dpaudit check`` on a terminal, and its one-line summaries.

While an audit runs, one status line on stderr is redrawn in place (at most ten times a second)::

    examples/buggy_mean.py:buggy_mean · validate · candidate 3 · 400,000/4,000,000 samples · 2.1M samples/s · ε ≥ 2.31

It names the current target, the auditor's phase, the candidate pair, the samples drawn so far
out of the budget and the rate since the target started (across every worker of a parallel or
Dask executor), and the validated lower bound (or, before validation, the bound the selection
split projects). These are the fields of :func:`dpaudit.audit`'s progress events (``phase``,
``candidate``, ``samples``, ``budget``, ``estimate``, ``epsilon_lb``); unknown fields are ignored and
missing ones left out. The line is drawn only when stderr is a terminal, ``CI`` is not
set and ``--quiet`` was not given, so logs and pipes stay clean.

Whatever the mode, each finished target gets one summary line on stdout
(:func:`dpaudit.report.describe.one_line`, then :func:`strength_text`: the claim's p-value and
margin, MARGINAL with how to confirm it, what the budget could have seen, and a warning when the
mechanism draws its own randomness), and the run ends with the command that reproduces each
result, so a CI log always shows the verdict and how to reproduce it.
"""

from __future__ import annotations

import os
import re
import sys
import time
from typing import Any, Mapping, Optional, Sequence, TextIO

__all__ = ["Progress", "progress_enabled", "strength_text"]

#: Seconds between two redraws of the status line.
_REDRAW_EVERY = 0.1
#: an audit estimated to take at least this many seconds prints its estimate on a line of its own
ESTIMATE_SHOWN = 60.0


def progress_enabled(stream: TextIO, *, quiet: bool = False,
                     environ: Optional[Mapping[str, str]] = None) -> bool:
    """True when a live status line belongs on ``stream``: a TTY, no ``CI`` variable (any
    non-empty value but ``0``/``false``), and not ``quiet``."""
    env = os.environ if environ is None else environ
    ci = env.get("CI", "").strip().lower()
    if quiet or (ci and ci not in ("0", "false", "no")):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


class Progress:
    """The status line and the per-target summaries of one ``dpaudit check`` run.

    Call :meth:`start` when a target begins, pass the instance as the auditor's ``progress``
    callback (it is called with one event dict at a time), call :meth:`finish` with the target's
    record when it ends, and :meth:`reproduce` with all records at the end.
    """

    def __init__(self, *, stream: Optional[TextIO] = None, out: Optional[TextIO] = None,
                 enabled: Optional[bool] = None, quiet: bool = False) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.out = sys.stdout if out is None else out
        self.enabled = progress_enabled(self.stream, quiet=quiet) if enabled is None else enabled
        self.quiet = quiet
        self.target = ""
        self._fields: dict[str, Any] = {}
        self._last_draw = 0.0
        self._started = time.monotonic()
        self._width = 0

    def start(self, target: str) -> None:
        """A new target begins."""
        self.target = target
        self._fields = {}
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._draw(force=True)

    def __call__(self, event: Mapping[str, Any]) -> None:
        """One progress event from the auditor (a dict; see the module docstring). The
        ``"estimate"`` event of an audit expected to take :data:`ESTIMATE_SHOWN` seconds or more
        is a line of its own (also in CI, where there is no status line), with what would shorten
        it.

        A stop asked for by a signal whose interrupt was swallowed on the way (see
        :func:`dpaudit.execution.sandbox.stop_received`) is raised here again: an audit in
        process never looks at a sandbox, but reports its progress."""
        from dpaudit.execution.sandbox import stop_received

        stopped = stop_received()
        if stopped is not None:
            raise KeyboardInterrupt(stopped)
        if isinstance(event, Mapping) and event.get("phase") == "estimate" and not self.quiet:
            self._estimate(event)
        if not self.enabled or not isinstance(event, Mapping):
            return
        self._fields.update(event)
        self._draw()

    def _estimate(self, event: Mapping[str, Any]) -> None:
        from dpaudit.auditing.estimate import duration

        total, per_call = _number(event.get("estimated_seconds")), _number(event.get("seconds_per_call"))
        if total is None or per_call is None or total < ESTIMATE_SHOWN:
            return
        calls = int(_number(event.get("calls")) or 0)
        stage = int(_number(event.get("replay_calls")) or 0)
        of = f" ({stage:,} of them the replay stage, first)" if stage else ""
        line = (f"{self.target}: estimate: about {duration(total)} for {calls:,} calls{of} at "
                f"{per_call:.3g} s per call")
        if event.get("hint"):
            line += f"; {event['hint']}"
        self.note(line)

    def ticking(self, per_call: Optional[float] = None) -> "_Ticker":
        """A block during which the status line is redrawn every second with the time spent
        (the replay stage runs in the sandbox child and sends no event until it is done):
        ``f.py:f · replay · up to 200 calls (≈ 40 s at 0.2 s per call) · 12 s``."""
        return _Ticker(self, per_call)

    def status_text(self) -> str:
        """The current status line (without terminal control characters)."""
        parts = [self.target] if self.target else []
        f = self._fields
        phase = f.get("phase")
        if phase:
            parts.append(str(phase))
        calls = _number(f.get("calls_at_most"))
        if calls:
            per_call = _number(f.get("seconds_per_call"))
            about = f" (≈ {calls * per_call:.3g} s at {per_call:.3g} s per call)" if per_call else ""
            parts.append(f"up to {int(calls):,} calls{about}")
        if _number(f.get("elapsed_s")) is not None:
            parts.append(f"{_number(f['elapsed_s']):.0f} s")
        candidate, total = f.get("candidate"), f.get("candidates")
        if candidate is not None:
            parts.append(f"candidate {candidate}/{total}" if total else f"candidate {candidate}")
        samples, budget = _number(f.get("samples")), _number(f.get("budget"))
        if samples is not None:
            parts.append(f"{int(samples):,}/{int(budget):,} samples" if budget
                         else f"{int(samples):,} samples")
            rate = self.rate(samples)
            if rate:
                parts.append(f"{rate} samples/s")
        bound = next((_number(f[k]) for k in ("epsilon_lb", "epsilon_lower_bound") if k in f), None)
        estimate = _number(f.get("estimate"))
        if bound is not None:
            parts.append(f"ε ≥ {bound:.3g}")
        elif estimate is not None and estimate > 0:
            parts.append(f"ε ≈ {estimate:.3g} (projected)")
        return " · ".join(parts)

    def rate(self, samples: float, now: Optional[float] = None) -> str:
        """Samples per second since the target started, across every worker (``1.2M``), or ``""``."""
        elapsed = (time.monotonic() if now is None else now) - self._started
        if elapsed <= 0.5 or samples <= 0:
            return ""
        r = samples / elapsed
        for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
            if r >= size:
                return f"{r / size:.3g}{unit}"
        return f"{r:.3g}"

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < _REDRAW_EVERY:
            return
        self._last_draw = now
        text = self.status_text()
        columns = _columns(self.stream)
        if len(text) > columns - 1:
            text = text[: columns - 2] + "…"
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()

    def clear(self) -> None:
        """Erase the status line (before printing anything else)."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def finish(self, record: Mapping[str, Any]) -> None:
        """Print the one-line summary of a finished target. An audit with two findings says which
        decided its verdict and ends with the float64 one (``REFUTED (logic) — …; float64: porous
        (ε ≥ 8.35: outputs in …; fix: …)``, ``REFUTED (float64 only; the logic is NOT REFUTED,
        ε ≥ 0.49) — …``, ``…; float64: porosity not found (ε ≥ 0.9)``; :mod:`dpaudit.report.findings`)."""
        from dpaudit.report.describe import one_line

        from dpaudit.replay.command import stage_text

        line = re.sub(r"\s*\n\s*", " ", one_line(record))  # one line, whatever the messages
        extra = strength_text(record)
        if extra:
            line += f" [{extra}]"
        stage = stage_text(record)
        if stage:
            line += f"; {stage}"
        details = record.get("details")
        if isinstance(details, Mapping) and details.get("note"):
            # after the replay stage's words, the note is the sampled audit's: say whose it is
            line += f" — {'the sampling: ' if stage else ''}{details['note']}"
        elif isinstance(details, Mapping) and details.get("timed_out"):
            line += f" — {'the sampling: ' if stage else ''}cut short by the time limit"
        from dpaudit.report.provenance import computed_text, isolation_off, settings_from_text

        for said in (computed_text(record), isolation_off(record), settings_from_text(record)):
            if said:  # what the verdict rests on, whoever reads only this line
                line += f" [{said}]"
        self.note(line)

    def reproduce(self, records: Sequence[Mapping[str, Any]]) -> None:
        """At the end of the run: the command that reproduces each target's result."""
        for record in records:
            if record.get("reproduce"):
                from dpaudit.report.provenance import reproduce_note

                self.note(f"reproduce: {record['reproduce']}{reproduce_note(record)}")

    def note(self, text: str) -> None:
        """A line of information on stdout (e.g. the reports written)."""
        self.clear()
        print(text, file=self.out)
        self.out.flush()


class _Ticker:
    """:meth:`Progress.ticking`: a daemon thread redrawing the status line with the seconds
    spent in the block, once a second, while the main thread waits on the sandbox child."""

    def __init__(self, progress: Progress, per_call: Optional[float]) -> None:
        import threading

        self.progress, self.per_call = progress, per_call
        self.done = threading.Event()
        self.thread: Optional[Any] = None
        self.started = time.monotonic()

    def __enter__(self) -> "_Ticker":
        import threading

        if self.per_call is not None:
            self.progress._fields["seconds_per_call"] = self.per_call
        if self.progress.enabled:
            self.thread = threading.Thread(target=self._run, name="dpaudit-progress", daemon=True)
            self.thread.start()
        return self

    def _run(self) -> None:
        while not self.done.wait(1.0):
            self.progress._fields["elapsed_s"] = time.monotonic() - self.started
            try:
                self.progress._draw(force=True)
            except (OSError, ValueError):  # the terminal went away: the run goes on
                return

    def __exit__(self, *exc: Any) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join(timeout=2.0)
        for key in ("elapsed_s", "calls_at_most", "seconds_per_call"):
            self.progress._fields.pop(key, None)


def _g(x: Any, digits: int = 3) -> str:
    return f"{float(x):.{digits}g}"


def _p(p: float) -> str:
    """``p = 0.012``; below 1e-290 (where the p-value search stops) ``p < 1e-290``."""
    return f"p = {_g(p, 2)}" if p >= 1e-290 else "p < 1e-290"


def strength_text(record: Mapping[str, Any]) -> str:
    """How strong a sampled verdict is, in a few words (:class:`dpaudit.results.Strength`):
    ``p = 2.4e-05, ε_LB/ε = 1.24`` for a refutation; ``MARGINAL (the run's family-wise
    p = 0.012, above 0.001): confirm with --seed=4 --confidence=0.999`` for a marginal one; for NOT REFUTED the p-value and what
    the budget could have seen; and a warning when the mechanism draws its own randomness.
    ``""`` for other records."""
    from dpaudit.estimators.strength import confirm_advice
    from dpaudit.results import MARGINAL_P

    if record.get("kind") != "audit" or record.get("verdict") not in ("refuted", "not_refuted"):
        return ""
    if record.get("decided_by") == "replay":  # the sampling's strength is not the verdict's
        return ""
    parts = []
    p, margin = _number(record.get("p_value")), _number(record.get("margin"))
    if p is not None and record.get("verdict") == "refuted":
        if record.get("marginal"):
            # the p-value is the claim's, family-wise over the run's looks and findings, so it
            # can be above 1 − the finding's own confidence: say whose it is
            parts.append(f"MARGINAL (the run's family-wise {_p(p)}, above {MARGINAL_P:g}): "
                         f"{confirm_advice(record)}")
        else:
            parts.append(_p(p) + (f", ε_LB/ε = {_g(margin)}" if margin is not None else ""))
    elif p is not None:
        text = _p(p)
        power = record.get("power") if isinstance(record.get("power"), Mapping) else {}
        eps, delta = _number(power.get("epsilon")), _number(power.get("delta"))
        claim = record.get("claim") if isinstance(record.get("claim"), Mapping) else {}
        seen = []
        if eps is not None:
            seen.append(f"ε ≥ {_g(eps)}")
        if delta is not None and _number(claim.get("epsilon")) is not None:
            seen.append(f"δ ≥ {_g(delta, 2)} at ε = {_g(claim['epsilon'])}")
        if seen:
            text += (f"; this budget would refute {' or '.join(seen)} with probability "
                     f"{_g(power.get('probability', 0.9), 2)}")
        elif power and (v := _all_in_event(record)) is not None:
            # p = q = 1 on the validation split: the event found tells D from D′ in nothing
            text += (f"; every validation output fell in the event it found ({v['n_D']:,} on D, "
                     f"{v['n_D_prime']:,} on D′), so the event did not tell D from D′ (the "
                     f"outputs may be constant)")
        elif power:
            # the power of the event found, not the budget's ceiling (which the verdict line
            # states): too few validation samples on it to refute any ε with probability 0.9
            text += ("; on the event it found, this budget's validation samples could not refute "
                     "any ε with probability 0.9")
        parts.append(text)
    if record.get("reproducible") is False:
        parts.append("the mechanism draws its own randomness: a rerun gives other numbers")
    return "; ".join(parts)


def _all_in_event(record: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
    """The validation counts when every validated event of the record (its own, else its
    findings') held every validation output of both datasets (independent samples:
    ``in_event_D = n_D > 0`` and ``in_event_D_prime = n_D_prime > 0``); None otherwise."""
    def validation(rec: Any) -> Optional[Mapping[str, Any]]:
        details = rec.get("details") if isinstance(rec, Mapping) else None
        v = details.get("validation") if isinstance(details, Mapping) else None
        return v if isinstance(v, Mapping) else None

    def holds_all(v: Mapping[str, Any]) -> bool:
        counts = [v.get(k) for k in ("n_D", "in_event_D", "n_D_prime", "in_event_D_prime")]
        if not all(type(c) is int for c in counts):
            return False
        n_d, in_d, n_dp, in_dp = counts
        return n_d > 0 and n_dp > 0 and in_d == n_d and in_dp == n_dp

    own = validation(record)  # the record's own event decides its line
    findings = record.get("findings") if isinstance(record.get("findings"), Mapping) else {}
    seen = [own] if own is not None else [v for v in map(validation, findings.values())
                                          if v is not None]
    return seen[0] if seen and all(holds_all(v) for v in seen) else None


def _number(x: Any) -> Optional[float]:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != x:
        return None
    return float(x)


def _columns(stream: TextIO) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns if columns >= 20 else 100  # a pseudo-terminal may report 0
