"""The FROM clause: tables, aliased subqueries and joins, with the scope they open.

A table or subquery opens a :class:`~changeflow.sql.scalar.Scope` qualified by
its alias (a table also by its name). Joins chain left to right
(:func:`changeflow.sql.joins.plan_join`); a comma join takes its equality
conditions from the WHERE clause, which is why :func:`plan_from` returns the
part of WHERE it did not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.plan.nodes import PlanNode
from changeflow.sql.errors import unsupported
from changeflow.sql.scalar import Scope, ScopeColumn

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner


def plan_relation(planner: "QueryPlanner", node: exp.Expr) -> tuple[PlanNode, Scope]:
    """A table or subquery of a FROM clause, and its scope."""
    if isinstance(node, exp.Table):
        if node.args.get("joins") or node.args.get("pivots") or node.args.get("laterals"):
            raise unsupported("table clause", node, planner.sql)
        if isinstance(node.this, exp.Anonymous) or not isinstance(node.this, exp.Identifier):
            raise unsupported("table function", node, planner.sql)
        name = ".".join(p.name for p in node.parts)
        plan = planner.table(name, node)
        alias = node.alias or node.name
        alias_node = node.args.get("alias")
        columns = alias_node.columns if alias_node is not None else []
        scope = Scope([ScopeColumn(alias, n, n) for n in plan.field_names])
        if columns:
            return _renamed(planner, plan, alias, [c.name for c in columns], node)
        return plan, scope
    if isinstance(node, exp.Subquery):
        plan = planner.query(node.this)
        alias = node.alias or None
        alias_node = node.args.get("alias")
        if alias_node is not None and alias_node.columns:
            return _renamed(planner, plan, alias, [c.name for c in alias_node.columns], node)
        return plan, Scope([ScopeColumn(alias, n, n) for n in plan.field_names])
    if isinstance(node, exp.Unnest):
        raise unsupported("UNNEST", node, planner.sql)
    raise unsupported(f"FROM item {type(node).__name__}", node, planner.sql)


def _renamed(planner, plan: PlanNode, alias: str | None, names: list[str], node) -> tuple[PlanNode, Scope]:
    """``FROM t AS x (a, b)``: the relation's columns renamed."""
    from changeflow.plan import builder

    plan = planner.guard(lambda: builder.rename(plan, names), node)
    return plan, Scope([ScopeColumn(alias, n, n) for n in plan.field_names])


def plan_from(planner: "QueryPlanner", first: exp.Expr, joins: list[exp.Join],
              where: exp.Expr | None) -> tuple[PlanNode, Scope, exp.Expr | None]:
    """Plan ``FROM first JOIN ...``; returns the plan, its scope and the unused WHERE condition."""
    from changeflow.sql.joins import plan_join

    plan, scope = plan_relation(planner, first)
    for join in joins:
        plan, scope, where = plan_join(planner, plan, scope, join, where)
    return plan, scope, where
