"""The FROM clause: tables, aliased subqueries and joins, with the scope they open.

A table or subquery opens a :class:`~changeflow.sql.scalar.Scope` qualified by
its alias (a table also by its name). Joins over these relations chain left
to right (:func:`changeflow.sql.joins.plan_from`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.catalog import join_path
from changeflow.plan import builder
from changeflow.plan.nodes import PlanNode
from changeflow.sql.errors import unsupported
from changeflow.sql.refusals import refuse_version
from changeflow.sql.scalar import Scope, ScopeColumn
from changeflow.sql.window_tvf import is_window_tvf, plan_window_tvf

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner


def plan_relation(planner: "QueryPlanner", node: exp.Expr) -> tuple[PlanNode, Scope]:
    """A table or subquery of a FROM clause, and its scope."""
    if is_window_tvf(node):
        return plan_window_tvf(planner, node)
    if isinstance(node, exp.Table):
        if node.args.get("joins") or node.args.get("pivots") or node.args.get("laterals"):
            raise unsupported("table clause", node, planner.sql)
        if isinstance(node.this, exp.Anonymous) or not isinstance(node.this, exp.Identifier):
            raise unsupported("table function", node, planner.sql)
        refuse_version(node, planner.sql)
        name = join_path([p.name for p in node.parts])  # the catalog completes db.t and t (catalog/paths.py)
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
    if isinstance(node, exp.Values):  # FROM (VALUES ...) AS t(a, b): the alias names the columns
        from changeflow.sql.values import plan_values
        plan = plan_values(planner, node)
        alias = node.alias or None
        return plan, Scope([ScopeColumn(alias, n, n) for n in plan.field_names])
    if isinstance(node, exp.Unnest):
        raise unsupported("UNNEST", node, planner.sql)
    raise unsupported(f"FROM item {type(node).__name__}", node, planner.sql)


def _renamed(planner, plan: PlanNode, alias: str | None, names: list[str], node) -> tuple[PlanNode, Scope]:
    """``FROM t AS x (a, b)``: the relation's columns renamed."""
    plan = planner.guard(lambda: builder.rename(plan, names), node)
    return plan, Scope([ScopeColumn(alias, n, n) for n in plan.field_names])
