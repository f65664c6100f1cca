"""Which sources of a logical plan never end: what ``execution.runtime-mode = AUTOMATIC`` decides by.

A source is unbounded when it is a streaming Spark DataFrame or a connector
that keeps producing (a monitored filesystem table, datagen without a row
count); everything else (elements, pandas, batch DataFrames, the files of a
filesystem table) ends.
"""

from __future__ import annotations

from changeflow.plan.nodes import PlanNode, Source, sources


def unbounded_sources(plan: PlanNode) -> list[Source]:
    """The unbounded sources under ``plan``, left to right, each once."""
    return [s for s in sources(plan) if _unbounded(s)]


def _unbounded(source: Source) -> bool:
    if source.kind == "spark":
        return bool(source.payload.isStreaming)
    if source.kind == "connector":
        return not source.payload.bounded
    if source.kind == "datastream":  # a DataStream converted to a Table ends when its sources do
        from changeflow.plan.streams.rules import unbounded_inputs
        return bool(unbounded_inputs(source.payload.node))
    return False
