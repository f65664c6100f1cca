"""``AGG(x) FILTER (WHERE cond)``: an aggregate over the rows where ``cond`` is TRUE.

Rewritten before planning into the aggregate over ``CASE WHEN cond THEN x END``
(``COUNT(*)`` over ``CASE WHEN cond THEN 1 END``): every aggregate changeflow has
ignores NULL arguments (as Flink's: COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE,
LAST_VALUE, LISTAGG, COLLECT, STDDEV/VAR), so a row the condition rejects
counts for nothing, and a group none of whose rows passes gets the aggregate's
empty value (NULL, or 0 for COUNT). The result type is nullable, as Flink types
a filtered aggregate (its group may be empty for it).
"""

from __future__ import annotations

from sqlglot import exp

from changeflow.sql.errors import unsupported


def rewrite_aggregate_filters(node: exp.Select, sql: str | None) -> exp.Select:
    """``node`` (a copy if it has filtered aggregates) with every ``FILTER (WHERE ..)`` folded in."""
    if node.find(exp.Filter) is None:
        return node
    node = node.copy()
    for f in list(node.find_all(exp.Filter)):
        f.replace(_folded(f, sql))
    return node


def _folded(f: exp.Filter, sql: str | None) -> exp.Expr:
    agg, where = f.this.copy(), f.expression
    condition = where.this if isinstance(where, exp.Where) else where

    def guarded(value: exp.Expr) -> exp.Expr:
        return exp.Case(ifs=[exp.If(this=condition.copy(), true=value)])

    if not isinstance(agg, (exp.AggFunc, exp.Anonymous)):
        raise unsupported("FILTER (WHERE ...) on a non-aggregate", f, sql)
    arg = agg.this if not isinstance(agg, exp.Anonymous) else None
    if isinstance(arg, exp.Star):
        agg.set("this", guarded(exp.Literal.number(1)))
    elif isinstance(arg, exp.Distinct) and arg.expressions:
        arg.expressions[0].replace(guarded(arg.expressions[0].copy()))
    elif isinstance(arg, exp.Expr):
        agg.set("this", guarded(arg.copy()))
    elif agg.expressions:
        agg.expressions[0].replace(guarded(agg.expressions[0].copy()))
    else:
        raise unsupported("FILTER (WHERE ...) on an aggregate without argument", f, sql)
    return agg
