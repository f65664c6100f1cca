"""``GROUP BY GROUPING SETS (...)``, ``ROLLUP (...)``, ``CUBE (...)`` and ``GROUPING()`` / ``GROUPING_ID()``.

Flink expands a grouping-sets aggregation (``Expand`` + one aggregation keyed by
the keys and the set's id). changeflow plans the equivalent union: one
aggregation per grouping set, the keys a set does not group by selected as
NULL, ``GROUPING(a, b)`` / ``GROUPING_ID(a, b)`` replaced by the set's bit mask
(a bit is 1 where the argument is *not* grouped, the first argument highest),
and the branches joined by ``UNION ALL``. The rows are Flink's; key columns are
nullable, as in Flink. ``ORDER BY`` / ``LIMIT`` apply to the union.
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.sql.dialect import parse
from changeflow.sql.errors import unsupported

if TYPE_CHECKING:
    from changeflow.plan.nodes import PlanNode
    from changeflow.sql.planner import QueryPlanner

_SETS = (exp.GroupingSets, exp.Rollup, exp.Cube)


def has_grouping_sets(node: exp.Select) -> bool:
    group = node.args.get("group")
    return group is not None and any(isinstance(g, _SETS) for g in group.expressions)


def expand(node: exp.Select, planner: "QueryPlanner") -> exp.Expr:
    """``node`` as a UNION ALL of one plain GROUP BY per grouping set (without its ORDER BY / LIMIT)."""
    group = node.args["group"]
    sets: list[list[exp.Expr]] = [[]]
    for g in group.expressions:
        sets = [s + t for s in sets for t in _sets_of(g)]
    keys: list[exp.Expr] = []
    for s in sets:
        for k in s:
            if all(_ident(k) != _ident(x) for x in keys):
                keys.append(k)
    types = _key_types(node, keys, planner)
    branches: list[exp.Expr] = [_branch(node, s, keys, types, planner) for s in sets]
    def union_all(a: exp.Expr, b: exp.Expr) -> exp.Expr:
        return exp.Union(this=a, expression=b, distinct=False)

    return functools.reduce(union_all, branches)


def _sets_of(g: exp.Expr) -> list[list[exp.Expr]]:
    """The grouping sets one GROUP BY item stands for."""
    if isinstance(g, exp.GroupingSets):
        out: list[list[exp.Expr]] = []
        for e in g.expressions:
            out += _sets_of(e) if isinstance(e, _SETS) else [_unit(e)]
        return out
    if isinstance(g, exp.Rollup):
        units = [_unit(e) for e in g.expressions]
        return [list(itertools.chain(*units[:i])) for i in range(len(units), -1, -1)]
    if isinstance(g, exp.Cube):
        units = [_unit(e) for e in g.expressions]
        subsets = itertools.product(*[(True, False)] * len(units))
        return [list(itertools.chain(*(u for u, keep in zip(units, mask, strict=True) if keep))) for mask in subsets]
    return [[g]]


def _unit(e: exp.Expr) -> list[exp.Expr]:
    if isinstance(e, exp.Tuple):
        return list(e.expressions)
    if isinstance(e, exp.Paren):
        return [e.this]
    return [e]


def _ident(e: exp.Expr) -> str:
    """What makes two key expressions the same key (a column by its name, whatever its qualifier)."""
    return f"column:{e.name}" if isinstance(e, exp.Column) else e.sql()


def _key_types(node: exp.Select, keys: list[exp.Expr], planner: "QueryPlanner") -> list[str]:
    """The SQL type of each key (planned as ``SELECT keys FROM ... WHERE ...``), nullable."""
    if not keys:
        return []
    probe = node.copy()
    for arg in ("group", "having", "order", "limit", "offset", "distinct"):
        probe.set(arg, None)
    probe.set("expressions", [k.copy() for k in keys])
    plan: PlanNode = planner.query(probe)
    return [str(t.with_nullable(True)) for _, t in plan.schema]


def _branch(node: exp.Select, grouped: list[exp.Expr], keys: list[exp.Expr], types: list[str],
            planner: "QueryPlanner") -> exp.Select:
    ids = {_ident(k) for k in grouped}
    missing = {_ident(k): t for k, t in zip(keys, types, strict=True) if _ident(k) not in ids}
    branch = node.copy()
    for arg in ("order", "limit", "offset"):
        branch.set(arg, None)
    branch.set("group", exp.Group(expressions=[k.copy() for k in grouped]) if grouped else None)

    def null_of(t: str) -> exp.Expr:
        return parse(f"SELECT CAST(NULL AS {t})")[0].expressions[0]

    def rewrite(e: exp.Expr) -> exp.Expr:
        if isinstance(e, (exp.Grouping, exp.GroupingId)):
            args = e.expressions
            for a in args:
                if all(_ident(a) != _ident(k) for k in keys):
                    raise unsupported(f"{e.key.upper()} of an expression that is not a grouping key", e, planner.sql)
            mask = sum(1 << (len(args) - 1 - i) for i, a in enumerate(args) if _ident(a) in missing)
            return exp.Cast(this=exp.Literal.number(mask), to=exp.DataType.build("BIGINT"))
        if isinstance(e, (exp.AggFunc, exp.Subquery, exp.Select)):
            return e  # an aggregate's argument is the row's value, grouped or not
        if isinstance(e, (exp.Column, exp.Func, exp.Binary, exp.Paren)) and _ident(e) in missing:
            return null_of(missing[_ident(e)])
        for k, v in list(e.args.items()):
            if isinstance(v, exp.Expr):
                e.set(k, rewrite(v))
            elif isinstance(v, list):
                e.set(k, [rewrite(x) if isinstance(x, exp.Expr) else x for x in v])
        return e

    items = []
    for item in branch.expressions:
        if isinstance(item, exp.Column) and _ident(item) in missing:
            items.append(exp.alias_(null_of(missing[_ident(item)]), item.name, quoted=True))
        else:
            items.append(rewrite(item))
    branch.set("expressions", items)
    having = branch.args.get("having")
    if having is not None:
        having.set("this", rewrite(having.this))
    return branch
