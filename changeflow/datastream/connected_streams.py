"""PyFlink's ``ConnectedStreams``: ``first.connect(second)``, two streams of (possibly) different types
processed by one two-input operator.

``key_by(key_selector1, key_selector2)`` partitions both by a common key:
``map``/``flat_map``/``process`` then run with keyed state and timers shared by
the two inputs' records of a key (a ``KeyedCoProcessFunction``, or a
``CoMapFunction``/``CoFlatMapFunction`` whose ``open`` asks the runtime
context for keyed state). Without ``key_by`` each record is processed on
its own (``CoMapFunction``, ``CoFlatMapFunction``, ``CoProcessFunction``)::

    >>> from changeflow.common import Types
    >>> from changeflow.datastream import CoMapFunction, StreamExecutionEnvironment
    >>> class Tag(CoMapFunction):
    ...     def map1(self, value): return "left", value
    ...     def map2(self, value): return "right", value
    >>> env = StreamExecutionEnvironment.get_execution_environment()
    >>> words, numbers = env.from_collection(["a", "b"]), env.from_collection([1, 2])
    >>> words.connect(numbers).map(Tag()).get_name()
    'Co-Map'

The operator's watermark is the minimum of its two inputs' (Flink's rule), so
an event-time timer fires once both inputs' watermarks passed it. How it runs:
:class:`~changeflow.plan.stream_nodes.CoProcessNode`,
:mod:`changeflow.kernels.keyed.co_process`, :mod:`changeflow.runtime.spark.two_input`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from changeflow.common.typeinfo import PickledBytesTypeInfo, TypeInformation
from changeflow.datastream import graph
from changeflow.datastream.co_functions import (CoFlatMapFunction, CoMapFunction, CoProcessFunction,
                                                KeyedCoProcessFunction)
from changeflow.datastream.functions import KeySelector

if TYPE_CHECKING:
    from changeflow.datastream.data_stream import DataStream, KeyedStream

__all__ = ["ConnectedStreams"]


class ConnectedStreams:
    """Two connected streams (``stream1``, ``stream2``, as PyFlink names them); keyed when both are keyed."""

    def __init__(self, stream1: "DataStream", stream2: "DataStream") -> None:
        if stream1._env is not stream2._env:
            raise ValueError("connect() needs streams of the same StreamExecutionEnvironment")
        self.stream1 = stream1
        self.stream2 = stream2

    def key_by(self, key_selector1: Callable | KeySelector, key_selector2: Callable | KeySelector,
               key_type: TypeInformation | None = None) -> "ConnectedStreams":
        """Both inputs keyed, the first by ``key_selector1``, the second by ``key_selector2`` (keys of one type:
        a declared ``key_type`` is enforced on both); an input already keyed is keyed anew, as in PyFlink."""
        return ConnectedStreams(_unkeyed(self.stream1).key_by(key_selector1, key_type),
                                _unkeyed(self.stream2).key_by(key_selector2, key_type))

    def map(self, func: CoMapFunction, output_type: TypeInformation | None = None) -> "DataStream":
        """``func.map1`` on each record of the first input, ``func.map2`` on the second's: one output each."""
        if not isinstance(func, CoMapFunction):
            raise TypeError("The input function must be a CoMapFunction!")  # PyFlink's message
        return self._operator("map", func, output_type, "Co-Map")

    def flat_map(self, func: CoFlatMapFunction, output_type: TypeInformation | None = None) -> "DataStream":
        """``func.flat_map1``/``flat_map2``: zero or more outputs per record of the first/second input."""
        if not isinstance(func, CoFlatMapFunction):
            raise TypeError("The input must be a CoFlatMapFunction!")  # PyFlink's message
        return self._operator("flat_map", func, output_type, "Co-Flat Map")

    def process(self, func: CoProcessFunction | KeyedCoProcessFunction,
                output_type: TypeInformation | None = None) -> "DataStream":
        """``func.process_element1``/``process_element2(value, ctx)``; a ``KeyedCoProcessFunction`` (keyed streams
        only) also gets ``on_timer`` for its processing-time and event-time timers."""
        if not isinstance(func, (CoProcessFunction, KeyedCoProcessFunction)):
            raise TypeError("The input must be a CoProcessFunction or KeyedCoProcessFunction!")  # PyFlink's
        keyed = self._is_keyed_stream()
        if isinstance(func, KeyedCoProcessFunction) and not keyed:
            raise TypeError("a KeyedCoProcessFunction needs keyed ConnectedStreams: key_by(key_selector1, "
                            "key_selector2) them first (or use a CoProcessFunction)")
        return self._operator("process", func, output_type, "Keyed Co-Process" if keyed else "Co-Process")

    def _is_keyed_stream(self) -> bool:
        from changeflow.datastream.data_stream import KeyedStream

        return isinstance(self.stream1, KeyedStream) and isinstance(self.stream2, KeyedStream)

    def _operator(self, kind: str, func: Any, output_type: TypeInformation | None, name: str) -> "DataStream":
        from changeflow.datastream.data_stream import DataStream

        first, second = self.stream1, self.stream2
        keys: dict[str, Any] = {}
        if self._is_keyed_stream():
            keys = {"first_key": _key_selector(first), "second_key": _key_selector(second)}
        node = graph.CoProcessNode(name, output_type or PickledBytesTypeInfo(), first=first._node,
                                   second=second._node, kind=kind, function=func, output_type=output_type, **keys)
        return DataStream(first._env, node)


def _unkeyed(stream: "DataStream") -> "DataStream":
    from changeflow.datastream.data_stream import DataStream

    return DataStream(stream._env, stream._node)  # a KeyedStream's records, without its keying


def _key_selector(stream: "DataStream") -> Any:
    keyed: KeyedStream = stream  # type: ignore[assignment] - checked by _is_keyed_stream
    return keyed._key_selector
