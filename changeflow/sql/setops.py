"""Set operations of SQL: ``UNION [ALL]``, ``INTERSECT [ALL]``, ``EXCEPT [ALL]``.

Inputs match by position, under the first input's names; each column gets the
least restrictive type of its inputs (an INT and a BIGINT column meet at BIGINT,
as Flink's ``v`` in ``SELECT id, v ... UNION ALL SELECT id, w``). A chain of
``UNION ALL`` is one Union of all its inputs; the other operations are planned
as Flink rewrites them, into aggregations (:mod:`changeflow.plan.set_ops`).
``ORDER BY`` / ``LIMIT`` after a set operation are planned by
:mod:`changeflow.sql.order_limit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.plan import set_ops
from changeflow.plan.nodes import PlanNode, Project, Union, side_inputs
from changeflow.plan.type_inference import PlanError
from changeflow.sql.errors import SqlError, located
from changeflow.sql.rewrite import merge_projections

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner

_NAMES = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}


def _branches(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Union) and not node.args.get("distinct") and not _has_modifiers(node):
        return _branches(node.this) + _branches(node.expression)
    return [node]


def _has_modifiers(node: exp.Expr) -> bool:
    return any(node.args.get(k) for k in ("order", "limit", "offset"))


def set_operation(planner: "QueryPlanner", node: exp.SetOperation) -> PlanNode:
    """The plan of ``node`` (a UNION, INTERSECT or EXCEPT, with or without ALL), without its ORDER BY/LIMIT."""
    if isinstance(node, exp.Union) and not node.args.get("distinct"):
        return union_all(planner, node)
    operation = _NAMES[type(node)]
    all_ = not node.args.get("distinct")
    left, right = planner.query(node.this), planner.query(node.expression)
    try:
        plan = set_ops.set_operation(operation, all_, left, right)
    except PlanError as e:
        raise SqlError(located(str(e), node, planner.sql)) from None
    return _merged(plan)


def union_all(planner: "QueryPlanner", node: exp.Union) -> PlanNode:
    bare = node.copy()
    for k in ("order", "limit", "offset"):
        bare.set(k, None)
    branches = _branches(bare.this) + _branches(bare.expression)
    plans = [planner.query(b) for b in branches]
    try:
        union = set_ops.union_all(plans)
    except PlanError as e:
        raise SqlError(located(str(e), node, planner.sql)) from None
    return Union(tuple(merge_projections(p) for p in union.union_inputs), union.out_schema)


def _merged(plan: PlanNode) -> PlanNode:
    """The casts and markers a set operation puts over its inputs, merged into the inputs' own projections."""
    if isinstance(plan, Union):
        return Union(tuple(_merge_all(p) for p in plan.union_inputs), plan.out_schema)
    if not side_inputs(plan):  # a source, or a DataStream read as a table
        return plan
    from changeflow.plan.physical import with_inputs

    return with_inputs(plan, tuple(_merged(c) for c in side_inputs(plan)))


def _merge_all(plan: PlanNode) -> PlanNode:
    """A stack of projections (markers over casts over the input's own select) as one."""
    while isinstance(plan, Project) and isinstance(plan.input, Project):
        plan = merge_projections(plan)
    return plan
