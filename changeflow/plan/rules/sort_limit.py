"""Sort and limit: ``ORDER BY`` / ``OFFSET`` / ``FETCH`` as the query's mode allows them.

A batch query keeps its :class:`~changeflow.plan.nodes.Sort` (the Spark runtime
sorts). A streaming query cannot sort an unbounded input; as Flink's stream
planner does, it turns a sort with a fetch into a Top-N over the whole input
(a :class:`~changeflow.plan.nodes.Rank` without partition keys, rows
``offset + 1 .. offset + fetch``), whose changelog inserts and retracts rows as
they enter and leave the top; a bare ``FETCH``/``LIMIT`` keeps the first rows to
arrive. Flink also sorts a stream ascending on a time attribute alone (its
temporal sort): changeflow refuses that, naming it; any other streaming sort is
refused with Flink's message.

Runs first (order 5): the materializer rule reads changelog modes, and a
streaming plan has no Sort after this rule.
"""

from __future__ import annotations

from typing import Any

from changeflow.expressions import Column, Literal
from changeflow.common.types import DataTypes
from changeflow.plan.nodes import Filter, PlanNode, Project, Rank, Sort
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.type_inference import PlanError, is_proctime


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: in a streaming plan, every Sort becomes a Top-N (or is refused)."""
    if not settings.streaming:
        return plan
    return rewrite(plan, lambda node: streaming_sort(node) if isinstance(node, Sort) else node)


def streaming_sort(node: Sort) -> PlanNode:
    """The streaming form of ``node``: a global Top-N; raises for what a stream cannot sort."""
    if node.fetch is None:
        types = node.input.type_map()
        first = node.order_by[0] if node.order_by else None
        if first is not None and first[1] and is_proctime(types[first[0]]):
            raise NotImplementedError(
                f"ORDER BY time attribute {first[0]!r} without FETCH in a streaming query (Flink's temporal "
                f"sort) is not supported by changeflow; add a fetch/limit (a Top-N) or run in batch mode")
        if not node.order_by:
            raise PlanError("OFFSET without FETCH is not supported in a streaming query; add a fetch/limit")
        columns = ", ".join(c for c, _, _ in node.order_by)
        raise PlanError(f"Sort on a non-time-attribute field is not supported. (ORDER BY {columns} without a "
                        f"LIMIT/FETCH in a streaming query: add one for a Top-N, or run in batch mode)")
    if node.fetch == 0:
        return Filter(node.input, Literal(False, DataTypes.BOOLEAN(False)))  # LIMIT 0: no rows, ever
    if node.order_by:
        return Rank(node.input, (), node.order_by, node.offset + 1, node.offset + node.fetch, None,
                    node.input.schema)
    # A bare FETCH keeps the first rows to arrive: a Top-N on a constant, whose ties rank in arrival order.
    columns = tuple((n, Column(n)) for n in node.input.field_names)
    constant = Literal(0, DataTypes.INT(False))
    keyed = Project(node.input, columns + ((_ARRIVAL, constant),), node.input.schema + ((_ARRIVAL, constant.type()),))
    ranked = Rank(keyed, (), ((_ARRIVAL, True, True),), node.offset + 1, node.offset + node.fetch, None, keyed.schema)
    return Project(ranked, columns, node.input.schema)


_ARRIVAL = "$arrival"


RULE = Rule("sort_limit", 5, apply, ())
