"""Which sources of a logical plan never end: what ``execution.runtime-mode = AUTOMATIC`` decides by.

A source is unbounded when it is a streaming Spark DataFrame or a connector
that keeps producing (a monitored filesystem table, datagen without a row
count); everything else (elements, pandas, batch DataFrames, the files of a
filesystem table) ends.
"""

from __future__ import annotations

from changeflow.plan.nodes import PlanNode, Source


def unbounded_sources(plan: PlanNode) -> list[Source]:
    """The unbounded sources under ``plan``, in visiting order."""
    found: list[Source] = []

    def visit(node: PlanNode) -> None:
        if isinstance(node, Source) and _unbounded(node):
            found.append(node)
        for child in node.inputs:
            visit(child)

    visit(plan)
    return found


def _unbounded(source: Source) -> bool:
    if source.kind == "spark":
        return bool(source.payload.isStreaming)
    if source.kind == "connector":
        return not source.payload.bounded
    return False
