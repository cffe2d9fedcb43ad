"""The analysis the reference mechanisms need, apart from the mechanisms themselves.

* :mod:`.smooth_sensitivity`: local and smooth sensitivity of the median (NRS07).
* :mod:`.duff_bounds`: Muñoz Medina and Gillenwater (2020)'s Theorem 1 (level sets of Duff's cost, the constant C, the bound).
* :mod:`.lp_optimal`: optimal ε-DP mechanisms of a count query as linear programs (Chen, Pal and Golubchik (2016) §3).
* :mod:`.expected_loss`: Chen, Pal and Golubchik (2016)'s expected-loss formulas, exact and as stated (docs/math.md#expected-loss).
"""
