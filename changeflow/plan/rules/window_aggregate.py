"""Window aggregation: a ``GROUP BY`` over a window TVF's ``window_start`` and ``window_end``.

Flink plans ``SELECT ... FROM TABLE(TUMBLE(...)) GROUP BY window_start,
window_end, k`` as a *window aggregate*: each window's result is emitted once,
insert-only, when the watermark passes the window's end, and its state is
dropped then. This rule finds such an aggregation in a streaming plan (the
grouping keys include a ``window_start`` and a ``window_end`` of the same window
TVF, :func:`~changeflow.plan.event_time.window_lineage`) and makes it a
:class:`~changeflow.plan.event_time.WindowAggregate`. A batch plan keeps the
ordinary aggregation: over bounded input the window columns are plain values,
and grouping by them gives every window's final row.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.event_time import WindowAggregate, window_lineage
from changeflow.plan.nodes import Aggregate, PlanNode
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule


def window_aggregate(node: Aggregate) -> WindowAggregate | None:
    """``node`` as a window aggregate, if it groups by a window's start and end (else None)."""
    lineage = window_lineage(node.input)
    roles = {lineage[k][0]: (k, lineage[k][1]) for k in node.keys if k in lineage}
    if "window_start" not in roles or "window_end" not in roles:
        return None
    (start, window), (end, other) = roles["window_start"], roles["window_end"]
    if window != other:
        return None
    if not window.aligned:
        # Flink: a session window aggregates by window only when its other keys are the session's
        # partition keys; otherwise the SESSION TVF's rows feed an ordinary (updating) aggregation.
        others = {k for k in node.keys if k not in lineage}
        if others != set(window.partition_keys):
            return None
    return WindowAggregate(node.input, node.keys, node.calls, node.out_schema, window, start, end)


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: in a streaming plan, every aggregation over a window's start and end becomes a WindowAggregate."""
    if not settings.streaming:
        return plan

    def convert(node: PlanNode) -> PlanNode:
        if type(node) is Aggregate:
            return window_aggregate(node) or node
        return node

    return rewrite(plan, convert)


RULE = Rule("window_aggregate", 12, apply, ())  # rewrites nodes: before split_distinct and any annotation
