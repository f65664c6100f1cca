"""A connector source (``FileSource``, ``NumberSequenceSource``) as a node of the DataStream graph."""

from __future__ import annotations

from typing import Any

from changeflow.common.watermark_strategy import WatermarkStrategy
from changeflow.datastream import graph

__all__ = ["connector_source"]


def connector_source(source: Any, watermark_strategy: Any, name: str, type_info: Any) -> graph.SourceNode:
    """The graph source reading ``source``; ``type_info``, when given, must be the source's own type."""
    if watermark_strategy is not None and not isinstance(watermark_strategy, WatermarkStrategy):
        raise TypeError(f"from_source: the watermark strategy must be a WatermarkStrategy, got {watermark_strategy!r}")
    kind, payload, produced = source.source_node(name)
    if type_info is not None and repr(type_info) != repr(produced):
        raise ValueError(f"from_source: {type(source).__name__} produces {produced!r} records, "
                         f"not the type_info given ({type_info!r})")
    return graph.SourceNode(name, produced, kind=kind, payload=payload)
