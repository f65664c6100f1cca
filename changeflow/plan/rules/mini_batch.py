"""Mini-batch assignment: ``table.exec.mini-batch.enabled`` in a streaming query.

Flink's planner (MiniBatchIntervalInferRule) puts a ``MiniBatchAssigner`` right
above each source, or above its ``WatermarkAssigner`` when the table has one,
and runs every stateful operator in its mini-batch form (MiniBatchGroupAggregate,
a join folding its bundles). changeflow's bundle is a micro-batch (at most
``table.exec.mini-batch.size`` rows per source); the assigner's interval is the
configured ``allow-latency``, printed as Flink does.

The assigner's mode is inferred top-down as Flink does: ``ProcTime`` from the
root, turned ``RowTime`` below an operator that needs a watermark (Flink's
``requireWatermark``: a window aggregation, Top-N, deduplication or join, an
event-time OVER aggregation, interval join or temporal join, a row-time
deduplication; checked against PyFlink 2.3's EXPLAIN, fixtures in
``tests/plan/fixtures/mini_batch.sql``). A ``RowTime`` assigner generates no
watermarks: it forwards only those of its watermark assigner that end an
``allow-latency`` interval (:mod:`changeflow.kernels.rowtime_mini_batch`, applied
by the runtime where watermarks are applied), each then a bundle boundary for
the operators after it.

The rule annotates every node with ``mini_batch`` and the node under each
assigner with ``mini_batch_assigner`` ``(interval ms, size, mode)``. Batch
queries have no mini-batch.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.event_time import ProcessingTimeAssigner, WatermarkAssigner, WindowAggregate
from changeflow.plan.nodes import Deduplicate, PlanNode, Source
from changeflow.plan.over import OverAggregate
from changeflow.plan.physical import annotate, with_inputs
from changeflow.plan.rules import Rule
from changeflow.plan.time_joins import IntervalJoin, TemporalJoin
from changeflow.plan.window_ops import WindowDeduplicate, WindowJoin, WindowRank

_WINDOW_OPERATORS = (WindowAggregate, WindowRank, WindowDeduplicate, WindowJoin, IntervalJoin, TemporalJoin)


def needs_watermark(node: PlanNode) -> bool:
    """Whether ``node`` works on event time (Flink's ``requireWatermark``): its assigners go ``RowTime``."""
    if isinstance(node, OverAggregate):
        return not node.proctime
    if isinstance(node, Deduplicate):
        return node.order != "proctime"
    return isinstance(node, _WINDOW_OPERATORS)


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: ``mini_batch`` on every node, ``mini_batch_assigner`` under each assigner, when mini-batch is on."""
    if not (settings.streaming and settings.mini_batch):
        return plan
    latency, size = settings.mini_batch_latency_ms, settings.mini_batch_size
    done: dict[tuple[int, bool, bool], PlanNode] = {}   # a node reached by two paths stays one node

    def visit(node: PlanNode, row_time: bool, under_watermark: bool) -> PlanNode:
        key = (id(node), row_time, under_watermark)
        if key not in done:
            below = row_time or needs_watermark(node)
            # A processing-time window's assigner is the wall clock: its mini-batches are ProcTime ones.
            is_assigner = isinstance(node, WatermarkAssigner) and not isinstance(node, ProcessingTimeAssigner)
            inputs = tuple(visit(c, below, is_assigner) for c in node.inputs)
            values: dict[str, Any] = {"mini_batch": True}
            if is_assigner or (isinstance(node, Source) and not under_watermark):
                values["mini_batch_assigner"] = (latency, size, "RowTime" if row_time and is_assigner else "ProcTime")
            done[key] = annotate(with_inputs(node, inputs), **values)
        return done[key]

    return visit(plan, False, False)


RULE = Rule("mini_batch", 50, apply, ("mini_batch", "mini_batch_assigner"))

__all__ = ["apply", "needs_watermark"]
