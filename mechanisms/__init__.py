"""Reference mechanisms from the seed papers, each with its exact output distribution.

dpaudit audits itself against these, and users compare their own code to them. Every mechanism
takes an explicit ``numpy.random.Generator`` and declares its claim (ε, δ, neighbours,
sensitivity) so it can be audited black-box (sampling) and white-box (exact law).
"""
