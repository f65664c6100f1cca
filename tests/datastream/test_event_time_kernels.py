"""Event-time kernels of the DataStream API, driven by the harness: windows, late records, timers, restarts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common.time import Duration
from changeflow.common.watermark_strategy import WatermarkStrategy
from changeflow.datastream.functions import AggregateFunction, KeyedProcessFunction, ProcessWindowFunction
from changeflow.datastream.window import EventTimeSessionWindows, SessionWindowTimeGapExtractor, TimeWindow
from changeflow.kernels.contract import MAX_WATERMARK
from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.keyed.records import UserFunctionError
from changeflow.kernels.window.evaluate import WindowSpec
from changeflow.kernels.window.event_time import EventTimeWindow, EventWindows
from tests.datastream.event_time_helpers import RecordHost


def _sum(a, b):
    return (a[0], a[1] + b[1])


class Describe(ProcessWindowFunction):
    def process(self, key, context, elements):
        w = context.window()
        yield key, w.start, w.end, sorted(e[1] for e in elements), context.current_watermark()


class Average(AggregateFunction):
    def create_accumulator(self):
        return [0, 0]

    def add(self, value, accumulator):
        return [accumulator[0] + value[1], accumulator[1] + 1]

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return [a[0] + b[0], a[1] + b[1]]


def _window(kind, windows, **kw):
    from changeflow.datastream.functions import RuntimeContext

    function = {"reduce": _sum, "process": Describe(), "aggregate": Average()}[kind]
    return EventTimeWindow(WindowSpec(kind, function), windows, "W", make_window=TimeWindow,
                           runtime_context=RuntimeContext, **kw)


TUMBLE_10 = EventWindows("tumbling", 10)


def test_tumbling_reduce_fires_when_the_watermark_passes_the_end():
    host = RecordHost(_window("reduce", TUMBLE_10))
    assert host.process([(("a", 1), 3), (("a", 2), 12), (("a", 4), 8), (("b", 1), 5)]) == []
    assert host.watermark(8) == []           # window [0, 10) ends at max_timestamp 9
    assert host.watermark(9) == [(("a", 5), 9), (("b", 1), 9)]
    assert host.end_of_input() == [(("a", 2), 19)]


def test_out_of_order_and_late_records_dropped():
    host = RecordHost(_window("reduce", TUMBLE_10))
    host.process([(("a", 1), 15), (("a", 1), 2)])
    assert host.watermark(12) == [(("a", 1), 9)]
    # 4 is late (its window [0, 10) closed at watermark 9), 11 is out of order but in time.
    assert host.process([(("a", 100), 4), (("a", 10), 11)]) == []
    assert host.end_of_input() == [(("a", 11), 19)]


def test_late_records_to_the_side_output():
    host = RecordHost(_window("reduce", TUMBLE_10, late_tag="late"))
    host.process([(("a", 1), 1)])
    host.watermark(20)
    assert host.process([(("a", 7), 3)]) == [("LATE", ("a", 7), 3)]


def test_allowed_lateness_fires_again_then_clears():
    host = RecordHost(_window("reduce", TUMBLE_10, lateness=5, late_tag="late"))
    host.process([(("a", 1), 1)])
    assert host.watermark(10) == [(("a", 1), 9)]
    # Within the lateness (9 + 5 > 10): added, the window fires again with everything.
    assert host.process([(("a", 2), 4)]) == [(("a", 3), 9)]
    assert host.watermark(14) == []          # state cleared at 9 + 5
    assert host.process([(("a", 4), 5)]) == [("LATE", ("a", 4), 5)]
    assert host.end_of_input() == []


def test_sliding_process_window_sees_window_and_watermark():
    host = RecordHost(_window("process", EventWindows("sliding", 10, slide=5)))
    host.process([(("a", 1), 7), (("a", 2), 12)])
    assert host.watermark(9) == [(("a", 0, 10, [1], 9), 9)]
    assert host.watermark(30) == [(("a", 5, 15, [1, 2], 30), 14), (("a", 10, 20, [2], 30), 19)]


def test_sessions_merge_and_aggregate():
    host = RecordHost(_window("aggregate", EventWindows("session", gap=5)))
    host.process([(("a", 2), 1), (("a", 4), 10), (("a", 6), 4)])  # 1..6 and 4..9 touch 10..15: one session
    host.process([(("b", 1), 30)])
    assert host.end_of_input() == [(4.0, 8), (4.0, 14), (1.0, 34)]


class _GapOfValue(SessionWindowTimeGapExtractor):
    def extract(self, element):
        return element[1]


def test_dynamic_session_gaps_come_from_each_record():
    # PyFlink's session_with_dynamic_gap_window.py: gap = the value; 1..9 bridge into one session, 15's
    # [15, 30) touches [9, 18) and joins it (Flink prints (hi,1,30,7)).
    assigner = EventTimeSessionWindows.with_dynamic_gap(_GapOfValue())
    host = RecordHost(_window("process", EventWindows(**assigner.spec())))
    host.process([(("hi", v), v) for v in (1, 2, 3, 4, 8, 9, 15)])
    assert host.end_of_input() == [(("hi", 1, 30, [1, 2, 3, 4, 8, 9, 15], MAX_WATERMARK), 29)]


def test_a_dynamic_gap_that_is_not_positive_fails_naming_the_record():
    assigner = EventTimeSessionWindows.with_dynamic_gap(_GapOfValue())
    host = RecordHost(_window("reduce", EventWindows(**assigner.spec())))
    with pytest.raises(UserFunctionError, match="0 < gap, got 0 from _GapOfValue.extract"):
        host.process([(("a", 0), 5)])


def test_record_without_timestamp_is_refused_as_flink_does():
    host = RecordHost(_window("reduce", TUMBLE_10))
    with pytest.raises(UserFunctionError, match="Long.MIN_VALUE timestamp"):
        host.process([(("a", 1), None)])


class Timeouts(KeyedProcessFunction):
    """Emits a key's count 10 ms after its last record (event time), as Flink's timeout example."""

    def open(self, ctx):
        from changeflow.datastream.state import ValueStateDescriptor

        self.state = ctx.get_state(ValueStateDescriptor("s"))

    def process_element(self, value, ctx):
        count, _ = self.state.value() or (0, None)
        timer = ctx.timestamp() + 10
        self.state.update((count + 1, timer))
        ctx.timer_service().register_event_time_timer(timer)
        yield "seen", value[1], ctx.timestamp(), ctx.timer_service().current_watermark()

    def on_timer(self, timestamp, ctx):
        count, last = self.state.value()
        if timestamp == last:
            yield "timeout", ctx.get_current_key(), count, ctx.time_domain(), ctx.timestamp()
            self.state.clear()


def _process_host():
    from changeflow.datastream.functions import RuntimeContext

    return RecordHost(KeyedProcess(Timeouts(), "Timeouts", runtime_context=RuntimeContext))


def test_event_time_timers_fire_when_the_watermark_reaches_them():
    host = _process_host()
    assert host.process([(("a", 1), 5), (("b", 2), 7)]) == [(("seen", 1, 5, -2**63), 5), (("seen", 2, 7, -2**63), 7)]
    assert host.watermark(14) == []
    assert host.watermark(15) == [(("timeout", "a", 1, 0, 15), 15)]
    assert host.process([(("b", 3), 9)]) == [(("seen", 3, 9, 15), 9)]
    assert host.watermark(17) == []          # b's first timer (17) fires, but a later record moved its timeout
    assert host.end_of_input() == [(("timeout", "b", 2, 0, 19), 19)]


def test_event_time_timers_in_batch_mode_fire_after_the_key():
    from changeflow.datastream.functions import RuntimeContext
    from tests.datastream.kernel_helpers import values

    kernel = KeyedProcess(Timeouts(), "Timeouts", runtime_context=RuntimeContext)
    host = RecordHost(kernel)  # only to build the frame

    from changeflow.kernels.keyed.records import dumps, record_frame
    from changeflow.kernels.order import source_stamp
    frame = record_frame([dumps(("a", 1), 3), dumps(("a", 2), 4)], [source_stamp(i, 0) for i in range(2)],
                         [dumps("a"), dumps("a")])
    del host
    assert values(kernel.process_bounded(frame))[-1] == ("timeout", "a", 2, 0, 14)


def test_timestamps_and_watermark_of_a_partition():
    from changeflow.kernels.keyed.records import dumps, record_frame, timestamp_of
    from changeflow.kernels.order import source_stamp, stamps_of
    from changeflow.kernels.keyed.timestamps import TimestampAssigning

    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda v, t: v)
    frame = record_frame([dumps(v) for v in (5, 9, 2)], [source_stamp(i, 0) for i in range(3)])
    records, mark = list(TimestampAssigning(strategy, 10)([frame]))   # the _kind of assigner number 2
    assert [timestamp_of(b) for b in records["_value"]] == [5, 9, 2]
    assert stamps_of(mark)[0] == (0, 8) and mark["_kind"][0] == 10
    none = WatermarkStrategy.no_watermarks().with_timestamp_assigner(lambda v, t: v)
    assert len(list(TimestampAssigning(none, 10)([frame]))) == 1


# --- the property: streaming windows equal a plain computation over the records that are not late -----------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 60), st.integers(1, 9)), min_size=1, max_size=40),
       st.integers(0, 12), st.integers(1, 6), st.sampled_from(["tumbling", "sliding"]))
def test_windows_equal_a_plain_computation_over_the_records_in_time(records, delay, batch_size, kind):
    windows = EventWindows("tumbling", 10) if kind == "tumbling" else EventWindows("sliding", 10, slide=5)
    host = RecordHost(_window("reduce", windows, late_tag="late"), restart_every_batch=True)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(delay))
    # Out of order by at most `delay`: each record's time is jittered back from an ascending base.
    timed = [((k, v), t) for k, t, v in records]
    emitted, late, watermark, largest = [], [], -2**63, None
    kept, dropped = [], 0
    for start in range(0, len(timed), batch_size):
        batch = timed[start:start + batch_size]
        for value, t in batch:  # a window takes a record while the watermark has not reached its end
            open_windows = [w for w in windows.assign(t) if w[1] - 1 > watermark]
            kept += [(value, w) for w in open_windows]
            dropped += not open_windows
        for out in host.process(batch):
            (late if out[0] == "LATE" else emitted).append(out)
        largest = max([t for _, t in batch] + ([largest] if largest is not None else []))
        emitted += host.watermark(strategy.watermark_for(largest))
        watermark = max(watermark, strategy.watermark_for(largest))
    emitted += host.end_of_input()
    expected: dict = {}
    for (k, v), (_, end) in kept:
        expected[(k, end - 1)] = expected.get((k, end - 1), 0) + v
    assert sorted(((k, ts), v) for (k, v), ts in emitted) == sorted(expected.items())
    assert len(late) == dropped


def test_a_session_bridging_two_merges_them_all():
    host = RecordHost(_window("reduce", EventWindows("session", gap=5)))
    host.process([(("a", 1), 1), (("a", 2), 10)])
    host.process([(("a", 4), 6)])  # [6, 11) touches [1, 6) and [10, 15)
    assert host.end_of_input() == [(("a", 7), 14)]


def test_a_keyed_reduce_keeps_the_record_timestamp():
    from changeflow.kernels.keyed.reduce import KeyedReduce

    host = RecordHost(KeyedReduce(_sum, "sum"))
    assert host.process([(("a", 1), 5), (("a", 2), 3)]) == [(("a", 1), 5), (("a", 3), 3)]
