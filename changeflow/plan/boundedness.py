"""Which sources of a logical plan never end: what ``execution.runtime-mode = AUTOMATIC`` decides by.

A source is unbounded when it is a streaming Spark DataFrame or a connector
that keeps producing (a monitored filesystem table, datagen without a row
count); everything else (elements, pandas, batch DataFrames, the files of a
filesystem table) ends. The same for a DataStream job's sources (:func:`is_bounded`).
"""

from __future__ import annotations

from changeflow.plan.nodes import PlanNode, Source, sources
from changeflow.plan.stream_nodes import Node, SourceNode
from changeflow.plan.stream_walks import sources as stream_sources


def unbounded_sources(plan: PlanNode) -> list[Source]:
    """The unbounded sources under ``plan``, left to right, each once."""
    return [s for s in sources(plan) if _unbounded(s)]


def _unbounded(source: Source) -> bool:
    if source.kind == "spark":
        return bool(source.payload.isStreaming)
    if source.kind == "connector":
        return not source.payload.bounded
    if source.kind == "datastream":  # a DataStream converted to a Table ends when its sources do
        return bool(unbounded_inputs(source.below))  # pyright: ignore[reportAttributeAccessIssue] - a StreamSource
    return False


def is_bounded(source: SourceNode) -> bool:
    """Whether a DataStream source ends: collections and text files do, a streaming Spark DataFrame does not."""
    if source.kind == "table":  # a Table converted to a stream ends when its plan's sources do
        return not unbounded_sources(source.below)  # pyright: ignore[reportAttributeAccessIssue] - a TableNode
    if source.kind == "kafka":  # KafkaSource: bounded with set_bounded
        return source.payload.bounded
    return not (source.kind == "dataframe" and source.payload.isStreaming)


def unbounded_inputs(node: Node) -> list[SourceNode]:
    """The unbounded sources upstream of the DataStream node ``node``."""
    return [s for s in stream_sources(node) if not is_bounded(s)]
