"""PyFlink's broadcast state pattern: ``stream.connect(rules.broadcast(descriptor)).process(function)``.

``rules.broadcast(MapStateDescriptor, ...)`` gives a :class:`BroadcastStream`: its
records reach every parallel instance of the operator it is connected to, which
keeps them in *broadcast state* (one map per descriptor, the same in every
instance). ``stream.connect(broadcast_stream)`` gives a :class:`BroadcastConnectedStream`,
whose ``process`` takes a ``BroadcastProcessFunction`` (``stream`` without keys) or
a ``KeyedBroadcastProcessFunction`` (``stream`` a ``KeyedStream``: keyed state and
timers too). ``process_broadcast_element(value, ctx)`` writes the broadcast state
(``ctx.get_broadcast_state(descriptor)``), ``process_element(value, ctx)`` reads it::

    >>> from changeflow.common import Types
    >>> from changeflow.datastream import BroadcastProcessFunction, MapStateDescriptor, StreamExecutionEnvironment
    >>> rates = MapStateDescriptor("rates", Types.STRING(), Types.DOUBLE())
    >>> class Convert(BroadcastProcessFunction):
    ...     def process_element(self, value, ctx):
    ...         rate = ctx.get_broadcast_state(rates).get(value[0])
    ...         yield value[0], value[1] * (rate or 0.0)
    ...     def process_broadcast_element(self, value, ctx):
    ...         ctx.get_broadcast_state(rates).put(value[0], value[1])
    >>> env = StreamExecutionEnvironment.get_execution_environment()
    >>> prices, updates = env.from_collection([("eur", 2.0)]), env.from_collection([("eur", 1.1)])
    >>> prices.connect(updates.broadcast(rates)).process(Convert()).get_name()
    'Co-Process-Broadcast'

How it runs: every bucket of the operator's stateful stage gets every broadcast
record and keeps the broadcast state in its state store; a micro-batch's broadcast
records are applied before its other records (:mod:`changeflow.kernels.keyed.broadcast`,
:mod:`changeflow.runtime.spark.two_input`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from changeflow.common.typeinfo import PickledBytesTypeInfo, TypeInformation
from changeflow.datastream import graph
from changeflow.datastream.co_functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from changeflow.datastream.state import MapStateDescriptor, broadcast_state_for

if TYPE_CHECKING:
    from changeflow.datastream.data_stream import DataStream

__all__ = ["BroadcastConnectedStream", "BroadcastStream"]


class BroadcastStream:
    """A stream whose records every parallel instance of the next operator gets, with the broadcast states its
    descriptors name; only ``connect``-ing a stream to it applies (``DataStream.connect``)."""

    def __init__(self, input_stream: "DataStream", broadcast_state_descriptors: list[MapStateDescriptor]) -> None:
        self.input_stream = input_stream
        self.broadcast_state_descriptors = list(broadcast_state_descriptors)


def broadcast_stream(stream: "DataStream", descriptors: tuple) -> Any:
    """``stream.broadcast(*descriptors)``: without descriptors the same records (Flink's broadcast partitioning at
    parallelism 1: docs/differences.md), else a :class:`BroadcastStream`."""
    if not descriptors or descriptors[0] is None:
        return stream
    for descriptor in descriptors:
        if not isinstance(descriptor, MapStateDescriptor):
            raise TypeError("broadcast_state_descriptor must be MapStateDescriptor")  # PyFlink's message
    return BroadcastStream(stream, list(descriptors))


class BroadcastConnectedStream:
    """A stream (keyed or not) connected to a :class:`BroadcastStream`: ``process`` applies a broadcast process
    function to both."""

    def __init__(self, non_broadcast_stream: "DataStream", broadcast_stream: BroadcastStream,
                 broadcast_state_descriptors: list[MapStateDescriptor]) -> None:
        if non_broadcast_stream._env is not broadcast_stream.input_stream._env:
            raise ValueError("connect() needs streams of the same StreamExecutionEnvironment")
        self.non_broadcast_stream = non_broadcast_stream
        self.broadcast_stream = broadcast_stream
        self.broadcast_state_descriptors = list(broadcast_state_descriptors)

    def process(self, func: BroadcastProcessFunction | KeyedBroadcastProcessFunction,
                output_type: TypeInformation | None = None) -> "DataStream":
        """``func.process_element`` on each record of the connected stream, ``func.process_broadcast_element`` on
        each of the broadcast stream: a ``BroadcastProcessFunction`` for a stream without keys, a
        ``KeyedBroadcastProcessFunction`` for a ``KeyedStream``."""
        from changeflow.datastream.data_stream import DataStream, KeyedStream

        keyed = isinstance(self.non_broadcast_stream, KeyedStream)
        if isinstance(func, BroadcastProcessFunction) and keyed:
            raise TypeError("BroadcastProcessFunction should be applied to non-keyed DataStream")  # PyFlink's
        if isinstance(func, KeyedBroadcastProcessFunction) and not keyed:
            raise TypeError("KeyedBroadcastProcessFunction should be applied to keyed DataStream")  # PyFlink's
        if not isinstance(func, (BroadcastProcessFunction, KeyedBroadcastProcessFunction)):
            raise TypeError("process() of a BroadcastConnectedStream takes a BroadcastProcessFunction or a "
                            f"KeyedBroadcastProcessFunction, got {type(func).__name__}")
        main, rules = self.non_broadcast_stream, self.broadcast_stream.input_stream
        key = main._key_selector if isinstance(main, KeyedStream) else None
        name = "Keyed-Co-Process-Broadcast" if keyed else "Co-Process-Broadcast"  # PyFlink's operator names
        node = graph.CoProcessNode(name, output_type or PickledBytesTypeInfo(), first=main._node,
                                   second=rules._node, kind="broadcast", function=func, output_type=output_type,
                                   first_key=key, broadcast_states=tuple(self.broadcast_state_descriptors),
                                   state_handles=broadcast_state_for)
        return DataStream(main._env, node)
