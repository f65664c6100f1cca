"""``ORDER BY``, ``LIMIT``, ``OFFSET`` and ``FETCH FIRST/NEXT n ROWS ONLY`` of a query.

They become one :class:`~changeflow.plan.nodes.Sort` over the query's result;
what it runs as depends on the runtime mode (:mod:`changeflow.plan.rules.sort_limit`):
batch sorts and cuts; streaming runs a sort with a limit as a Top-N and refuses a
sort without one, as Flink. A sort key is an output column (by name or alias),
a position (``ORDER BY 2``) or an expression written as in the select list;
other expressions are refused, naming them. Flink's default null order is kept:
``ASC`` puts NULLs first, ``DESC`` last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.plan.nodes import PlanNode, Sort
from changeflow.sql.errors import SqlError, located, unsupported

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner


def has_order_limit(node: exp.Expr) -> bool:
    return any(node.args.get(k) for k in ("order", "limit", "offset"))


def plan_order_limit(planner: "QueryPlanner", node: exp.Expr, plan: PlanNode,
                     items: list[tuple[exp.Expr, str]] | None = None) -> PlanNode:
    """``plan`` sorted and cut as ``node``'s ORDER BY / OFFSET / LIMIT say (``plan`` itself without them)."""
    if not has_order_limit(node):
        return plan
    order = node.args.get("order")
    keys = []
    for o in order.expressions if order is not None else []:
        column = _key(planner, o.this, plan, items or [])
        ascending = not o.args.get("desc")
        nulls_first = o.args.get("nulls_first")
        keys.append((column, ascending, bool(ascending if nulls_first is None else nulls_first)))
    limit = node.args.get("limit")
    fetch = None
    if limit is not None:
        fetch = _count(planner, limit.args.get("count") if isinstance(limit, exp.Fetch) else limit.expression,
                       "FETCH" if isinstance(limit, exp.Fetch) else "LIMIT")
        if isinstance(limit, exp.Fetch):
            options = limit.args.get("limit_options")
            if options is not None and (options.args.get("percent") or options.args.get("with_ties")):
                raise unsupported("FETCH ... PERCENT / WITH TIES", limit, planner.sql)
    offset_node = node.args.get("offset")
    offset = _count(planner, offset_node.expression, "OFFSET") if offset_node is not None else 0
    return Sort(plan, tuple(keys), offset, fetch)


def _key(planner: "QueryPlanner", e: exp.Expr, plan: PlanNode, items: list[tuple[exp.Expr, str]]) -> str:
    names = plan.field_names
    if isinstance(e, exp.Literal) and not e.is_string:
        position = int(e.this)
        if not 1 <= position <= len(names):
            raise SqlError(located(f"Ordinal out of range: ORDER BY {position} (the query has {len(names)} "
                                   "columns)", e, planner.sql))
        return names[position - 1]
    if isinstance(e, exp.Column) and not e.table and e.name in names:
        return e.name
    text = e.sql()
    for item, name in items:
        if item.sql() == text and name in names:
            return name
    if isinstance(e, exp.Column) and e.name in names:
        return e.name
    raise unsupported("ORDER BY an expression that is not in the select list (select it and order by its "
                      "name)", e, planner.sql)


def _count(planner: "QueryPlanner", e: exp.Expr | None, what: str) -> int:
    if not (isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit()):
        raise unsupported(f"{what} other than a non-negative integer literal", e if e is not None else exp.null(),
                          planner.sql)
    return int(e.this)
