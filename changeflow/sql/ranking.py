"""Deduplication and Top-N: ``ROW_NUMBER() OVER (...)`` in a FROM subquery, bounded outside.

Flink recognises (``FlinkLogicalRankRule``, ``StreamPhysicalDeduplicateRule``)::

    SELECT ... FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY c [ASC|DESC]) AS rn FROM t)
    WHERE rn <= N          -- also rn < N, rn = N, rn BETWEEN a AND b, N >= rn

as a Rank operator. When the range is exactly 1, the query does not select
``rn`` and the order is a single processing-time attribute (a ``PROCTIME()``
column), the rank is a Deduplicate: ``ASC`` keeps the first row of each key,
``DESC`` the last. Conditions of the outer WHERE that do not bound ``rn`` stay
a filter over the ranked rows. Other uses of window functions are refused
with the construct's position, as Flink refuses unbounded OVER aggregates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.common.types import DataTypes
from changeflow.plan.nodes import Deduplicate, PlanNode, Rank
from changeflow.plan.type_inference import is_proctime
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.joins import conjunction, conjuncts
from changeflow.sql.scalar import Scope, ScopeColumn

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner


def plan_ranked_subquery(planner: "QueryPlanner", outer: exp.Select, source: exp.Expr,
                         where: exp.Expr | None
                         ) -> tuple[PlanNode, Scope, exp.Expr | None] | None:
    """Plan ``source`` as a ranked subquery, or ``None`` if it does not number rows."""
    if not isinstance(source, exp.Subquery) or not isinstance(source.this, exp.Select):
        return None
    inner = source.this
    windows = [(i, e) for i, e in enumerate(inner.expressions) if isinstance(_unaliased(e), exp.Window)]
    if not windows or not any(isinstance(_unaliased(e).this, exp.RowNumber) for _, e in windows):
        return None  # no row numbers: OVER aggregates, planned with the subquery (sql/over.py)
    sql = planner.sql
    if outer.args.get("joins"):
        raise unsupported("ROW_NUMBER() subquery joined with another table", outer.args["joins"][0], sql)
    if len(windows) > 1:
        raise unsupported("several window functions in one subquery", windows[1][1], sql)
    index, item = windows[0]
    window = _unaliased(item)
    if not isinstance(window.this, exp.RowNumber):
        raise unsupported(f"window function {window.this.sql()} (only ROW_NUMBER() for deduplication "
                          f"and Top-N)", window, sql)
    if window.args.get("spec") is not None:
        raise unsupported("window frame", window.args["spec"], sql)
    if not isinstance(item, exp.Alias):
        raise SqlError(located("ROW_NUMBER() needs an alias the outer query can filter on", window, sql))
    rn = item.alias

    # The subquery without the window function, then the window's columns in its output.
    body = inner.copy()
    body.set("expressions", [e for j, e in enumerate(inner.expressions) if j != index])
    input_plan = planner.select(body)
    columns = input_plan.field_names
    partition = [_column_of(e, columns, "PARTITION BY", sql) for e in window.args.get("partition_by") or []]
    order = window.args.get("order")
    if order is None or not order.expressions:
        raise unsupported("ROW_NUMBER() without ORDER BY", window, sql)
    order_by = tuple((_column_of(o.this, columns, "ORDER BY", sql), not o.args.get("desc"),
                      bool(o.args.get("nulls_first"))) for o in order.expressions)

    start, end, rest = _rank_range(conjuncts(where), rn, window, sql)
    selected = _references(outer, rest, rn, source.alias or None)
    alias = source.alias or None
    types = input_plan.type_map()
    proctime_order = len(order_by) == 1 and is_proctime(types[order_by[0][0]])
    if (start, end) == (1, 1) and not selected and proctime_order:
        plan: PlanNode = Deduplicate(input_plan, tuple(partition), keep_last=not order_by[0][1])
    else:
        schema = input_plan.schema + (((rn, DataTypes.BIGINT(False)),) if selected else ())
        plan = Rank(input_plan, tuple(partition), order_by, start, end, rn if selected else None, schema)

    # The outer scope lists the subquery's columns in its select order, rn where it was.
    names = list(columns)
    if selected:
        names.insert(_output_position(planner, inner, index, len(columns)), rn)
    scope = Scope([ScopeColumn(alias, n, n) for n in names])
    return plan, scope, conjunction(rest)


def _output_position(planner: "QueryPlanner", inner: exp.Select, index: int, width: int) -> int:
    """Where the row number sits among the subquery's output columns (after ``*`` expands)."""
    if index == len(inner.expressions) - 1:
        return width
    if index == 0:
        return 0
    prefix = inner.copy()
    prefix.set("expressions", inner.expressions[:index])
    return len(planner.select(prefix).field_names)


