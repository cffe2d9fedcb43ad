"""The check pipeline: one target from its settings to its frozen result.

settings (:class:`~dpaudit.config.CheckSettings`) → the target opened (:mod:`.target`: in the
sandbox child, or in process) → the plan (:mod:`.plan`: the engine the target's claim and the
flags call for, the stages around it, their shares of the time limit) → the stages
(:mod:`.stages`: one small protocol; the engines in their own folders) → the verdict decided once
(:mod:`.result`: a frozen :class:`~dpaudit.pipeline.result.CheckResult`) → its record.
``dpaudit check``, library targets and :func:`dpaudit.check` (:mod:`.api`) all run it.
"""
