"""jax_privacy's own auditor on the same canary scores, for the record beside dpaudit's bounds.

``peer(scores_in, scores_out, alpha, delta) -> dict`` (the ``peer`` of
:class:`dpaudit.onerun.OneRunSettings`): ``CanaryScoreAuditor`` from ``jax_privacy.auditing``
(``pip install 'dpaudit[jax]'``), its one-run bound (Steinke, Nasr & Jagielski 2023, guessing
"in" only, Bonferroni over its thresholds), its f-DP bound (Mahloujifar, Melis & Chaudhuri 2025,
with the Gaussian curve through (ε, δ)) and its Gaussian-DP estimate ``epsilon_from_gdp`` (in
jax_privacy 2.0.0 it takes |μ| over thresholds for the reverse direction, the mistake its pull
request 270 fixed upstream). It decides nothing in dpaudit's verdict.
"""

from __future__ import annotations


def jax_privacy_peer(scores_in, scores_out, alpha: float, delta: float) -> dict:
    import jax_privacy
    from jax_privacy.auditing import CanaryScoreAuditor

    a = CanaryScoreAuditor(scores_in, scores_out)
    out = {"auditor": f"jax_privacy {jax_privacy.__version__} CanaryScoreAuditor"}
    for name, f in (("epsilon_one_run", lambda: a.epsilon_one_run(alpha, max(delta, 1e-12))),
                    ("epsilon_one_run_fdp", lambda: a.epsilon_one_run_fdp(alpha, max(delta, 1e-12))),
                    ("epsilon_from_gdp", lambda: a.epsilon_from_gdp(alpha, max(delta, 1e-12)))):
        try:
            out[name] = float(f())
        except Exception as exc:  # noqa: BLE001 - the peer's failure is recorded, not raised
            out[name] = f"{type(exc).__name__}: {exc}"
    return out
