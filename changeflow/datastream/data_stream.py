"""PyFlink's ``DataStream`` and ``KeyedStream`` (names, argument orders and results of PyFlink 2.3).

Each method adds a node to the job graph (:mod:`.graph`) and returns a new
stream; nothing runs until ``execute()`` or ``execute_and_collect()``.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, overload

from changeflow.common.typeinfo import PickledBytesTypeInfo, TypeInformation, Types, conform
from changeflow.datastream import graph
from changeflow.kernels.keyed.records import output_tag_of
from changeflow.plan.stream_nodes import Op
from changeflow.datastream.job_context import JobContext
from changeflow.datastream.functions import (FilterFunction, FlatMapFunction, Function, KeyedProcessFunction,
                                             KeySelector, MapFunction, ProcessFunction, ReduceFunction,
                                             describe)
from changeflow.datastream.sinks import CloseableIterator, DataStreamSink
from changeflow.datastream.stream_hints import StreamHints

if TYPE_CHECKING:
    from changeflow.datastream.broadcast import BroadcastConnectedStream, BroadcastStream
    from changeflow.datastream.cache import CachedDataStream
    from changeflow.datastream.connected_streams import ConnectedStreams
    from changeflow.datastream.environment import StreamExecutionEnvironment
    from changeflow.datastream.windowed_stream import (AllWindowedStream, CoGroupedStreams, JoinedStreams,
                                                       WindowedStream)

__all__ = ["CloseableIterator", "DataStream", "DataStreamSink", "KeyedStream"]


def _check(func: Any, kind: type) -> None:
    # A function object of another kind (a FilterFunction given to map) is refused too: the kernels
    # call it by ``kind``'s method (kernels/chain.py).
    if not isinstance(func, kind) and (isinstance(func, Function) or not callable(func)):
        raise TypeError(f"The input must be a {kind.__name__} or a callable function")


class DataStream(StreamHints):
    """A stream of records of one type (partitioning and task hints: :mod:`.stream_hints`)."""

    def __init__(self, env: "StreamExecutionEnvironment", node: graph.Node) -> None:
        self._env = env
        self._node = node

    # --- metadata -----------------------------------------------------------------------
    def get_name(self) -> str:
        return self._node.name

    def name(self, name: str) -> "DataStream":
        """Names the operator (in errors and plans)."""
        graph.set_name(self._node, name)
        return self

    def uid(self, uid: str) -> "DataStream":
        """Sets the operator's stable id (kept on the node; Flink uses it to match state on restore)."""
        graph.set_uid(self._node, uid)
        return self

    def set_parallelism(self, parallelism: int) -> "DataStream":
        """Accepted for PyFlink compatibility; Spark's partitioning decides the actual parallelism."""
        if parallelism < 1:
            raise ValueError(f"parallelism must be at least 1, got {parallelism}")
        return self

    def get_type(self) -> TypeInformation:
        return self._node.type_info

    def get_execution_environment(self) -> "StreamExecutionEnvironment":
        return self._env

    def _rerouted(self) -> "DataStream":
        return DataStream(self._env, self._node)

    # --- stateless transformations ------------------------------------------------------
    def _stateless(self, kind: str, func: Any, output_type: Any, default_name: str) -> "DataStream":
        name = f"{default_name}({describe(func)})"
        type_info = output_type if output_type is not None else (
            self.get_type() if kind == "filter" else Types.PICKLED_BYTE_ARRAY())
        op = Op(kind, func, name, output_type, context=JobContext(self._env.get_config()))
        node = graph.Stateless(name, type_info, input=self._node, op=op)
        return DataStream(self._env, node)

    def map(self, func: Callable | MapFunction, output_type: TypeInformation | None = None) -> "DataStream":
        _check(func, MapFunction)
        return self._stateless("map", func, output_type, "Map")

    def flat_map(self, func: Callable | FlatMapFunction, output_type: TypeInformation | None = None) -> "DataStream":
        _check(func, FlatMapFunction)
        return self._stateless("flat_map", func, output_type, "FlatMap")

    def filter(self, func: Callable | FilterFunction) -> "DataStream":
        _check(func, FilterFunction)
        return self._stateless("filter", func, None, "Filter")

    def process(self, func: ProcessFunction, output_type: TypeInformation | None = None) -> "DataStream":
        if not isinstance(func, ProcessFunction):
            raise TypeError("The input must be a ProcessFunction (a KeyedProcessFunction needs a KeyedStream)")
        return self._stateless("process", func, output_type, "Process")

    def key_by(self, key_selector: Callable | KeySelector, key_type: TypeInformation | None = None) -> "KeyedStream":
        """Partitions by ``key_selector``; a declared ``key_type`` is enforced on every key it returns."""
        _check(key_selector, KeySelector)
        if key_type is not None and key_type.is_declared():
            key_selector = _TypedKeySelector(key_selector, key_type)
        return KeyedStream(self, key_selector, key_type)

    def union(self, *streams: "DataStream") -> "DataStream":
        for s in streams:
            if s._env is not self._env:
                raise ValueError("union() needs streams of the same StreamExecutionEnvironment")
            mine, theirs = self.get_type(), s.get_type()
            if mine.is_declared() and theirs.is_declared() and mine != theirs:
                # As Flink: the union's records are of one type, the first stream's.
                raise TypeError(f"union() needs streams of one type: {self.get_name()} is {mine!r}, "
                                f"{s.get_name()} is {theirs!r}")
        node = graph.UnionNode("Union", self.get_type(), streams=[self._node] + [s._node for s in streams])
        return DataStream(self._env, node)

    def assign_timestamps_and_watermarks(self, watermark_strategy: Any) -> "DataStream":
        """Records timestamped by the strategy's assigner, watermarks following them
        (:mod:`changeflow.common.watermark_strategy`; on Spark, once per micro-batch)."""
        from changeflow.common.watermark_strategy import WatermarkStrategy

        if not isinstance(watermark_strategy, WatermarkStrategy):
            raise TypeError(f"assign_timestamps_and_watermarks() takes a WatermarkStrategy, got "
                            f"{type(watermark_strategy).__name__}")
        node = graph.TimestampsNode("Timestamps/Watermarks", self.get_type(), input=self._node,
                                    strategy=watermark_strategy)
        return DataStream(self._env, node)

    # --- windows and two-input operators (FLIP-331: see .windowed_stream) ----------------
    def window_all(self, window_assigner: Any) -> "AllWindowedStream":
        """The whole stream in windows of ``window_assigner`` (``GlobalWindows``, :mod:`.window`)."""
        from changeflow.datastream.windowed_stream import AllWindowedStream

        return AllWindowedStream(self, window_assigner)

    def count_window_all(self, size: int, slide: int = 0) -> "AllWindowedStream":
        """The whole stream in count windows: ``window_all`` of PyFlink's count assigners (Flink's Java
        ``countWindowAll``; PyFlink has no Python method), see :meth:`KeyedStream.count_window`."""
        from changeflow.datastream.window import CountSlidingWindowAssigner, CountTumblingWindowAssigner

        return self.window_all(CountSlidingWindowAssigner(size, slide) if slide else CountTumblingWindowAssigner(size))

    def co_group(self, other: "DataStream") -> "CoGroupedStreams":
        """``co_group(other).where(k1).equal_to(k2).window(assigner).apply(CoGroupFunction)`` (Flink's Java API)."""
        from changeflow.datastream.windowed_stream import CoGroupedStreams

        return CoGroupedStreams(self, other)

    def join(self, other: "DataStream") -> "JoinedStreams":
        """``join(other).where(k1).equal_to(k2).window(assigner).apply(JoinFunction)`` (Flink's Java API)."""
        from changeflow.datastream.windowed_stream import JoinedStreams

        return JoinedStreams(self, other)

    @overload
    def connect(self, ds: "BroadcastStream") -> "BroadcastConnectedStream":
        ...

    @overload
    def connect(self, ds: "DataStream") -> "ConnectedStreams":
        ...

    def connect(self, ds: "DataStream | BroadcastStream") -> "ConnectedStreams | BroadcastConnectedStream":
        """This stream and ``ds`` (of any type) for one two-input operator: ``ConnectedStreams``' ``map``,
        ``flat_map``, ``process`` (keyed after its ``key_by``); see :mod:`.connected_streams`. With a
        ``BroadcastStream`` (``broadcast(descriptor)``): a ``BroadcastConnectedStream`` (:mod:`.broadcast`)."""
        from changeflow.datastream.broadcast import BroadcastConnectedStream, BroadcastStream
        from changeflow.datastream.connected_streams import ConnectedStreams

        if isinstance(ds, BroadcastStream):
            return BroadcastConnectedStream(self, ds, ds.broadcast_state_descriptors)
        if not isinstance(ds, DataStream):
            raise TypeError(f"connect() takes a DataStream or a BroadcastStream, got {type(ds).__name__}")
        return ConnectedStreams(self, ds)

    def get_side_output(self, output_tag: Any) -> "DataStream":
        """The records this stream's ProcessFunction yielded as ``(output_tag, value)`` (see :mod:`.side_output`)."""
        from changeflow.datastream.side_output import side_output

        return side_output(self, output_tag)

    def cache(self) -> "CachedDataStream":
        """Caches this stream's records for later jobs of the environment (FLIP-205; batch mode only).

        The cache is created by the first job that computes the stream, is
        immutable, and is read by every later job instead of recomputing the
        stream's inputs; ``invalidate()`` on the result or the environment's
        ``close()`` releases it. See :mod:`changeflow.datastream.cache`.
        """
        from changeflow.datastream.cache import cache

        return cache(self)

    # --- sinks and execution ------------------------------------------------------------
    def execute_and_collect(self, job_execution_name: str | None = None, limit: int | None = None):
        """Runs the job and returns its records: a :class:`CloseableIterator`, or a list when ``limit`` is given."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        records = self._env._run_collect(self._node, job_execution_name)
        if limit is not None:
            return records[:limit]
        return CloseableIterator(records)

    def print(self, sink_identifier: str | None = None) -> "DataStreamSink":
        """Writes each record's string form to stdout when the job runs (``execute()``)."""
        from changeflow.datastream.sinks import PrintSink

        return self.sink_to(PrintSink(sink_identifier, self.get_type()))

    def sink_to(self, sink: Any) -> "DataStreamSink":
        """Adds ``sink`` (an object with ``write(records)``, e.g. :class:`~changeflow.datastream.sinks.CollectSink`)."""
        if not callable(getattr(sink, "write", None)):
            raise TypeError(f"sink_to() takes a sink with a write(records) method, got {type(sink).__name__}")
        if callable(getattr(sink, "bind_type", None)):  # a sink writing records by their type (FileSink)
            sink.bind_type(self.get_type())
        self._env._add_sink(self._node, sink)
        return DataStreamSink(sink)

    def add_sink(self, sink_func: Any) -> "DataStreamSink":
        return self.sink_to(sink_func)


