"""Window aggregation: a ``GROUP BY`` over a window TVF's ``window_start`` and ``window_end``.

Flink plans ``SELECT ... FROM TABLE(TUMBLE(...)) GROUP BY window_start,
window_end, k`` as a *window aggregate*: each window's result is emitted once,
insert-only, when the watermark passes the window's end, and its state is
dropped then. This rule finds such an aggregation in a streaming plan (the
grouping keys include a ``window_start`` and a ``window_end`` of the same window
TVF, :func:`~changeflow.plan.event_time.window_lineage`) and makes it a
:class:`~changeflow.plan.event_time.WindowAggregate`.

It does the same over a *windowed* input: the ``window_start`` and ``window_end``
another window operator passes on (a window aggregation's, Top-N's,
deduplication's or join's, :func:`~changeflow.plan.window_ops.window_columns`),
Flink's window aggregation with a ``WindowAttachedWindowingStrategy`` (Nexmark
q5's ``GROUP BY starttime, endtime`` of a windowed count): each input row already
carries its window, so the aggregation groups by it and fires it when the
watermark passes its end, like one over the TVF. A session window's attached
form is not planned (it stays a regular aggregation, as Flink plans it). A batch
plan keeps the ordinary aggregation: over bounded input the window columns are
plain values, and grouping by them gives every window's final row.

Window operators nest both ways: a window join or Top-N over window aggregations
(Nexmark q5), and a window aggregation over a window join's, Top-N's or
deduplication's output. So this rule's one bottom-up pass also converts joins
(:func:`~changeflow.plan.rules.window_join.window_join`) and ranks
(:func:`~changeflow.plan.rules.window_rank.window_rank`): each node is converted
over inputs already converted, whatever the depth. (The ``window_join`` and
``window_rank`` rules then find nothing left; they stay as the named steps whose
fixtures show each conversion.)
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.event_time import WindowAggregate, window_lineage
from changeflow.plan.nodes import Aggregate, Join, PlanNode, Rank
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.window_ops import window_columns


def window_aggregate(node: Aggregate) -> WindowAggregate | None:
    """``node`` as a window aggregate, if it groups by a window's start and end (else None)."""
    lineage = window_lineage(node.input)
    attached = not any(lineage.get(k, ("",))[0] == "window_start" for k in node.keys)
    if attached:
        lineage = window_columns(node.input)   # a windowed input: its rows carry their windows
    roles = {lineage[k][0]: (k, lineage[k][1]) for k in node.keys if k in lineage}
    if "window_start" not in roles or "window_end" not in roles:
        return None
    (start, window), (end, other) = roles["window_start"], roles["window_end"]
    if window != other or (attached and not window.aligned):
        return None
    if not window.aligned:
        # Flink: a session window aggregates by window only when its other keys are the session's
        # partition keys; otherwise the SESSION TVF's rows feed an ordinary (updating) aggregation.
        others = {k for k in node.keys if k not in lineage}
        if others != set(window.partition_keys):
            return None
    return WindowAggregate(node.input, node.keys, node.calls, node.out_schema, window, start, end, attached)


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: in a streaming plan, every aggregation over a window's start and end becomes a WindowAggregate
    (and every join and rank of windows a window join or Top-N, in the same pass: the module docstring)."""
    if not settings.streaming:
        return plan
    from changeflow.plan.rules.window_join import window_join
    from changeflow.plan.rules.window_rank import window_rank

    def convert(node: PlanNode) -> PlanNode:
        if type(node) is Aggregate:
            return window_aggregate(node) or node
        if type(node) is Join:
            return window_join(node) or node
        if type(node) is Rank:
            return window_rank(node) or node
        return node

    return rewrite(plan, convert)


RULE = Rule("window_aggregate", 12, apply, ())  # rewrites nodes: before split_distinct and any annotation
