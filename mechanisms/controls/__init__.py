"""Negative controls: deliberately broken variants, each with the (false) claim it makes.

An audit of each is expected to REFUTE it; that shows the audit can fail.

* :mod:`.noise`: the oblivious noise mechanisms of Chen, Pal and Golubchik (2016) as misprinted or misused.
* :mod:`.medians`: the exponential-mechanism and median mechanisms miscalibrated.
* :mod:`.sensitivity`: functions with a planted sensitivity bug, and the raw statistics.

(The formal claims' controls, a claim restated with a planted error, are registered with the
z3 claims in :mod:`dpaudit.formal.controls`.)
"""
