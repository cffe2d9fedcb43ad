"""Negative controls: registered claims with a planted error, each expected REFUTED.

Each reuses the encoding of the claim it mutates (``control_of``) with one change, so a REFUTED
outcome shows that encoding can fail: a proof that cannot fail would prove nothing. Controls are
not run by plain ``dpaudit verify``; name them (``--claim control-…``) or pass them to
:func:`dpaudit.formal.verify`.
"""

from __future__ import annotations

from fractions import Fraction

from dpaudit.formal.exponential import range_queries
from dpaudit.formal.geometry import disc_queries, helly_existence_query
from dpaudit.formal.noise import laplace_loss_queries
from dpaudit.formal.quantile import sensitivity_queries
from dpaudit.formal.claim import register
from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query

__all__: list[str] = []


@register("control-l1-helly-3d", source="control of l1-helly-2d (dimension 3)",
          statement="""Planted error: l1-helly-2d stated in ℝ³, i.e. any 4 ℓ1 balls of ℝ³ that
          intersect pairwise have a common point (the ∀-quantified direct encoding of
          l1-helly-2d with dimension 3). Expected REFUTED with 4 balls as the model.""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",), control_of="l1-helly-2d")
def _helly_3d() -> list[Query]:
    return [helly_existence_query(4, dim=3)]


@register("control-l2-radius-0.9", source="control of l2-2d-counterexample (radius 0.9)",
          statement="""Planted error: the ℓ2 example with radius 0.9 instead of 1. The discs no
          longer meet pairwise (the centres are 2 apart), so the pairwise-witness queries
          come back unsat. Expected REFUTED.""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",), control_of="l2-2d-counterexample")
def _l2_radius() -> list[Query]:
    return disc_queries(Fraction(9, 10))


@register("control-quantile-change-one-max", source="control of quantile-utility-change-one (constant)",
          statement="""Planted error: the change-one sensitivity bound of the quantile utility
          stated with the add/remove constant max(q, 1 − q) instead of 1. Expected REFUTED with
          a replacement that changes u by more than max(q, 1 − q).""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("EM-for-medians notes 2020",), spec=("docs/math.md#quantile-utility",),
          mechanisms=("exponential-quantile",), control_of="quantile-utility-change-one")
def _quantile_constant() -> list[Query]:
    return sensitivity_queries("change-one", "max", with_constant=False, tight=False)


@register("control-laplace-loss-half", source="control of laplace-loss-bound (constant)",
          statement="""Planted error: the Laplace loss bound stated as ε/2 instead of ε.
          Expected REFUTED with y, c, c' whose loss exceeds ε/2.""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#laplace",),
          mechanisms=("laplace",), control_of="laplace-loss-bound")
def _laplace_half() -> list[Query]:
    return laplace_loss_queries(Fraction(1, 2))[:1]


@register("control-em-range-le-sens", source="control of em-range-le-2sens (constant)",
          statement="""Planted error: range(u) ≤ sens(u) without monotonicity (constant 1 instead
          of 2). Expected REFUTED with outputs whose δ differ by more than sens.""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("Dong 2020",), spec=("docs/math.md#em-range",),
          mechanisms=("exponential-quantile",), control_of="em-range-le-2sens")
def _range_le_sens() -> list[Query]:
    return range_queries(monotone=False, factor=1)
