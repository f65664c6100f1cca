"""PyFlink's DataStream API on Spark: a Flink DataStream program ports by changing imports.

>>> from changeflow.common import Types
>>> from changeflow.datastream import StreamExecutionEnvironment, RuntimeExecutionMode
>>> env = StreamExecutionEnvironment.get_execution_environment()
>>> env.set_runtime_mode(RuntimeExecutionMode.BATCH)  # doctest: +ELLIPSIS
<...StreamExecutionEnvironment object at ...>
>>> ds = env.from_collection([("a", 1), ("b", 2), ("a", 3)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
>>> ds.key_by(lambda r: r[0]).sum(1).get_type()
Types.TUPLE([Types.STRING(), Types.INT()])

How it runs on Spark: :mod:`changeflow.runtime.spark.stream_graph`.
"""

from changeflow.datastream.cache import CachedDataStream
from changeflow.datastream.broadcast import BroadcastConnectedStream, BroadcastStream  # after .functions (.cache)
from changeflow.datastream.co_functions import (BroadcastProcessFunction, CoFlatMapFunction, CoMapFunction,
                                                CoProcessFunction, KeyedBroadcastProcessFunction,
                                                KeyedCoProcessFunction)
from changeflow.datastream.connected_streams import ConnectedStreams
from changeflow.datastream.checkpoint_config import CheckpointConfig, CheckpointingMode, ExternalizedCheckpointRetention
from changeflow.datastream.data_stream import CloseableIterator, DataStream, DataStreamSink, KeyedStream
from changeflow.datastream.environment import JobExecutionResult, RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream.functions import (AggregateFunction, AllWindowFunction, CoGroupFunction, FilterFunction,
                                             FlatJoinFunction, FlatMapFunction, JoinFunction, KeyedProcessFunction,
                                             KeySelector, MapFunction, ProcessAllWindowFunction, ProcessFunction,
                                             ProcessWindowFunction, ReduceFunction, RuntimeContext, TimeDomain,
                                             TimerService, WindowFunction)
from changeflow.datastream.operator_attributes import OperatorAttributes, OperatorAttributesBuilder
from changeflow.datastream.pyflink_names import refuse_module_name
from changeflow.datastream.side_output import OutputTag
from changeflow.datastream.sinks import CollectSink, PrintSink
from changeflow.datastream.state import (AggregatingState, AggregatingStateDescriptor, ListState, ListStateDescriptor,
                                         MapState, MapStateDescriptor, ReducingState, ReducingStateDescriptor,
                                         StateDescriptor, ValueState, ValueStateDescriptor)
from changeflow.datastream.functions import Partitioner
from changeflow.datastream.window import CountWindow, GlobalWindow, TimeWindow, Window, WindowAssigner
from changeflow.datastream.window_triggers import Trigger
from changeflow.datastream.windowed_stream import AllWindowedStream, CoGroupedStreams, JoinedStreams, WindowedStream

__all__ = [
    "AggregateFunction", "AggregatingState", "AggregatingStateDescriptor", "AllWindowFunction", "AllWindowedStream",
    "BroadcastConnectedStream", "BroadcastProcessFunction", "BroadcastStream", "KeyedBroadcastProcessFunction",
    "CachedDataStream", "CheckpointConfig", "CheckpointingMode", "CloseableIterator", "CoFlatMapFunction",
    "CoGroupFunction", "CoMapFunction", "CoProcessFunction", "ConnectedStreams", "KeyedCoProcessFunction",
    "CoGroupedStreams", "CollectSink", "CountWindow", "DataStream", "DataStreamSink",
    "ExternalizedCheckpointRetention", "FilterFunction", "GlobalWindow", "Partitioner", "TimerService", "Trigger",
    "Window", "WindowAssigner", "FlatJoinFunction", "FlatMapFunction", "JobExecutionResult", "JoinFunction",
    "JoinedStreams", "KeySelector", "KeyedProcessFunction", "KeyedStream", "ListState", "ListStateDescriptor",
    "MapFunction", "MapState", "MapStateDescriptor", "OperatorAttributes", "OperatorAttributesBuilder", "OutputTag",
    "PrintSink", "ProcessAllWindowFunction", "ProcessFunction", "ProcessWindowFunction", "ReduceFunction",
    "ReducingState", "ReducingStateDescriptor", "RuntimeContext", "RuntimeExecutionMode", "StateDescriptor",
    "StreamExecutionEnvironment", "TimeDomain", "TimeWindow", "ValueState", "ValueStateDescriptor", "WindowFunction",
    "WindowedStream",
]


def __getattr__(name: str):
    refuse_module_name(name)  # a PyFlink name changeflow lacks on purpose fails naming itself
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
