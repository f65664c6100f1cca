"""Two-input operators on Spark beyond the conformance goldens (tests/conformance/test_datastream_conformance.py):
batch mode gives the streaming result where Flink 2.3's batch execution differs, and keyed process functions'
event-time timers fire at the end of a streaming input without watermarks."""

from __future__ import annotations

import json
import os
from collections import Counter

from changeflow.common import Configuration, Types
from changeflow.datastream import (CollectSink, KeyedProcessFunction, RuntimeExecutionMode,
                                   StreamExecutionEnvironment)
from conformance import datastream_connect_cases
from conformance.record_flink_datastream import GOLDEN_DIR, encode
from tests.conformance.test_datastream_conformance import _api


def _env(spark, mode):
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "2")
    conf.set_string("changeflow.source.rows-per-batch", "2")  # several micro-batches per source
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(mode)
    return env


def test_batch_enrichment_gives_the_streaming_result(spark):
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(datastream_connect_cases)
    env = _env(spark, RuntimeExecutionMode.BATCH)
    sink = CollectSink()
    datastream_connect_cases.connect_enrichment(env, _api()).sink_to(sink)
    env.execute("enrichment in batch")
    with open(os.path.join(GOLDEN_DIR, "connect_enrichment_streaming.json")) as f:
        streaming = json.load(f)["records"]
    # The unmatched purchase ('cid') included: its event-time timer fires after its key's records.
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert Counter(key(encode(r)) for r in sink.records) == Counter(map(key, streaming))


def test_event_time_timers_fire_at_the_end_of_a_streaming_input_without_watermarks(spark):
    class AtEnd(KeyedProcessFunction):  # defined here: Spark's workers get it by value
        def process_element(self, value, ctx):
            ctx.timer_service().register_event_time_timer(100)
            return []

        def on_timer(self, timestamp, ctx):
            yield ctx.get_current_key(), timestamp

    env = _env(spark, RuntimeExecutionMode.STREAMING)
    t = Types.TUPLE([Types.STRING(), Types.INT()])
    stream = env.from_collection([("a", 1), ("b", 2), ("a", 3)], type_info=t)
    # The final watermark (Long.MAX_VALUE) of the bounded input fires every timer, as in Flink.
    assert sorted(stream.key_by(lambda r: r[0]).process(AtEnd()).execute_and_collect()) == [("a", 100), ("b", 100)]
