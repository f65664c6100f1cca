"""A connector source (``FileSource``, ``NumberSequenceSource``) as a node of the DataStream graph."""

from __future__ import annotations

from typing import Any

from changeflow.common.watermark_strategy import WatermarkStrategy
from changeflow.datastream import graph
from changeflow.plan.stream_nodes import Op

__all__ = ["connector_source"]


def connector_source(source: Any, watermark_strategy: Any, name: str, type_info: Any, context: Any) -> graph.Node:
    """The graph source reading ``source`` (then its format's deserializer, if it has one); ``type_info``, when
    given, must be the type of the records it produces; ``context`` makes the deserializer's runtime context
    (the job's :class:`~changeflow.datastream.job_context.JobContext`, as every operator of the job has)."""
    if watermark_strategy is not None and not isinstance(watermark_strategy, WatermarkStrategy):
        raise TypeError(f"from_source: the watermark strategy must be a WatermarkStrategy, got {watermark_strategy!r}")
    kind, payload, produced = source.source_node(name)
    decoder = source.record_decoder() if callable(getattr(source, "record_decoder", None)) else None
    records = produced if decoder is None else decoder[1]
    if type_info is not None and repr(type_info) != repr(records):
        raise ValueError(f"from_source: {type(source).__name__} produces {records!r} records, "
                         f"not the type_info given ({type_info!r})")
    node: graph.Node = graph.SourceNode(name, produced, kind=kind, payload=payload)
    if decoder is not None:  # a format's deserializer (JSON rows of Kafka values) runs right after the source
        op = Op("flat_map", decoder[0], f"{name}: deserialize", records, context=context)
        node = graph.Stateless(f"{name}: deserialize", records, input=node, op=op)
    return node
