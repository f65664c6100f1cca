"""DataStream processing-time windows on Spark, over several micro-batches.

What a processing-time window emits depends on when micro-batches run, so these tests check what holds whatever
the timing: windows aligned with their size, slide and offset, one result per key and window, each record in at
most the windows of one arrival time (its micro-batch's), and the stream's event-time watermark passed on
unchanged; in batch mode every window fires once. The exact firing rules are the kernel tests'
(``test_processing_time_window_kernels``).
"""

import sys
from collections import Counter

from pyspark import cloudpickle

from changeflow.common import Configuration, Time, WatermarkStrategy
from changeflow.datastream import KeyedProcessFunction, RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream.functions import ProcessWindowFunction
from changeflow.datastream.window import (ContinuousProcessingTimeTrigger, GlobalWindows, ProcessingTimeSessionWindows,
                                          PurgingTrigger, SlidingProcessingTimeWindows,
                                          TumblingProcessingTimeWindows)

cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROWS = [("abc"[i % 3], i) for i in range(12)]  # 3 micro-batches of 4 records


def _env(spark, mode=RuntimeExecutionMode.STREAMING):
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "2")
    conf.set_string("changeflow.source.rows-per-batch", "4")
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(mode)
    return env


class Listing(ProcessWindowFunction):
    def process(self, key, context, elements):
        w = context.window()  # a TimeWindow, or the GlobalWindow (no start and end)
        yield key, getattr(w, "start", None), getattr(w, "end", None), sorted(e[1] for e in elements)


def _windows(env, assigner, trigger=None):
    windowed = env.from_collection(ROWS).key_by(lambda r: r[0]).window(assigner)
    if trigger is not None:
        windowed = windowed.trigger(trigger)
    return list(windowed.process(Listing()).execute_and_collect())


def _check_keys(out):
    for key, _, _, values in out:
        assert {ROWS[v][0] for v in values} == {key}


def test_tumbling_windows_count_each_record_once_in_aligned_windows(spark):
    out = _windows(_env(spark), TumblingProcessingTimeWindows.of(Time.milliseconds(200), Time.milliseconds(50)))
    _check_keys(out)
    assert all(end - start == 200 and start % 200 == 50 for _, start, end, _ in out)
    assert len({(k, s) for k, s, _, _ in out}) == len(out)  # one result per key and window
    counted = Counter(v for *_, values in out for v in values)
    assert set(counted.values()) <= {1}  # each record in one window at most
    # A window fires once the clock reaches its end - 1: each micro-batch here takes far longer than 200 ms,
    # so the windows of all but the last micro-batches have fired by the end (the end-of-input micro-batch
    # fires the last one's too, unless it came within 200 ms).
    assert len(counted) >= len(ROWS) - 4


def test_sliding_windows_put_a_record_in_the_windows_of_its_arrival_time(spark):
    out = _windows(_env(spark), SlidingProcessingTimeWindows.of(Time.milliseconds(300), Time.milliseconds(100)))
    _check_keys(out)
    assert all(end - start == 300 and start % 100 == 0 for _, start, end, _ in out)
    assert len({(k, s) for k, s, _, _ in out}) == len(out)
    starts: dict[int, list[int]] = {}
    for _, start, _, values in out:
        for v in values:
            starts.setdefault(v, []).append(start)
    for of_v in starts.values():
        assert len(of_v) <= 3  # size / slide windows at most, all holding one arrival time
        assert max(of_v) - min(of_v) < 300
    assert len(starts) >= len(ROWS) - 4


def test_sessions_do_not_overlap_and_hold_each_record_once(spark):
    out = _windows(_env(spark), ProcessingTimeSessionWindows.with_gap(Time.milliseconds(100)))
    _check_keys(out)
    counted = Counter(v for *_, values in out for v in values)
    assert set(counted.values()) <= {1} and len(counted) >= len(ROWS) - 4
    by_key: dict[str, list[tuple[int, int]]] = {}
    for key, start, end, _ in out:
        assert end - start >= 100
        by_key.setdefault(key, []).append((start, end))
    for sessions in by_key.values():
        sessions.sort()
        assert all(a[1] < b[0] for a, b in zip(sessions, sessions[1:], strict=False))  # merged sessions do not touch


def test_purging_continuous_trigger_on_global_windows_emits_each_record_once(spark):
    out = _windows(_env(spark), GlobalWindows.create(),
                   PurgingTrigger.of(ContinuousProcessingTimeTrigger.of(Time.milliseconds(100))))
    _check_keys(out)
    counted = Counter(v for *_, values in out for v in values)
    assert set(counted.values()) <= {1} and len(counted) >= len(ROWS) - 4
    assert all(values for *_, values in out)  # a window fired empty (purged) emits nothing


class Watermarks(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield value, ctx.timestamp(), ctx.timer_service().current_watermark()


def test_the_stream_watermark_passes_a_processing_time_window_unchanged(spark):
    env = _env(spark)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda value, _: value[1])
    summed = env.from_collection(ROWS).assign_timestamps_and_watermarks(strategy).key_by(lambda r: r[0]) \
        .window(TumblingProcessingTimeWindows.of(Time.milliseconds(200))).reduce(lambda a, b: (a[0], a[1] + b[1]))
    out = list(summed.key_by(lambda r: r[0]).process(Watermarks()).execute_and_collect())
    assert out
    for _, timestamp, watermark in out:
        # A result carries its window's end - 1, a processing time; the watermark after the window is still
        # the source's event time (records stamped 0..11), never the clock.
        assert timestamp > 10**12 and (watermark < len(ROWS) or watermark == -(2**63))


def test_batch_mode_fires_every_window_once_after_the_input(spark):
    # Flink's batch execution fires a key's processing-time timers after its input, whatever their time.
    out = _windows(_env(spark, RuntimeExecutionMode.BATCH), TumblingProcessingTimeWindows.of(Time.milliseconds(200)))
    _check_keys(out)
    assert all(end - start == 200 and start % 200 == 0 for _, start, end, _ in out)
    assert sorted(v for *_, values in out for v in values) == list(range(len(ROWS)))
