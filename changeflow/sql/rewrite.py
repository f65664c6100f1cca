"""Small plan rewrites that make a SQL query's plan the shape Flink's optimizer gives it.

* :func:`name_aggregates`: an aggregate call selected as ``SUM(v) AS s`` gets
  ``s`` as its output column, so the plan shows ``SUM(v) AS s`` and needs no
  renaming projection above the aggregate (Flink's ``select=[k, SUM(v) AS s]``).
* :func:`merge_projections`: a projection that only picks or renames columns of
  the projection below it merges into it (Calcite's ``CalcMergeRule``), so
  ``SELECT k, cnt FROM (SELECT k, x, COUNT(*) AS cnt ...)`` computes once.

Both keep the plan's output schema unchanged.
"""

from __future__ import annotations

import dataclasses

from changeflow.expressions import Column, Expression, replace
from changeflow.plan.nodes import Aggregate, Filter, PlanNode, Project


def name_aggregates(plan: PlanNode) -> PlanNode:
    """``Project(Aggregate)`` (or ``Project(Filter(Aggregate))`` for HAVING) with calls renamed
    to the names the projection gives them."""
    if not isinstance(plan, Project):
        return plan
    having = plan.input if isinstance(plan.input, Filter) else None
    agg = having.input if having is not None else plan.input
    if not isinstance(agg, Aggregate):
        return plan
    outputs = {c.output for c in agg.calls}
    uses: dict[str, int] = {}
    for _, e in plan.exprs:
        for node in e.walk():
            if isinstance(node, Column) and node.name in outputs:
                uses[node.name] = uses.get(node.name, 0) + 1
    taken = set(agg.keys)
    renames: dict[str, str] = {}
    for name, e in plan.exprs:
        if isinstance(e, Column) and e.name in outputs and uses[e.name] == 1 and name not in taken:
            renames[e.name] = name
            taken.add(name)
    if not renames:
        return plan
    calls = tuple(dataclasses.replace(c, output=renames.get(c.output, c.output)) for c in agg.calls)
    schema = tuple((renames.get(n, n), t) for n, t in agg.schema)
    below: PlanNode = Aggregate(agg.input, agg.keys, calls, schema)
    if having is not None:
        below = Filter(below, _rename_columns(having.predicate, renames))
    exprs = tuple((n, _rename_columns(e, renames)) for n, e in plan.exprs)
    return Project(below, exprs, plan.out_schema)


def _rename_columns(expr: Expression, renames: dict[str, str]) -> Expression:
    mapping: dict[int, Expression] = {
        id(n): Column(renames[n.name]) for n in expr.walk() if isinstance(n, Column) and n.name in renames}
    return replace(expr, mapping)


def merge_projections(plan: PlanNode) -> PlanNode:
    """A projection over a projection becomes one, the lower expressions substituted for
    the columns the upper one reads."""
    if not (isinstance(plan, Project) and isinstance(plan.input, Project)):
        return plan
    below = dict(plan.input.exprs)
    exprs = tuple((n, _substitute(e, below)) for n, e in plan.exprs)
    return Project(plan.input.input, exprs, plan.out_schema)


def _substitute(expr: Expression, below: dict[str, Expression]) -> Expression:
    if isinstance(expr, Column):
        return below[expr.name]
    mapping = {id(n): below[n.name] for n in expr.walk() if isinstance(n, Column)}
    return replace(expr, mapping)


def uniquify(names: list[str]) -> list[str]:
    """Calcite's renaming of clashing names: the second ``id`` becomes ``id0``, the third ``id1``.

    >>> uniquify(["id", "name", "id", "id"])
    ['id', 'name', 'id0', 'id1']
    """
    taken: set[str] = set()
    out = []
    for name in names:
        unique, k = name, 0
        while unique in taken:
            unique, k = f"{name}{k}", k + 1
        taken.add(unique)
        out.append(unique)
    return out
