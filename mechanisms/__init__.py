"""Reference mechanisms from the seed papers, with the analysis, statements and controls around them.

Installed as ``dpaudit.reference``; the folder shows four kinds of content and one home for the
negative controls:

* the mechanisms, at the top: :mod:`.laplace`, :mod:`.geometric`, :mod:`.staircase`,
  :mod:`.prerounding`, :mod:`.collusion`, :mod:`.exponential`, :mod:`.quantile`, :mod:`.duff`,
  :mod:`.smooth_mechanisms`. Each takes an explicit ``numpy.random.Generator``, declares its claim
  (ε, δ, neighbours, sensitivity) and gives its exact output law through the one protocol
  :class:`dpaudit.laws.ReferenceMechanism` (``law(x)``, ``log_prob(x, y)``, ``sample(x, rng,
  size)``), so it can be audited black-box (sampling) and white-box (exact law);
* :mod:`.analysis`: what the mechanisms need that is not a mechanism (smooth sensitivity, Duff's
  Theorem 1 bounds, LP-optimal mechanisms, expected-loss formulas);
* :mod:`.claims`: the papers' own statements, one id convention and one ``evaluate``;
* :mod:`.sensitivity_preprocessing`: the sensitivity-preprocessing algorithms (Cummings and Durfee (2020));
* :mod:`.controls`: deliberately broken variants, each expected to be refuted.
"""