def _unaliased(e: exp.Expr) -> exp.Expr:
    return e.this if isinstance(e, exp.Alias) else e


def _column_of(e: exp.Expr, columns: list[str], clause: str, sql: str | None) -> str:
    if not isinstance(e, exp.Column) or e.name not in columns:
        raise SqlError(located(f"{clause} of ROW_NUMBER() must be a column the subquery selects "
                               f"({', '.join(columns)}), got {e.sql()}", e, sql))
    return e.name


def _int(node: exp.Expr) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string and node.this.lstrip("-").isdigit():
        return int(node.this)
    return None


def _is_rn(node: exp.Expr, rn: str) -> bool:
    return isinstance(node, exp.Column) and node.name == rn


def _rank_range(parts: list[exp.Expr], rn: str, window: exp.Expr, sql: str | None
                ) -> tuple[int, int, list[exp.Expr]]:
    """The [start, end] the conditions on ``rn`` give, and the other conditions."""
    start, end, rest = 1, None, []
    flipped = {exp.LT: exp.GT, exp.LTE: exp.GTE, exp.GT: exp.LT, exp.GTE: exp.LTE, exp.EQ: exp.EQ}
    for p in parts:
        node = p.this if isinstance(p, exp.Paren) else p
        if isinstance(node, exp.Between) and _is_rn(node.this, rn):
            low, high = _int(node.args["low"]), _int(node.args["high"])
            if low is None or high is None:
                raise unsupported("ROW_NUMBER bound that is not an integer literal", node, sql)
            start, end = max(start, low), high if end is None else min(end, high)
            continue
        if type(node) in flipped:
            a, b, op = node.this, node.expression, type(node)
            if _is_rn(b, rn) and not _is_rn(a, rn):
                a, b, op = b, a, flipped[op]
            if _is_rn(a, rn):
                n = _int(b)
                if n is None:
                    raise unsupported("ROW_NUMBER bound that is not an integer literal", node, sql)
                if op is exp.EQ:
                    start, end = max(start, n), n if end is None else min(end, n)
                elif op is exp.LTE:
                    end = n if end is None else min(end, n)
                elif op is exp.LT:
                    end = n - 1 if end is None else min(end, n - 1)
                elif op is exp.GTE:
                    start = max(start, n)
                else:
                    start = max(start, n + 1)
                continue
        rest.append(p)
    if end is None:
        raise unsupported("ROW_NUMBER() without an upper bound in the outer WHERE (write rn <= N for "
                          "Top-N, rn = 1 for deduplication)", window, sql)
    if end < start:
        raise SqlError(located(f"ROW_NUMBER range {start}..{end} is empty", window, sql))
    return start, end, rest


def _references(outer: exp.Select, rest: list[exp.Expr], rn: str, alias: str | None) -> bool:
    """Whether the outer query uses ``rn`` beyond bounding it (select list, other conditions...)."""
    nodes: list[exp.Expr] = list(outer.expressions) + rest
    for key in ("group", "having"):
        if outer.args.get(key) is not None:
            nodes.append(outer.args[key])
    for node in nodes:
        for n in node.walk():
            if isinstance(n, exp.Star):
                return True
            if isinstance(n, exp.Column) and isinstance(n.this, exp.Star) and (n.table or None) in (None, alias):
                return True
            if isinstance(n, exp.Column) and n.name == rn and (n.table or None) in (None, alias):
                return True
    return False
