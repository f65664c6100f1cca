"""changeflow's DataStream API against PyFlink 2.3's recorded output (conformance/goldens/datastream).

All cases of one runtime mode run as one job, one sink per case, so the whole
streaming suite is a single Structured Streaming query.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from types import SimpleNamespace

import pytest

from conformance import (datastream_broadcast_cases, datastream_cases, datastream_connect_cases,
                         datastream_event_time_cases)
from conformance.datastream_cases import CASES
from conformance.record_flink_datastream import GOLDEN_DIR, encode

# One test process runs the whole module (pytest-xdist's --dist loadgroup): the module's fixture, one
# job per runtime mode for all cases, runs once.
pytestmark = pytest.mark.xdist_group("datastream_conformance")


def _api():
    from changeflow.common import Types
    from changeflow.datastream import (AggregateFunction, AllWindowFunction, BroadcastProcessFunction,
                                       CoFlatMapFunction, CoMapFunction, CoProcessFunction, FlatMapFunction,
                                       KeyedBroadcastProcessFunction, KeyedCoProcessFunction,
                                       KeyedProcessFunction, ListStateDescriptor, MapFunction, MapStateDescriptor,
                                       OutputTag,
                                       ProcessAllWindowFunction, ProcessFunction, ProcessWindowFunction,
                                       ReduceFunction, ValueStateDescriptor, WindowFunction)
    from changeflow.common import Duration, Time, WatermarkStrategy
    from changeflow.common.watermark_strategy import TimestampAssigner
    from changeflow.datastream.functions import TimeDomain
    from changeflow.datastream.window import (ContinuousEventTimeTrigger, CountTrigger, EventTimeSessionWindows,
                                              GlobalWindows, PurgingTrigger, SlidingEventTimeWindows,
                                              TumblingEventTimeWindows)

    end_of_stream = GlobalWindows.create_with_end_of_stream_trigger()
    return SimpleNamespace(Types=Types, KeyedProcessFunction=KeyedProcessFunction, MapFunction=MapFunction,
                           FlatMapFunction=FlatMapFunction, ReduceFunction=ReduceFunction,
                           ValueStateDescriptor=ValueStateDescriptor, ProcessFunction=ProcessFunction,
                           ListStateDescriptor=ListStateDescriptor, CoMapFunction=CoMapFunction,
                           CoFlatMapFunction=CoFlatMapFunction, CoProcessFunction=CoProcessFunction,
                           KeyedCoProcessFunction=KeyedCoProcessFunction,
                           BroadcastProcessFunction=BroadcastProcessFunction,
                           KeyedBroadcastProcessFunction=KeyedBroadcastProcessFunction,
                           MapStateDescriptor=MapStateDescriptor,
                           OutputTag=OutputTag, GlobalWindows=GlobalWindows,
                           AggregateFunction=AggregateFunction, WindowFunction=WindowFunction,
                           AllWindowFunction=AllWindowFunction, ProcessWindowFunction=ProcessWindowFunction,
                           ProcessAllWindowFunction=ProcessAllWindowFunction,
                           Duration=Duration, Time=Time, TimestampAssigner=TimestampAssigner,
                           WatermarkStrategy=WatermarkStrategy, TimeDomain=TimeDomain,
                           TumblingEventTimeWindows=TumblingEventTimeWindows,
                           SlidingEventTimeWindows=SlidingEventTimeWindows,
                           EventTimeSessionWindows=EventTimeSessionWindows, CountTrigger=CountTrigger,
                           PurgingTrigger=PurgingTrigger, ContinuousEventTimeTrigger=ContinuousEventTimeTrigger,
                           count_window_all=lambda ds, size: ds.count_window_all(size),
                           end_of_stream=lambda keyed: keyed.window(end_of_stream),
                           end_of_stream_all=lambda ds: ds.window_all(end_of_stream))


def _golden(name):
    with open(os.path.join(GOLDEN_DIR, f"{name}.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def results(spark):
    from pyspark import cloudpickle

    from changeflow.common import Configuration
    from changeflow.datastream import CollectSink, RuntimeExecutionMode, StreamExecutionEnvironment

    # Spark's workers cannot import the cases module: ship its functions by value.
    cloudpickle.register_pickle_by_value(datastream_cases)
    cloudpickle.register_pickle_by_value(datastream_event_time_cases)
    cloudpickle.register_pickle_by_value(datastream_connect_cases)
    cloudpickle.register_pickle_by_value(datastream_broadcast_cases)
    out = {}
    for mode in ("streaming", "batch"):
        conf = Configuration()
        conf.set_string("changeflow.state.buckets", "2")
        conf.set_string("changeflow.source.rows-per-batch", "5")  # several micro-batches per source
        env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
        env.set_runtime_mode(RuntimeExecutionMode.STREAMING if mode == "streaming" else RuntimeExecutionMode.BATCH)
        sinks = {}
        for name, c in CASES.items():
            if c.mode == mode:
                sinks[name] = CollectSink()
                c.program(env, _api()).sink_to(sinks[name])
        env.execute(f"conformance {mode}")
        out.update({name: [encode(r) for r in sink.records] for name, sink in sinks.items()})
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_flink(name, results):
    golden = _golden(name)
    got = results[name]
    expected = golden["records"]
    if golden["compare"] == "exact":
        assert got == expected
    elif golden["compare"] == "multiset":
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
        assert Counter(map(key, got)) == Counter(map(key, expected))
    else:
        assert golden["compare"] == "last_per_key"
        assert len(got) == len(expected) and _last_per_key(got) == _last_per_key(expected)


def _last_per_key(records):
    """The last record of each key (a tuple's first field)."""
    return {r["tuple"][0]: r for r in records}
