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


def _env(spark, mode, **settings):
    conf = Configuration()
    conf.set_string("changeflow.source.rows-per-batch", "2")  # several micro-batches per source
    for key, value in {"changeflow.state.buckets": "2", **settings}.items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(mode)
    return env


def batch_result_is_streaming_golden(spark, module, case):
    """Whether conformance case ``case`` of ``module`` run in batch mode gives its recorded streaming result."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(module)
    env = _env(spark, RuntimeExecutionMode.BATCH)
    sink = CollectSink()
    getattr(module, case)(env, _api()).sink_to(sink)
    env.execute(f"{case} in batch")
    with open(os.path.join(GOLDEN_DIR, f"{case}_streaming.json")) as f:
        streaming = json.load(f)["records"]
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    return Counter(key(encode(r)) for r in sink.records) == Counter(map(key, streaming))


def test_batch_enrichment_gives_the_streaming_result(spark):
    # The unmatched purchase ('cid') included: its event-time timer fires after its key's records.
    assert batch_result_is_streaming_golden(spark, datastream_connect_cases, "connect_enrichment")


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
