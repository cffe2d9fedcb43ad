"""Sensitivity of the quantile utility of the exponential mechanism (the EM-for-medians notes (2020); docs/math.md#quantile-utility).

For a dataset S, an output r and a level q ∈ (0, 1), write C< = #{s < r}, C= = #{s = r},
C> = #{s > r} and N = C< + C= + C>. The corrected utility is
``u(S, r) = −|(1 − q)·C< − q·C>|``; the EM-for-medians notes' eq (2.2) adds ``max(q, 1 − q)·N``.

A neighbouring dataset changes the counts at r only through the record that moves: adding a
record puts it in one class (below, at or above r); change-one removes a record from one class and
adds one to a class. The encodings quantify over every q ∈ (0, 1), every integer count vector and
every such move, so they cover every dataset and every output r. Counts are integers; q is an
exact real.
"""

from __future__ import annotations

import z3

from dpaudit.formal.encode import absolute, maximum
from dpaudit.formal.claim import register
from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query

__all__ = ["sensitivity_queries"]

#: Class codes of a moved record relative to the output r.
BELOW, AT, ABOVE = 0, 1, 2


def _utility(q: z3.ArithRef, lt: z3.ArithRef, eq: z3.ArithRef, gt: z3.ArithRef,
             with_constant: bool) -> z3.ArithRef:
    g = (1 - q) * lt - q * gt
    u = -absolute(g)
    if with_constant:
        u = u + maximum([q, 1 - q]) * (lt + eq + gt)
    return u


def sensitivity_queries(model: str, bound: str, with_constant: bool, tight: bool = True
                        ) -> list[Query]:
    """Queries for "|u(S', r) − u(S, r)| ≤ bound" under ``model`` ("change-one" or
    "add-remove"); ``bound`` is "one", "max" (max(q, 1−q)), "2max" or "min" (min(q, 1−q), a planted
    error). With ``tight``, a second query asks for a move that attains the bound."""
    q = z3.Real("q")
    lt, eq, gt = z3.Ints("n_below n_at n_above")
    added = z3.Int("added_class")
    facts = [q > 0, q < 1, lt >= 0, eq >= 0, gt >= 0, added >= BELOW, added <= ABOVE]
    plus = lambda c: z3.If(added == c, 1, 0)  # noqa: E731
    if model == "add-remove":
        lt2, eq2, gt2 = lt + plus(BELOW), eq + plus(AT), gt + plus(ABOVE)
    elif model == "change-one":
        removed = z3.Int("removed_class")
        minus = lambda c: z3.If(removed == c, 1, 0)  # noqa: E731
        facts += [removed >= BELOW, removed <= ABOVE,
                  z3.If(removed == BELOW, lt, z3.If(removed == AT, eq, gt)) >= 1]
        lt2, eq2, gt2 = (lt - minus(BELOW) + plus(BELOW), eq - minus(AT) + plus(AT),
                         gt - minus(ABOVE) + plus(ABOVE))
    else:
        raise ValueError(f"model must be 'change-one' or 'add-remove', got {model!r}")
    b = {"one": z3.RealVal(1), "max": maximum([q, 1 - q]), "2max": 2 * maximum([q, 1 - q]),
         "min": z3.If(q < 1 - q, q, 1 - q)}[bound]
    u1 = _utility(q, z3.ToReal(lt), z3.ToReal(eq), z3.ToReal(gt), with_constant)
    u2 = _utility(q, z3.ToReal(lt2), z3.ToReal(eq2), z3.ToReal(gt2), with_constant)
    change = absolute(u2 - u1)
    shown = (("u_S", u1), ("u_S_neighbour", u2), ("abs_change", change), ("bound", b))
    what = "eq (2.2)" if with_constant else "u = -|(1-q)C< - qC>|"
    out = [Query("bound", f"{model}: |u(S',r) - u(S,r)| <= {bound} for {what}",
                 tuple(facts) + (change > b,), shown=shown)]
    if tight:
        out.append(Query("bound-attained", f"{model}: some move changes u by exactly the bound",
                         tuple(facts) + (change == b,), needs="sat", shown=shown))
    return out


