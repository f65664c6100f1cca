"""Whether a streaming query needs its watermark rows and end-of-input signals at all.

A table declared with a ``WATERMARK`` gets a watermark assigner in every plan that
reads it, and its watermark rows and end-of-input control rows (:mod:`.control_rows`)
then flow through the query: a Python stage per scan computing the watermarks, a
fan-out of every signal to every bucket of every stateful operator, and one more
micro-batch at the end for each bounded source's end-of-input marker. That is what
event-time operators need; a plan whose operators never act on a watermark or on the
end of input gives the same changelog without any of it (Flink's regular joins,
group aggregations and Top-N ignore watermarks too). Nexmark's join queries (q3, q4,
q9, q20) are such plans over the watermarked ``datagen`` table.

:func:`signals_needed` answers conservatively: only plans made entirely of the node
types listed here, whose runtime kernels have neither ``on_watermark`` nor
``end_of_input``, go without signals; any other node (a window, an interval, temporal
or window join, OVER, a deduplication on row time, ``CURRENT_WATERMARK()``, a table
aggregate, a correlate, ...) keeps them, as does a row-time mini-batch assigner,
whose filter runs where watermarks are applied. A sink that reads the watermark (a
filesystem sink committing partitions on partition time) keeps them as well: the
translator asks for that apart (``StreamingTranslator.keep_watermarks``).
"""

from __future__ import annotations

from changeflow.plan.event_time import ProcessingTimeAssigner, WatermarkAssigner
from changeflow.plan.nodes import (Aggregate, ChangelogNormalize, Filter, Join, PlanNode, Project, Rank, Sink,
                                   Source, Union, UpsertMaterialize)
from changeflow.runtime.spark.current_watermark import calls_current_watermark
from changeflow.runtime.spark.event_time import has_watermarks

# Exact types (not subclasses: an IntervalJoin is a Join that fires on watermarks). Their
# kernels (the regular join, group aggregation, Top-N, changelog normalization, the sink
# materializer) implement neither on_watermark nor end_of_input.
_IGNORE_SIGNALS = (Source, Union, Join, Aggregate, Rank, ChangelogNormalize, UpsertMaterialize, Sink)


def _ignores_signals(node: PlanNode) -> bool:
    if type(node) in _IGNORE_SIGNALS:
        return True
    if type(node) is Project:
        return not calls_current_watermark([e for _, e in node.exprs])
    if type(node) is Filter:
        return not calls_current_watermark([node.predicate])
    if type(node) is WatermarkAssigner and not isinstance(node, ProcessingTimeAssigner):
        assigner = node.traits.mini_batch_assigner if node.traits is not None else None
        return assigner is None or assigner[2] != "RowTime"
    return False


def signals_needed(root: PlanNode) -> bool:
    """Whether the physical plan ``root`` has watermark assigners whose signals an operator acts on."""
    if not has_watermarks(root):
        return False
    todo = [root]
    while todo:
        node = todo.pop()
        if not _ignores_signals(node):
            return True
        todo.extend(node.inputs)
    return False


__all__ = ["signals_needed"]
