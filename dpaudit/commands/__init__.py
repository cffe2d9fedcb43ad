"""The commands of ``dpaudit check``, thin over the check pipeline (:mod:`dpaudit.pipeline`): argv →
settings → targets → :func:`dpaudit.pipeline.run.run_target` → reports → the exit code."""
