"""Split distinct aggregation over DISTINCT aggregates of several columns (Flink's Expand, as a union).

``SELECT k, COUNT(DISTINCT a), COUNT(DISTINCT b), SUM(v) FROM t GROUP BY k`` cannot
be split with one bucket column: grouping the partial level by the buckets of both
``a`` and ``b`` would put one value of ``a`` in several partial groups and count it
more than once. Flink's SplitAggregateRule therefore gives each *group set* its own
copy of every row (its Expand operator): one copy per distinct column, grouped by the
keys plus that column's bucket ``MOD(HASH_CODE(a), bucket-num)`` with the other
buckets NULL, and one copy for the aggregates that need no bucket (grouped by the
keys alone). An expand id ``$e`` tells the copies apart, and each partial aggregate
sees only the copies of its group set (Flink: ``FILTER $e = id``).

changeflow has no Expand operator, so the copies are a ``UNION ALL`` of one Calc per
group set over the same input; the partial aggregation groups by the keys, every
bucket and ``$e``. Each partial aggregate reads a column of its own that holds its
argument in the copies of its group set and NULL in the others (``COUNT(*)`` becomes
``COUNT`` of a marker that is 1 there), which every aggregate that splits ignores:
the partial result of another group set's copy is NULL (or 0 for counts) and the
final level's SUM/SUM0/MIN/MAX skip it. The final level and the AVG division are
the one-column split's (:mod:`changeflow.plan.rules.split_distinct`). Results equal the unsplit
aggregation's; the plan prints a Union where Flink's prints an Expand.
"""

from __future__ import annotations

from changeflow.common.types import DataTypes
from changeflow.expressions import Call, Expression, Literal
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.plan.nodes import Aggregate, PlanNode, Project, Union
from changeflow.plan.type_inference import type_of

EXPAND_ID = "$e"


def expand(node: Aggregate, below: PlanNode, computed: dict[str, Expression], distinct_columns: list[str],
           buckets: int, fresh) -> tuple[PlanNode, list[str], list[AggCall]]:
    """The union of one Calc per group set over ``below``, its group columns and the partial calls' inputs.

    ``computed`` maps each column the aggregation reads to its expression over ``below``;
    ``fresh(position)`` names a new column. Returns the union, the partial level's group
    columns (keys, buckets, ``$e``), and ``node.calls`` rewritten to read their own columns
    (``COUNT(*)`` as ``COUNT`` of a marker).
    """
    in_types = below.type_map()
    bucket_exprs = {c: Call("%", (Call("hash_code", (computed[c],)), Literal(buckets))) for c in distinct_columns}
    bucket_names = {c: fresh() for c in distinct_columns}
    expand_id = EXPAND_ID if EXPAND_ID not in computed else fresh()
    # Group set of each call: the index of its distinct column, or the plain set (keys only).
    plain = len(distinct_columns)

    def group_set(call: AggCall) -> int:
        if call.distinct and call.arg in distinct_columns:
            return distinct_columns.index(call.arg)
        return plain

    sets = sorted({group_set(c) for c in node.calls})
    inputs: list[tuple[str, AggCall, Expression]] = []  # (column, call, its value in its group set's copies)
    for call in node.calls:
        column = fresh()
        if call.function == "count_star":
            value: Expression = Literal(1, DataTypes.INT(False))
            call = AggCall("count", column, DataTypes.INT(), call.output, call.distinct, call.separator)
        else:
            assert call.arg is not None, "only COUNT(*) has no argument"
            value = computed[call.arg]
            if call.function == "avg":  # the partial SUM0 of AVG runs over BIGINT, as the one-column split's
                value = Call("cast", (value, Literal(DataTypes.BIGINT())))
            call = AggCall(call.function, column, type_of(value, in_types).with_nullable(True), call.output,
                           call.distinct, call.separator)
        inputs.append((column, call, value))

    copies: list[PlanNode] = []
    for s in sets:
        exprs: list[tuple[str, Expression]] = [(k, computed[k]) for k in node.keys]
        for c in distinct_columns:
            bucket = bucket_exprs[c]
            exprs.append((bucket_names[c], bucket if s == distinct_columns.index(c) else
                          Literal(None, type_of(bucket, in_types).with_nullable(True))))
        exprs.append((expand_id, Literal(s, DataTypes.INT(False))))
        for (column, _, value), original in zip(inputs, node.calls, strict=True):
            t = type_of(value, in_types)
            exprs.append((column, value if group_set(original) == s else Literal(None, t.with_nullable(True))))
        schema = [(n, type_of(e, in_types)) for n, e in exprs]
        copies.append(Project(below, tuple(exprs), tuple((n, t.with_nullable(True)) if n in _nullable(inputs,
                              bucket_names) else (n, t) for n, t in schema)))
    union = copies[0] if len(copies) == 1 else Union(tuple(copies), copies[0].schema)
    keys = list(node.keys) + [bucket_names[c] for c in distinct_columns] + [expand_id]
    return union, keys, [call for _, call, _ in inputs]


def _nullable(inputs, bucket_names) -> set[str]:
    """Columns that are NULL in some copies: every copy declares them nullable, so the union's types agree."""
    return {column for column, _, _ in inputs} | set(bucket_names.values())
