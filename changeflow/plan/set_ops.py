"""Set operations as plans: ``UNION [ALL]``, ``INTERSECT [ALL]``, ``EXCEPT [ALL]`` and ``DISTINCT``.

Shared by SQL (:mod:`changeflow.sql.setops`) and the Table API
(:mod:`changeflow.table.set_ops`). Inputs match by position, under the first
input's names; each column gets the least restrictive type of its inputs (a
narrower input is cast in a projection below the union).

Only ``UNION ALL`` is an operator of its own (:class:`~changeflow.plan.nodes.Union`).
The others are aggregations, as Flink's planner rewrites them (Calcite's
``UNION_TO_DISTINCT``, Flink's ``RewriteIntersectAllRule`` / ``RewriteMinusAllRule``):

* ``UNION``: ``UNION ALL``, then a group aggregation by every column (no calls).
* ``INTERSECT`` / ``EXCEPT`` [``ALL``]: each input tagged with a marker column per
  side (``1``/``0``), ``UNION ALL``, a group aggregation by every column summing the
  markers (how many copies each side holds), a filter (``INTERSECT``: both sides
  hold the row; ``EXCEPT``: the left holds more), and for the ``ALL`` forms a
  :class:`~changeflow.plan.nodes.Replicate` by ``LEAST(l, r)`` resp. ``l - r``.

Flink plans ``INTERSECT`` / ``EXCEPT`` (distinct) as a semi / anti join followed by a
distinct aggregation; the aggregation used here gives the same rows (NULLs compare
equal, as in any set operation) and, in streaming mode, a retract changelog that
materializes to them (its ``-U``/``+U`` may be split where Flink's join emits ``+I``/``-D``).
"""

from __future__ import annotations

from changeflow.common.types import DataType, DataTypes
from changeflow.expressions import Call, Column, Expression, Literal
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.plan.nodes import Aggregate, Filter, PlanNode, Project, Replicate, Schema, Union
from changeflow.plan.type_inference import PlanError, common_type

OPERATIONS = ("UNION", "INTERSECT", "EXCEPT")
_LEFT, _RIGHT = "$vcol_left_cnt", "$vcol_right_cnt"
_COUNT = "$replicate_cnt"


def union_schema(plans: list[PlanNode], what: str) -> Schema:
    """The result schema of a set operation over ``plans``: the first input's names, common types."""
    width = len(plans[0].schema)
    for p in plans[1:]:
        if len(p.schema) != width:
            raise PlanError(f"{what} inputs have {width} and {len(p.schema)} columns "
                            f"([{', '.join(plans[0].field_names)}] and [{', '.join(p.field_names)}])")
    names = plans[0].field_names
    types: list[DataType] = []
    for i, name in enumerate(names):
        types.append(common_type([p.schema[i][1] for p in plans], f"{what} column {name!r}"))
    return tuple(zip(names, types, strict=True))


def conform(plan: PlanNode, schema: Schema) -> PlanNode:
    """``plan`` with its columns cast to ``schema``'s types (by position) where they differ."""
    if all(t.root == u.root and t.params == u.params for (_, t), (_, u) in zip(plan.schema, schema, strict=True)):
        return plan
    exprs, out = [], []
    for (name, t), (_, u) in zip(plan.schema, schema, strict=True):
        same = t.root == u.root and t.params == u.params
        target = u.with_nullable(t.nullable)
        exprs.append((name, Column(name) if same else Call("cast", (Column(name), Literal(target, None)))))
        out.append((name, t if same else target))
    return Project(plan, tuple(exprs), tuple(out))


def union_all(plans: list[PlanNode], what: str = "UNION ALL") -> Union:
    schema = union_schema(plans, what)
    return Union(tuple(conform(p, schema) for p in plans), schema)


def distinct(plan: PlanNode) -> Aggregate:
    """``SELECT DISTINCT *``: a group aggregation by every column, with no aggregate calls."""
    return Aggregate(plan, tuple(plan.field_names), (), plan.schema)


def set_operation(operation: str, all_: bool, left: PlanNode, right: PlanNode) -> PlanNode:
    """``left <operation> [ALL] right`` (``operation`` in :data:`OPERATIONS`)."""
    if operation not in OPERATIONS:
        raise ValueError(f"unknown set operation {operation!r}")
    what = f"{operation}{' ALL' if all_ else ''}"
    if operation == "UNION":
        unioned = union_all([left, right], what)
        return unioned if all_ else distinct(unioned)
    schema = union_schema([left, right], what)
    names = [n for n, _ in schema]
    if _LEFT in names or _RIGHT in names:
        raise PlanError(f"{what}: a column may not be named {_LEFT} or {_RIGHT}")
    tagged = [_tagged(conform(p, schema), names, side) for side, p in enumerate((left, right))]
    marker = DataTypes.INT().with_nullable(False)
    unioned = Union(tuple(tagged), schema + ((_LEFT, marker), (_RIGHT, marker)))
    counted = Aggregate(unioned, tuple(names),
                        (AggCall("sum", _LEFT, marker, _LEFT), AggCall("sum", _RIGHT, marker, _RIGHT)),
                        schema + ((_LEFT, marker), (_RIGHT, marker)))
    lcnt, rcnt = Column(_LEFT), Column(_RIGHT)
    zero, one = Literal(0, marker), Literal(1, marker)
    if operation == "INTERSECT":
        kept: Expression = Call("and", (Call(">=", (lcnt, one)), Call(">=", (rcnt, one))))
        count: Expression = Call("case", (Call("<", (lcnt, rcnt)), lcnt, rcnt))
    else:  # EXCEPT: the left holds more copies than the right (distinct: the right holds none)
        kept = Call(">", (lcnt, rcnt)) if all_ else Call("and", (Call(">=", (lcnt, one)), Call("==", (rcnt, zero))))
        count = Call("-", (lcnt, rcnt))
    filtered = Filter(counted, kept)
    columns = tuple((n, Column(n)) for n in names)
    if not all_:
        return Project(filtered, columns, schema)
    counted_rows = Project(filtered, columns + ((_COUNT, count),), schema + ((_COUNT, marker),))
    return Replicate(counted_rows, _COUNT, schema)


def _tagged(plan: PlanNode, names: list[str], side: int) -> Project:
    """``plan``'s columns under ``names`` with the two side markers (1 for its own side, 0 for the other)."""
    marker = DataTypes.INT().with_nullable(False)
    exprs: tuple[tuple[str, Expression], ...] = tuple(
        (n, Column(old)) for n, old in zip(names, plan.field_names, strict=True))
    exprs += ((_LEFT, Literal(1 if side == 0 else 0, marker)), (_RIGHT, Literal(1 if side == 1 else 0, marker)))
    schema = tuple((n, t) for n, (_, t) in zip(names, plan.schema, strict=True)) + ((_LEFT, marker), (_RIGHT, marker))
    return Project(plan, exprs, schema)
