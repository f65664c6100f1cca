"""``VALUES (1, 'a'), (2, 'b')``: a query of literal rows, alone or in ``FROM`` (``AS t(a, b)``).

The rows become one source of row numbers ``0 .. n-1`` and one projection that
picks each column's value by row number (``CASE $row WHEN 0 THEN .. ELSE ..``),
so any expression Flink accepts in a VALUES row (``-1``, ``CAST(NULL AS INT)``,
``'a' || 'b'``) is computed by the same expression compiler as a SELECT, in one
scan whatever the number of rows. A column's type is the least restrictive type
of its values (Calcite's rule for VALUES); unnamed columns are ``EXPR$0``, ...
as in Flink. In streaming mode the rows are inserted in their written order.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.common.types import DataTypes
from changeflow.expressions import Call, Column, Expression, Literal
from changeflow.plan.nodes import PlanNode, Project, Source
from changeflow.plan.type_inference import PlanError, common_type, type_of
from changeflow.sql.errors import SqlError, located
from changeflow.sql.scalar import ExpressionTranslator, Scope

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner

_ROW = "$row"


def plan_values(planner: "QueryPlanner", node: exp.Values) -> PlanNode:
    """The plan of a ``VALUES`` clause; its alias's column names (``AS t(a, b)``) name the columns."""
    rows = []
    for row in node.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        rows.append([ExpressionTranslator(Scope([]), planner.sql, False).tr(e) for e in items])
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise SqlError(located(f"VALUES rows have {width} and {len(row)} columns (row {i + 1})", node,
                                   planner.sql))
    alias = node.args.get("alias")
    names = [c.name for c in alias.columns] if alias is not None and alias.columns else \
        [f"EXPR${i}" for i in range(width)]
    if len(names) != width:
        raise SqlError(located(f"VALUES has {width} columns but its alias names {len(names)}", node, planner.sql))
    row_type = DataTypes.INT().with_nullable(False)
    # Named by its content, so a query's plan (and EXPLAIN) is the same however often it is planned;
    # two equal VALUES clauses are one table, as two scans of one catalog table are.
    source = Source(f"values_{zlib.crc32(node.sql().encode()):08x}", ((_ROW, row_type),), "elements",
                    [(i,) for i in range(len(rows))])
    exprs, schema = [], []
    try:
        for c, name in enumerate(names):
            values = [row[c] for row in rows]
            types = [type_of(v, {}) for v in values]
            t = common_type(types, f"VALUES column {name!r}")
            cast: list[Expression] = [v if ty == t else Call("cast", (v, Literal(t, None)))
                                      for v, ty in zip(values, types, strict=True)]
            exprs.append((name, _pick(cast, row_type)))
            schema.append((name, t))
    except PlanError as e:
        raise SqlError(located(str(e), node, planner.sql)) from None
    return Project(source, tuple(exprs), tuple(schema))


def _pick(values: list[Expression], row_type) -> Expression:
    """The value of the row numbered ``$row``."""
    if len(values) == 1:
        return values[0]
    args: list[Expression] = []
    for i, v in enumerate(values[:-1]):
        args += [Call("==", (Column(_ROW), Literal(i, row_type))), v]
    return Call("case", (*args, values[-1]))
