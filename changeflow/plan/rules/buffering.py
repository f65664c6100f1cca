"""Whether a streaming query's output is buffered by the flush interval, and how often its micro-batches run.

With ``execution.max-flush-interval`` every group aggregation buffers its
latest output per key and flushes it in the first micro-batch of each interval
(aligned to multiples of the interval), on idle input and at end of input
(:mod:`changeflow.runtime.spark.flush`). The rule (:func:`apply`) puts the
query's :class:`~changeflow.plan.flush_policy.FlushPolicy` on every node of a
streaming plan (``flush``), marks the operators that buffer (``buffers``) and
each node whose output is buffered (``output_buffered``). When every row that reaches the sink
has passed such a buffer, a micro-batch inside an interval only fills buffers:
the sink sees nothing new until the next interval begins. On Spark each
micro-batch costs a fixed amount whatever it carries (planning, one task per
partition and stateful operator, a state-store commit per task: about 0.5-1 s
on two cores), so such a query runs its micro-batches once per interval
instead of at the source's pace. Spark aligns processing-time triggers to
multiples of their interval, as the flush intervals are, so the micro-batch at
an interval's start reads the input up to that instant and flushes it: a key's
latest value reaches the sink no later than with more frequent micro-batches.

A node's output is *buffered* when it is a buffering aggregation, or when it
only reacts to its inputs (stateless nodes, joins, deduplication, top-N, the
sink upsert materializer) and all its inputs are buffered. A source is not.

The pace changes only when every unbounded source reads all its available
input in each micro-batch. A monitored directory (the filesystem connector's
``source.monitor-interval``) reads one file per micro-batch, which keeps its
rows in order: a micro-batch per interval would read a file per interval and
fall behind, so such a query keeps the directory's pace.
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.correlate import Correlate
from changeflow.plan.nodes import (Aggregate, ChangelogNormalize, Deduplicate, Filter, Join, PlanNode, Project, Rank,
                                   Replicate, Sink, Sort, Source, Union, UpsertMaterialize)
from changeflow.plan.physical import annotate_all
from changeflow.plan.rules import Rule

# Nodes whose output changes only when their input does (no timers, no clock of their own).
_REACTIVE = (Project, Filter, Replicate, Sort, Union, Join, Deduplicate, Rank, UpsertMaterialize, Sink, Correlate,
             ChangelogNormalize)


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: the flush policy, the buffering operators and buffered outputs of a streaming plan."""
    if not settings.streaming or settings.flush is None:
        return plan

    def annotations(node: PlanNode) -> dict:
        buffered = isinstance(node, Aggregate) or (isinstance(node, _REACTIVE) and bool(node.inputs) and all(
            child.traits.output_buffered for child in node.inputs))
        return {"flush": settings.flush, "buffers": isinstance(node, Aggregate), "output_buffered": buffered}

    return annotate_all(plan, annotations)


def output_buffered(node: PlanNode) -> bool:
    """Whether every row ``node`` outputs has passed a flush buffer (with a flush interval set).

    >>> from changeflow.plan.nodes import Source
    >>> from changeflow.common.types import DataTypes
    >>> from changeflow.kernels.aggregate.functions import AggCall
    >>> src = Source("t", (("k", DataTypes.STRING()), ("v", DataTypes.BIGINT())), "elements", [])
    >>> agg = Aggregate(src, ("k",), (AggCall("sum", "v", DataTypes.BIGINT(), "s"),), src.schema)
    >>> above = Filter(agg, None)
    >>> output_buffered(src), output_buffered(agg), output_buffered(above)
    (False, True, True)
    """
    if isinstance(node, Aggregate):
        return True
    if isinstance(node, _REACTIVE):
        return bool(node.inputs) and all(output_buffered(child) for child in node.inputs)
    return False


def micro_batch_interval_ms(plan: PlanNode, source_interval_ms: int | None, flush_interval_ms: int | None,
                            memory_only: bool = False) -> int | None:
    """How often ``plan``'s streaming query runs a micro-batch; None for bounded input (``availableNow``).

    ``source_interval_ms`` is the pace of the plan's unbounded sources (their
    monitor interval). With a flush interval (not memory-only, which flushes
    every micro-batch) and a buffered output, the query runs once per flush
    interval, or at the source's pace if that is slower. A physical plan's
    root says whether its output is buffered (``output_buffered``).

    >>> from changeflow.plan.nodes import Source
    >>> from changeflow.common.types import DataTypes
    >>> from changeflow.kernels.aggregate.functions import AggCall
    >>> src = Source("t", (("k", DataTypes.STRING()), ("v", DataTypes.BIGINT())), "elements", [])
    >>> agg = Aggregate(src, ("k",), (AggCall("sum", "v", DataTypes.BIGINT(), "s"),), src.schema)
    >>> micro_batch_interval_ms(agg, 1000, 5000), micro_batch_interval_ms(src, 1000, 5000)
    (5000, 1000)
    >>> micro_batch_interval_ms(agg, 1000, None), micro_batch_interval_ms(agg, None, 5000)
    (1000, None)
    """
    if source_interval_ms is None:
        return None
    buffered = plan.traits.output_buffered if plan.traits is not None else output_buffered(plan)
    if flush_interval_ms is None or memory_only or not buffered or reads_a_file_per_batch(plan):
        return source_interval_ms
    return max(source_interval_ms, flush_interval_ms)


def reads_a_file_per_batch(plan: PlanNode) -> bool:
    """Whether an unbounded source under ``plan`` is a monitored directory (one file per micro-batch)."""
    if isinstance(plan, Source):
        payload = plan.payload
        return plan.kind == "connector" and getattr(payload, "monitor_interval_ms", None) is not None
    return any(reads_a_file_per_batch(child) for child in plan.inputs)


RULE = Rule("buffering", 70, apply, ("flush", "buffers", "output_buffered"))
