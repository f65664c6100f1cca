"""DataStream event time end to end on Spark: watermarks per micro-batch, windows, late data, timers."""

import sys

from pyspark import cloudpickle

from changeflow.common import Configuration, Duration, Time, WatermarkStrategy
from changeflow.common.watermark_strategy import TimestampAssigner
from changeflow.datastream import KeyedProcessFunction, RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream.side_output import OutputTag
from changeflow.datastream.window import TumblingEventTimeWindows

cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Second(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def _env(spark, mode, rows_per_batch):
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "2")
    conf.set_string("changeflow.source.rows-per-batch", str(rows_per_batch))
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(mode)
    return env


# (key, time ms, value), two per micro-batch: the record at 3 arrives after the watermark 15 - 0 - 1 = 14
# of the micro-batch before it closed [0, 10).
ROWS = [("a", 1, 1), ("b", 4, 10), ("a", 12, 2), ("b", 15, 20), ("a", 3, 100), ("a", 25, 3)]


def _windowed(env, late):
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Second())
    windowed = env.from_collection(ROWS).assign_timestamps_and_watermarks(strategy) \
        .key_by(lambda r: r[0]).window(TumblingEventTimeWindows.of(Time.milliseconds(10))) \
        .side_output_late_data(late)
    return windowed.reduce(lambda a, b: (a[0], max(a[1], b[1]), a[2] + b[2]))


def test_tumbling_windows_with_late_data_streaming(spark):
    late = OutputTag("late")
    env = _env(spark, RuntimeExecutionMode.STREAMING, 2)
    sums = _windowed(env, late)
    assert sorted(sums.execute_and_collect()) == [("a", 1, 1), ("a", 12, 2), ("a", 25, 3), ("b", 4, 10),
                                                  ("b", 15, 20)]
    assert list(sums.get_side_output(late).execute_and_collect()) == [("a", 3, 100)]


def test_batch_mode_has_no_late_records(spark):
    sums = _windowed(_env(spark, RuntimeExecutionMode.BATCH, 2), OutputTag("late"))
    assert sorted(sums.execute_and_collect()) == [("a", 3, 101), ("a", 12, 2), ("a", 25, 3), ("b", 4, 10),
                                                  ("b", 15, 20)]


class Timeout(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 5)

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key(), timestamp, ctx.time_domain(), ctx.timer_service().current_watermark()


def test_event_time_timers_fire_as_the_watermark_passes(spark):
    env = _env(spark, RuntimeExecutionMode.STREAMING, 2)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(2)).with_timestamp_assigner(
        lambda value, _: value[1])
    out = list(env.from_collection(ROWS).assign_timestamps_and_watermarks(strategy)
               .key_by(lambda r: r[0]).process(Timeout()).execute_and_collect())
    # Timers 6, 9, 17, 20, 8, 30; the watermark after each pair of records: 1, 12, 22, then the end (MAX).
    # Timer 8 is registered behind the watermark (12): it fires at the next one, as in Flink.
    assert out == [("a", 6, 0, 12), ("b", 9, 0, 12), ("a", 8, 0, 22), ("a", 17, 0, 22), ("b", 20, 0, 22),
                   ("a", 30, 0, 2**63 - 1)]
