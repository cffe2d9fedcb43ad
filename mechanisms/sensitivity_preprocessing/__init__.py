"""Sensitivity preprocessing (Cummings and Durfee, Cummings and Durfee (2020); docs/math.md#sensitivity-preprocessing, #spf-2d, every formula [R]).

Turn any f into f̂ with individual sensitivities ``|f̂(D ∪ {i}) − f̂(D)| ≤ Δ_i``, then release it
with Laplace or the exponential mechanism, with personalised ε_i.

=============================  ===============================================================
general algorithm (oracle)     :func:`spf_table`, :class:`GeneralSPF` (Def 3.1, Thm 3.3)
database-ordered, O(n²)        :func:`spf_ordered`, :class:`OrderedSPF` (Lemma 5.2, Cor 5.3)
median, O(n) presorted         :func:`spf_median`, :class:`MedianSPF`, :func:`median_exact_condition` (Lemmas 5.4-5.5, Thm 1.6)
variance, O(n²)                :func:`spf_variance`, :class:`VarianceSPF`, :func:`variance_witness` (Lemmas 6.4, 6.5, 6.9)
mean accuracy                  :func:`mean_bounds`, :func:`mean_error_bound`, :func:`mean_exact_condition` (Def 5.8, Thm 1.7)
error bound                    :func:`permutation_error_bound` (Lemma 3.6; Lemma 8.9 with ℓ1)
optimum over F_Δ (LP)          :func:`best_fit` (Lemma 4.2, Cor 4.4)
personalised DP                :class:`PersonalisedLaplace`, :class:`PersonalisedExponential` (Props 7.3, 7.5)
2-D ℓ1                         :func:`spf_l1_2d`, :class:`TwoDimSPF` (Def 8.2, Thm 8.3)
naive ℓ1 in ℝ^d, d ≥ 3         :func:`spf_l1_naive` raises :class:`EmptyFeasibleSet` (Remark 8.6)
NP-hardness gadget             :func:`gadget_table`, :func:`spf_says_unsatisfiable`, :func:`z3_satisfiable` (Prop 4.6)
=============================  ===============================================================

Individuals are numbered from 0. Every ``*SPF`` object is callable on a dataset (a 1-D array of
the records present) and states its claim as ``.sensitivity`` (a dpaudit SensitivityBound).
"""

from .bounds import permutation_error_bound
from .errors import EmptyFeasibleSet, SpfError
from .general import GeneralSPF, SubsetTable, spf_table
from .mean import MeanBounds, mean_bounds, mean_error_bound, mean_exact_condition
from .median import MedianSPF, median_exact_condition, spf_median
from .naive_l1 import L1Projection, l1_projection, remark_8_6_example, spf_l1_naive
from .np_gadget import CNF, gadget_table, random_cnf, spf_says_unsatisfiable, z3_satisfiable
from .optimality import BestFit, best_fit
from .ordered import OrderedSPF, spf_ordered
from .personalised import PersonalisedExponential, PersonalisedLaplace, median_score
from .statistics import Convention, Statistic, statistic_value
from .two_d import TwoDimSPF, from_uv, spf_l1_2d, to_uv
from .variance import VarianceSPF, VarianceWitness, spf_variance, variance, variance_witness

__all__ = [
    "BestFit", "CNF", "Convention", "EmptyFeasibleSet", "GeneralSPF", "L1Projection", "MeanBounds",
    "MedianSPF", "OrderedSPF", "PersonalisedExponential", "PersonalisedLaplace", "SpfError",
    "Statistic", "SubsetTable", "TwoDimSPF", "VarianceSPF", "VarianceWitness", "best_fit",
    "from_uv", "gadget_table", "l1_projection", "mean_bounds", "mean_error_bound",
    "mean_exact_condition", "median_exact_condition", "median_score", "permutation_error_bound",
    "random_cnf", "remark_8_6_example", "spf_l1_2d", "spf_l1_naive", "spf_median", "spf_ordered",
    "spf_says_unsatisfiable", "spf_table", "spf_variance", "statistic_value", "to_uv", "variance",
    "variance_witness", "z3_satisfiable",
]
