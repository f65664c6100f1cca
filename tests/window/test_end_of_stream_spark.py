"""End-of-input operators (FLIP-331) on Spark: one streaming job with many sinks (each query costs seconds)."""

import random
import sys
from types import SimpleNamespace

import pytest
from pyspark import cloudpickle

from changeflow.common import Configuration, Types
from changeflow.datastream import (AggregateFunction, CoGroupFunction, CollectSink, KeyedProcessFunction,
                                   ProcessAllWindowFunction, ProcessWindowFunction, RuntimeExecutionMode,
                                   StreamExecutionEnvironment)
from changeflow.datastream.window import GlobalWindows
from conformance.datastream_cases import average_function

# Spark's workers cannot import this test module: ship its functions and classes by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

END = GlobalWindows.create_with_end_of_stream_trigger()
PAIR = Types.TUPLE([Types.STRING(), Types.INT()])
ROWS = [("a", 5), ("b", 2), ("a", 3), ("c", 7), ("b", 4), ("a", 1)]


@pytest.fixture
def env(spark):
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "2")
    conf.set_string("changeflow.source.rows-per-batch", "1000")  # one micro-batch per source: fewer, cheaper batches
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    return env.set_runtime_mode(RuntimeExecutionMode.STREAMING)


Average = type(average_function(SimpleNamespace(AggregateFunction=AggregateFunction)))


class Listing(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield key, [e[1] for e in elements]


class Everything(ProcessAllWindowFunction):
    def process(self, context, elements):
        yield [e for e in elements]


class Sides(CoGroupFunction):
    def co_group(self, first, second):
        yield sorted({r[0] for r in first} | {r[0] for r in second})[0], [r[1] for r in first], [r[1] for r in second]


class LastValue(KeyedProcessFunction):
    """Declares output only after end of input: keeps the key's last value, emits it from a timer."""

    def process_element(self, value, ctx):
        ctx.timer_service().register_processing_time_timer(1)
        self.last = value

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key(), "timer"

    def is_output_only_after_end_of_stream(self):
        return True


def _reference(rows):
    sums, lists = {}, {}
    for k, v in rows:
        sums[k] = sums.get(k, 0) + v
        lists.setdefault(k, []).append(v)
    return sums, lists


def test_end_of_stream_operators_in_one_streaming_job(env):
    # Keyed windows, window_all, never-firing windows and downstream chaining are also covered by the
    # PyFlink goldens (tests/conformance): here what PyFlink cannot run, and random input.
    ds = env.from_collection(ROWS, type_info=PAIR)
    other = env.from_collection([("a", 10), ("d", 40), ("a", 20)], type_info=PAIR)
    keyed = ds.key_by(lambda r: r[0])
    by_name = lambda r: r[0]  # noqa: E731
    rng = random.Random(331)
    rows = [(rng.choice("pqrstu"), rng.randint(-9, 9)) for _ in range(rng.randint(20, 40))]
    randoms = env.from_collection(rows, type_info=PAIR)
    outputs = {
        "co_group": ds.co_group(other).where(by_name).equal_to(by_name).window(END).apply(Sides()),
        "join": ds.join(other).where(by_name).equal_to(by_name).window(END).apply(lambda a, b: (a[1], b[1])),
        # Upstream with streaming state: the running sums run to completion first, then the window sees them
        # all; downstream of the window the streaming job goes on (a keyed running count).
        "upstream": keyed.sum(1).window_all(END).process(Everything())
                         .map(lambda r: ("n", len(r)), output_type=PAIR).key_by(by_name).sum(1),
        "declared": keyed.process(LastValue()),
        # Property: random input, the end-of-stream results equal a plain-Python reference.
        "random_sum": randoms.key_by(by_name).window(END).aggregate(Average(), output_type=Types.DOUBLE()),
        "random_lists": randoms.co_group(randoms).where(by_name).equal_to(by_name).window(END).apply(
            lambda first, second: [(first[0][0], [r[1] for r in first], len(second))]),
    }
    sinks = {name: CollectSink() for name in outputs}
    for name, stream in outputs.items():
        stream.sink_to(sinks[name])
    env.execute("end of stream")
    got = {name: sink.records for name, sink in sinks.items()}

    assert sorted(got["co_group"]) == [("a", [5, 3, 1], [10, 20]), ("b", [2, 4], []), ("c", [7], []), ("d", [], [40])]
    assert got["join"] == [(5, 10), (5, 20), (3, 10), (3, 20), (1, 10), (1, 20)]
    assert got["upstream"] == [("n", 6)]  # one window over the six running sums
    assert sorted(got["declared"]) == [("a", "timer"), ("b", "timer"), ("c", "timer")]
    sums, lists = _reference(rows)
    assert sorted(got["random_sum"]) == sorted(sums[k] / len(v) for k, v in lists.items())
    assert sorted(got["random_lists"]) == sorted((k, v, len(v)) for k, v in lists.items())


def test_unbounded_input_into_an_end_of_stream_operator_fails_at_planning(env, spark):
    clicks = env.from_source(spark.readStream.format("rate").load(), source_name="clicks")
    totals = clicks.key_by(lambda r: r.value % 2).window(END).reduce(lambda a, b: a).name("totals")
    with pytest.raises(ValueError, match=r"operator 'totals' outputs only after end of input .* unbounded source "
                                         r"'clicks', which never ends"):
        totals.execute_and_collect()


def test_batch_and_automatic_modes_run_the_same_windows(env):
    for mode in (RuntimeExecutionMode.BATCH, RuntimeExecutionMode.AUTOMATIC):
        env.set_runtime_mode(mode)
        keyed = env.from_collection(ROWS, type_info=PAIR).key_by(lambda r: r[0])
        assert sorted(keyed.window(END).reduce(lambda a, b: (a[0], a[1] + b[1])).execute_and_collect()) == [
            ("a", 9), ("b", 6), ("c", 7)]