_MECH = ("exponential-quantile",)


@register("quantile-utility-change-one", source="EM-for-medians notes 2020, Theorem 2 (utility without the constant); docs/math.md#quantile-utility",
          statement="""For every q ∈ (0, 1), dataset S, output r and change-one neighbour S':
          |u(S', r) − u(S, r)| ≤ 1 with u = −|(1 − q)C<(S, r) − q·C>(S, r)|, and some move
          attains 1.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("EM-for-medians notes 2020",), spec=("docs/math.md#quantile-utility",),
          mechanisms=_MECH)
def _change_one() -> list[Query]:
    return sensitivity_queries("change-one", "one", with_constant=False)


@register("quantile-utility-eq22-change-one", source="EM-for-medians notes 2020, Theorem 2 with eq (2.2) as written; docs/math.md#quantile-utility",
          statement="""the EM-for-medians notes (2020) Theorem 2 as stated: for eq (2.2),
          u = max(q, 1 − q)·N − |(1 − q)C< − q·C>|, every change-one move changes u(·, r) by at
          most 1 (N does not change, so the constant cancels); some move attains 1.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("EM-for-medians notes 2020",), spec=("docs/math.md#quantile-utility",),
          mechanisms=_MECH)
def _eq22_change_one() -> list[Query]:
    return sensitivity_queries("change-one", "one", with_constant=True)


@register("quantile-utility-add-remove", source="EM-for-medians notes 2020, Theorem 3 (utility without the constant); docs/math.md#quantile-utility",
          statement="""For every q ∈ (0, 1), dataset S, output r and record z:
          |u(S ∪ {z}, r) − u(S, r)| ≤ max(q, 1 − q) with u = −|(1 − q)C< − q·C>| (adding z below
          r moves (1 − q)C< − qC> by 1 − q, above r by −q, at r by 0); some move attains the
          bound. Removal is the same pair read backwards.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("EM-for-medians notes 2020",), spec=("docs/math.md#quantile-utility",),
          mechanisms=_MECH)
def _add_remove() -> list[Query]:
    return sensitivity_queries("add-remove", "max", with_constant=False)


@register("quantile-utility-eq22-add-remove", source="EM-for-medians notes 2020, Theorem 3 with eq (2.2) as written; docs/math.md#quantile-utility, #e30",
          statement="""the EM-for-medians notes (2020) Theorem 3 as stated: for eq (2.2),
          u = max(q, 1 − q)·N − |(1 − q)C< − q·C>|, adding or removing one record changes
          u(·, r) by at most max(q, 1 − q). FALSE: N changes too, and the true bound is
          2·max(q, 1 − q) (claim quantile-utility-eq22-add-remove-2max); z3 returns a
          counterexample.""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("EM-for-medians notes 2020",), spec=("docs/math.md#quantile-utility", "docs/math.md#e30"),
          mechanisms=_MECH)
def _eq22_add_remove() -> list[Query]:
    return sensitivity_queries("add-remove", "max", with_constant=True, tight=False)


@register("quantile-utility-eq22-add-remove-2max", source="EM-for-medians notes 2020, Theorem 3 for eq (2.2), corrected; docs/math.md#quantile-utility, #e30",
          statement="""For eq (2.2), adding or removing one record changes u(·, r) by at most
          2·max(q, 1 − q), and some move attains it: the add/drop sensitivity of eq (2.2) is
          exactly 2·max(q, 1 − q).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("EM-for-medians notes 2020",), spec=("docs/math.md#quantile-utility",),
          mechanisms=_MECH)
def _eq22_add_remove_2max() -> list[Query]:
    return sensitivity_queries("add-remove", "2max", with_constant=True)