class KeyedStream(DataStream):
    """A stream partitioned by key; reduce/aggregations and process run per key."""

    class AccumulateType(Enum):  # PyFlink's names of the built-in accumulations
        MIN = 1
        MAX = 2
        MIN_BY = 3
        MAX_BY = 4
        SUM = 5

    def __init__(self, origin: DataStream, key_selector: Any, key_type: Any) -> None:
        super().__init__(origin._env, origin._node)
        self._key_selector = key_selector
        self._key_type = key_type

    def _keyed_reduce(self, function: Any, name: str, typed: bool = True) -> DataStream:
        # A reduce's output has its input's type: a declared one is enforced on every output
        # (the built-in accumulations check their own field instead: typed=False).
        if typed and self.get_type().is_declared():
            function = _TypedReduceFunction(function, self.get_type(), name)
        node = graph.KeyedReduceNode(name, self.get_type(), input=self._node, key_selector=self._key_selector,
                                     function=function)
        return DataStream(self._env, node)

    def reduce(self, func: Callable | ReduceFunction) -> DataStream:
        """A rolling reduce per key: ``func(running, record)``."""
        _check(func, ReduceFunction)
        return self._keyed_reduce(func, f"Reduce({describe(func)})")

    def _accumulate(self, kind: str, position: int | str) -> DataStream:
        # Imported here: the module subclasses this package's ReduceFunction.
        from changeflow.datastream.accumulate import AccumulateReduce, check_sum_field

        # A declared non-numeric field fails here; a declared numeric one bounds the sum.
        field_type = check_sum_field(self.get_type(), position) if kind == "sum" else None
        function = AccumulateReduce(kind, position, field_type)
        return self._keyed_reduce(function, f"{kind}({position!r})", typed=False)

    def sum(self, position_to_sum: int | str = 0) -> DataStream:
        return self._accumulate("sum", position_to_sum)

    def min(self, position_to_min: int | str = 0) -> DataStream:
        return self._accumulate("min", position_to_min)

    def max(self, position_to_max: int | str = 0) -> DataStream:
        return self._accumulate("max", position_to_max)

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream:
        return self._accumulate("min_by", position_to_min_by)

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream:
        return self._accumulate("max_by", position_to_max_by)

    def process(self, func: KeyedProcessFunction, output_type: TypeInformation | None = None) -> DataStream:
        if not isinstance(func, KeyedProcessFunction):
            raise TypeError(f"KeyedStream.process() takes a KeyedProcessFunction, got {type(func).__name__}")
        name = f"KeyedProcess({describe(func)})"
        if output_type is not None:
            func = _ConvertingProcessFunction(func, output_type)
        node = graph.KeyedProcessNode(name, output_type or PickledBytesTypeInfo(),
                                      input=self._node, key_selector=self._key_selector, function=func)
        return DataStream(self._env, node)

    def window(self, window_assigner: Any) -> "WindowedStream":
        """Each key's records in windows of ``window_assigner`` (``GlobalWindows``, :mod:`.window`)."""
        from changeflow.datastream.windowed_stream import WindowedStream

        return WindowedStream(self, window_assigner)

    def count_window(self, size: int, slide: int = 0) -> "WindowedStream":
        """Each key's records in count windows (PyFlink's): tumbling (``slide`` 0), a window of ``size`` records
        after the other, firing when full; or sliding, a window of ``size`` records starting every ``slide``
        records, each firing once, when full (Java's ``countWindow(size, slide)`` fires every ``slide`` records)."""
        from changeflow.datastream.window import CountSlidingWindowAssigner, CountTumblingWindowAssigner

        return self.window(CountSlidingWindowAssigner(size, slide) if slide else CountTumblingWindowAssigner(size))

    def _rerouted(self) -> DataStream:
        raise TypeError("Cannot override partitioning for KeyedStream.")  # Flink's message

    # Stateless operators on a keyed stream lose the keying, as in PyFlink's results.
    def _origin(self) -> DataStream:
        return DataStream(self._env, self._node)

    def map(self, func, output_type=None) -> DataStream:
        return self._origin().map(func, output_type)

    def flat_map(self, func, output_type=None) -> DataStream:
        return self._origin().flat_map(func, output_type)

    def filter(self, func) -> DataStream:
        return self._origin().filter(func)

    def union(self, *streams) -> DataStream:
        return self._origin().union(*streams)

    def key_by(self, key_selector, key_type=None) -> "KeyedStream":
        return self._origin().key_by(key_selector, key_type)


