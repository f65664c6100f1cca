"""``UNION ALL``: inputs matched by position, under the first input's names.

Each column gets the least restrictive type of its inputs (an INT and a
BIGINT column meet at BIGINT, as Flink's ``v`` in ``SELECT id, v ... UNION ALL
SELECT id, w``); an input whose column is narrower is cast in a projection
below the union, so every input delivers rows of one schema. ``UNION``
without ALL (a distinct union) is not supported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.common.types import DataType
from changeflow.expressions import Call, Column, Literal
from changeflow.plan.nodes import PlanNode, Project, Union
from changeflow.plan.type_inference import PlanError, common_type
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.rewrite import merge_projections

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner


def _branches(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Union) and not node.args.get("distinct") and not _has_modifiers(node):
        return _branches(node.this) + _branches(node.expression)
    return [node]


def _has_modifiers(node: exp.Union) -> bool:
    return any(node.args.get(k) for k in ("order", "limit", "offset"))


def union_all(planner: "QueryPlanner", node: exp.Union) -> PlanNode:
    if node.args.get("distinct"):
        raise unsupported("UNION without ALL (use UNION ALL)", node, planner.sql)
    if _has_modifiers(node):
        raise unsupported("ORDER BY / LIMIT on a UNION", node, planner.sql)
    branches = _branches(node)
    plans = [planner.query(b) for b in branches]
    width = len(plans[0].schema)
    for b, p in zip(branches[1:], plans[1:], strict=True):
        if len(p.schema) != width:
            raise SqlError(located(f"UNION ALL inputs have {width} and {len(p.schema)} columns", b, planner.sql))
    names = plans[0].field_names
    types: list[DataType] = []
    for i, name in enumerate(names):
        column_types = [p.schema[i][1] for p in plans]
        try:
            types.append(common_type(column_types, f"UNION ALL column {name!r}"))
        except PlanError as e:
            raise SqlError(located(str(e), node, planner.sql)) from None
    schema = tuple(zip(names, types, strict=True))
    inputs = tuple(_conform(p, schema) for p in plans)
    return Union(inputs, schema)


def _conform(plan: PlanNode, schema) -> PlanNode:
    """``plan`` with its columns cast to ``schema``'s types (by position) where they differ."""
    if all(t.root == u.root and t.params == u.params for (_, t), (_, u) in zip(plan.schema, schema, strict=True)):
        return plan
    exprs, out = [], []
    for (name, t), (_, u) in zip(plan.schema, schema, strict=True):
        same = t.root == u.root and t.params == u.params
        target = u.with_nullable(t.nullable)
        exprs.append((name, Column(name) if same else Call("cast", (Column(name), Literal(target, None)))))
        out.append((name, t if same else target))
    return merge_projections(Project(plan, tuple(exprs), tuple(out)))
