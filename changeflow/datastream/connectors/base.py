"""PyFlink's connector bases: ``Source``, ``Sink`` and ``DeliveryGuarantee``."""

from __future__ import annotations

from enum import Enum
from typing import Any

__all__ = ["DeliveryGuarantee", "Sink", "Source"]


class Source:
    """A source for ``StreamExecutionEnvironment.from_source``: says which changeflow source node it reads.

    ``source_node(name)`` returns ``(kind, payload, type_info)`` (see
    :class:`changeflow.plan.stream_nodes.SourceNode`).
    """

    def source_node(self, name: str) -> tuple[str, Any, Any]:
        raise NotImplementedError(f"{type(self).__name__} is not a changeflow source")


class Sink:
    """A sink for ``DataStream.sink_to``: ``write(records)`` per micro-batch (:mod:`changeflow.datastream.sinks`)."""

    def write(self, records: list[Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} is not a changeflow sink")


class DeliveryGuarantee(Enum):
    """The delivery guarantee a sink is asked for (Flink's names)."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2