class _Converting:
    """A wrapper of a user function that converts values to a declared type.

    The converter is a closure, which does not pickle: it is built on first use
    where the function runs, and left out of the pickled function.
    """

    inner: Any

    def _converter(self, type_info: TypeInformation):
        convert = self.__dict__.get("_convert")
        if convert is None:
            convert = self._convert = type_info.converter()
        return convert

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_convert", None)
        return state

    def __repr__(self) -> str:
        return describe(self.inner)


class _TypedKeySelector(_Converting, KeySelector):
    """Converts the keys a key selector returns to the declared ``key_type`` (or fails naming them)."""

    def __init__(self, inner: Any, key_type: TypeInformation) -> None:
        self.inner = inner
        self.key_type = key_type
        self._get = inner.get_key if isinstance(inner, KeySelector) else inner
        self._where = f"the key of key_by({describe(inner)})"

    def open(self, runtime_context):
        if isinstance(self.inner, KeySelector):
            self.inner.open(runtime_context)

    def close(self):
        if isinstance(self.inner, KeySelector):
            self.inner.close()

    def get_key(self, value):
        convert = self._converter(self.key_type)
        return conform(self.key_type, self._get(value), self._where, convert)



class _TypedReduceFunction(_Converting, ReduceFunction):
    """Checks a keyed reduce's outputs against the stream's declared type (its output type too)."""

    def __init__(self, inner: Any, type_info: TypeInformation, name: str) -> None:
        self.inner = inner
        self.type_info = type_info
        self._reduce = inner.reduce if isinstance(inner, ReduceFunction) else inner
        self._where = f"the output of {name}"
        accept_first = getattr(inner, "accept_first", None)
        if callable(accept_first):
            self.accept_first = accept_first  # sum's check of a key's first record

    def open(self, runtime_context):
        if isinstance(self.inner, ReduceFunction):
            self.inner.open(runtime_context)

    def close(self):
        if isinstance(self.inner, ReduceFunction):
            self.inner.close()

    def is_output_idempotent(self):
        return isinstance(self.inner, ReduceFunction) and self.inner.is_output_idempotent()

    def is_output_only_after_end_of_stream(self):
        return isinstance(self.inner, ReduceFunction) and self.inner.is_output_only_after_end_of_stream()

    def reduce(self, value1, value2):
        convert = self._converter(self.type_info)
        value = self._reduce(value1, value2)
        try:
            return convert(value)
        except ValueError:
            return conform(self.type_info, value, self._where, convert)  # raises, naming the output



class _ConvertingProcessFunction(_Converting, KeyedProcessFunction):
    """Converts a KeyedProcessFunction's outputs to its declared ``output_type``."""

    def __init__(self, inner: KeyedProcessFunction, output_type: TypeInformation) -> None:
        self.inner = inner
        self.output_type = output_type
        self._where = f"the output of KeyedProcess({describe(inner)})"

    def open(self, runtime_context):
        self.inner.open(runtime_context)

    def close(self):
        self.inner.close()

    def is_output_idempotent(self):
        return self.inner.is_output_idempotent()

    def is_output_only_after_end_of_stream(self):
        return self.inner.is_output_only_after_end_of_stream()

    def on_timer(self, timestamp, ctx):
        return self._converted(self.inner.on_timer(timestamp, ctx))

    def process_element(self, value, ctx):
        return self._converted(self.inner.process_element(value, ctx))

    def _converted(self, produced):
        if not self.output_type.is_declared():
            return list(produced or [])
        convert = self._converter(self.output_type)
        # A side output's value, yielded with its tag, is typed by the tag (the keyed kernel converts it).
        return [v if output_tag_of(v) is not None else conform(self.output_type, v, self._where, convert)
                for v in (produced or [])]
