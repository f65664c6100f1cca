"""The DataStream API end to end on Spark (a few small jobs: each streaming query costs seconds)."""

import sys

import pytest
from pyspark import cloudpickle

from changeflow.common import Configuration, Row, Types
from changeflow.datastream import (KeyedProcessFunction, RuntimeExecutionMode, StreamExecutionEnvironment,
                                   ValueStateDescriptor)

# Spark's workers cannot import this test module: ship its functions and classes by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture
def env_of(spark):
    def make(mode):
        conf = Configuration()
        conf.set_string("changeflow.state.buckets", "2")
        conf.set_string("changeflow.source.rows-per-batch", "2")  # several micro-batches
        env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
        env.set_runtime_mode(mode)
        return env
    return make


ROWS = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5), ("b", 6)]
PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


class RunningCount(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        if n % 2 == 0:
            yield ctx.get_current_key(), n


def test_streaming_job_with_two_sinks_in_one_query(env_of, capsys):
    env = env_of(RuntimeExecutionMode.STREAMING)
    ds = env.from_collection(ROWS, type_info=PAIR)
    words = ds.flat_map(lambda r: [r[0]] * (r[1] % 3), output_type=Types.STRING())
    words.print("w")
    other = env.from_collection([("z", 100)], type_info=PAIR)
    sums = ds.filter(lambda r: r[0] != "c").union(other).key_by(lambda r: r[0]).sum(1)
    counted = ds.key_by(lambda r: r[0]).process(RunningCount())
    env.execute("two sinks")
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["w> a", "w> b", "w> b", "w> c", "w> a", "w> a"]
    # execute_and_collect runs its own job: the running sum per input record, in input order per key.
    out = list(sums.execute_and_collect())
    assert [r for r in out if r[0] == "a"] == [("a", 1), ("a", 4), ("a", 9)]
    assert sorted(out) == sorted([("a", 1), ("b", 2), ("a", 4), ("a", 9), ("b", 8), ("z", 100)])
    assert counted.execute_and_collect(limit=5) == [("a", 2), ("b", 2)]


def test_batch_mode_emits_one_final_value_per_key(env_of):
    env = env_of(RuntimeExecutionMode.BATCH)
    ds = env.from_collection(ROWS, type_info=Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.INT()]))
    assert sorted(ds.key_by(lambda r: r.k).max_by("v").execute_and_collect()) == [
        Row(k="a", v=5), Row(k="b", v=6), Row(k="c", v=4)]
    assert sorted(ds.key_by(lambda r: r.k).process(RunningCount()).execute_and_collect()) == [("a", 2), ("b", 2)]


def test_text_file_and_dataframe_sources(env_of, spark, tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("to be\nor not\nto be\n")
    env = env_of(RuntimeExecutionMode.BATCH)
    counts = (env.read_text_file(str(path)).flat_map(lambda line: line.split())
              .map(lambda w: (w, 1)).key_by(lambda p: p[0]).sum(1))
    assert sorted(counts.execute_and_collect()) == [("be", 2), ("not", 1), ("or", 1), ("to", 2)]
    df = spark.createDataFrame([("x", 1), ("y", 2)], "name string, n int")
    assert list(env.from_source(df).map(lambda r: (r.name, r.n * 2)).execute_and_collect()) == [("x", 2), ("y", 4)]


def test_a_failing_user_function_fails_the_job_naming_function_and_record(env_of):
    env = env_of(RuntimeExecutionMode.BATCH)
    ds = env.from_collection([1, 2, 0, 4])

    def invert(x):
        return 1 / x

    with pytest.raises(Exception, match=r"user function Map\(.*invert\) failed on record 0: ZeroDivisionError"):
        ds.map(invert).execute_and_collect(limit=10)


class Reminder(KeyedProcessFunction):
    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

    def process_element(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + value[2])
        yield "elem", value[0], value[1]

    def on_timer(self, timestamp, ctx):
        yield "timer", ctx.get_current_key(), self.total.value()


def test_processing_time_timer_fires_in_a_later_micro_batch(spark):
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "2")
    conf.set_string("changeflow.source.rows-per-batch", "1")  # one record per micro-batch
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    ds = env.from_collection([("a", 1, 0), ("b", 2, 3_600_000), ("a", 3, 3_600_000)])
    # a's timer is due at once: it fires in the next micro-batch (after b's record, which precedes it there);
    # the timers an hour ahead are still pending when the bounded input ends and never fire, as in Flink.
    assert list(ds.key_by(lambda r: r[0]).process(Reminder()).execute_and_collect()) == [
        ("elem", "a", 1), ("elem", "b", 2), ("timer", "a", 1), ("elem", "a", 3)]


def test_unbounded_dataframe_source_runs_in_streaming_mode_under_automatic(spark, tmp_path):
    spark.createDataFrame([("a", 1), ("b", 2), ("a", 3)], "k string, n int").write.parquet(str(tmp_path / "in"))
    stream = spark.readStream.schema("k string, n int").parquet(str(tmp_path / "in"))
    env = StreamExecutionEnvironment.get_execution_environment(spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)  # an unbounded source: streaming
    out = list(env.from_source(stream).key_by(lambda r: r.k).sum("n").execute_and_collect())
    # One running value per input row; rows of one micro-batch of a Spark stream have no defined order,
    # so only the last value per key is fixed.
    assert len(out) == 3 and {r.k: r.n for r in out if r.n in (2, 4)} == {"a": 4, "b": 2}
    with pytest.raises(ValueError, match="unbounded"):
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
        env.from_source(stream).execute_and_collect()


class StoreSecondField(KeyedProcessFunction):
    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

    def process_element(self, value, ctx):
        self.total.update(value[1])
        yield value


def test_declared_types_fail_the_job_naming_what_does_not_fit(env_of):
    # Issue "Nothing lost, nothing wrong": a string kept in a LONG state, strings summed.
    env = env_of(RuntimeExecutionMode.BATCH)
    rows = env.from_collection([("a", 1), ("a", "x")])
    with pytest.raises(Exception, match=r"state 'total' of KeyedProcess\(StoreSecondField\) is declared "
                                        r"Types.LONG\(\), but the value 'x' \(str\) does not fit it"):
        rows.key_by(lambda r: r[0]).process(StoreSecondField()).execute_and_collect(limit=10)
    words = env.from_collection([("a", "x"), ("a", "y")])
    with pytest.raises(Exception, match=r"sum\(1\) adds numbers only, but field 1 is 'x' \(str\)"):
        words.key_by(lambda r: r[0]).sum(1).execute_and_collect(limit=10)
