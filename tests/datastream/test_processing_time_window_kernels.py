"""Processing-time windows and triggers of the DataStream window kernel, driven by the harness's clock (no Spark).

Exact: records go to the windows of their arrival time (the clock when they are processed), a window fires on
the processing-time timer at its end - 1 and its state goes then, sessions merge on arrival time, a continuous
processing-time trigger fires every interval, purging empties, and nothing fires at the end of input.
"""

from __future__ import annotations

import pytest

from changeflow.datastream.functions import ProcessWindowFunction, RuntimeContext
from changeflow.datastream.window import TimeWindow, global_window_of
from changeflow.kernels.keyed.records import VALUE, dumps, record_frame
from changeflow.kernels.order import source_stamp, stamps_of
from changeflow.kernels.window.evaluate import WindowSpec
from changeflow.kernels.window.event_time import EventTimeWindow, EventWindows
from changeflow.kernels.window.processing_time import ProcessingTimeWindow, window_kernel
from changeflow.kernels.window.triggers import Pane, TriggerSpec
from tests.datastream.event_time_helpers import RecordHost, _decode_rows

MAX_LONG = 2**63 - 1


class Listing(ProcessWindowFunction):
    def process(self, key, context, elements):
        w = context.window()
        yield key, (w.start, w.end), [e[1] for e in elements]


def _sum(a, b):
    return (a[0], a[1] + b[1])


def _kernel(function_kind="process", trigger=None, make_window=TimeWindow, **windows):
    function = {"reduce": _sum, "process": Listing()}[function_kind]
    windows.setdefault("processing_time", True)
    return window_kernel(WindowSpec(function_kind, function), EventWindows(**windows), "W", make_window=make_window,
                         trigger=trigger, runtime_context=RuntimeContext)


class ClockHost(RecordHost):
    """A :class:`RecordHost` with the harness's clock: ``at(ms, records)`` processes records arriving at ``ms``,
    ``clock(ms)`` moves processing time there and returns what the due timers fired."""

    def at(self, ms: int, values) -> list:
        self.h.set_time(ms)
        return self.process([(v, None) for v in values])  # no event timestamps: arrival time is what counts

    def clock(self, ms: int) -> list:
        return _decode_rows(self.h.set_processing_time(ms))


def test_tumbling_windows_assign_by_arrival_and_fire_at_end_minus_one():
    host = ClockHost(_kernel(kind="tumbling", size=10))
    assert host.at(3, [("a", 1), ("b", 2)]) == []
    assert host.at(7, [("a", 4)]) == []
    assert host.h.next_timer() == 9
    assert host.clock(8) == []
    assert host.clock(9) == [(("a", (0, 10), [1, 4]), 9), (("b", (0, 10), [2]), 9)]  # timestamp: end - 1
    assert host.h.state.scan("event_windows").empty  # a processing-time window's state goes when it fires
    assert host.at(12, [("a", 8)]) == []
    assert host.clock(100) == [(("a", (10, 20), [8]), 19)]
    assert host.h.next_timer() is None


def test_event_timestamps_do_not_matter_and_none_is_needed():
    host = ClockHost(_kernel(kind="tumbling", size=10, offset=3))
    host.h.set_time(21)
    assert host.process([(("a", 1), 999), (("a", 2), None)]) == []  # a timestamp of 999 is ignored
    assert host.clock(22) == [(("a", (13, 23), [1, 2]), 22)]


def test_sliding_windows_fire_each_window_of_the_arrival_time():
    host = ClockHost(_kernel(kind="sliding", size=10, slide=5))
    host.at(7, [("a", 1)])  # windows [5, 15) and [0, 10)
    host.at(11, [("a", 2)])  # windows [10, 20) and [5, 15)
    assert host.clock(9) == [(("a", (0, 10), [1]), 9)]
    assert host.clock(15) == [(("a", (5, 15), [1, 2]), 14)]
    assert host.clock(30) == [(("a", (10, 20), [2]), 19)]


def test_sessions_merge_on_arrival_time():
    host = ClockHost(_kernel(kind="session", gap=10))
    host.at(0, [("a", 1), ("b", 5)])
    host.at(5, [("a", 2)])  # [5, 15) touches [0, 10): one session [0, 15)
    assert host.clock(9) == [(("b", (0, 10), [5]), 9)]  # a's session moved on: its old end does not fire
    host.at(14, [("a", 3)])  # extends it to [0, 24)
    assert host.clock(23) == [(("a", (0, 24), [1, 2, 3]), 23)]
    host.at(30, [("a", 4)])
    assert host.clock(39) == [(("a", (30, 40), [4]), 39)]


def test_reduce_and_restart_every_call_keep_the_results():
    host = ClockHost(_kernel("reduce", kind="tumbling", size=10))
    for t, value in [(1, 1), (2, 10), (5, 100)]:
        host.at(t, [("a", value)])
    assert host.clock(10) == [(("a", 111), 9)]


def test_nothing_fires_at_end_of_input_in_streaming_mode():
    host = ClockHost(_kernel(kind="tumbling", size=10))
    host.at(3, [("a", 1)])
    assert host.end_of_input() == []  # Flink's streaming mode drops a window whose end the clock did not reach


def _bounded(kernel, values, now):
    kernel.bind_clock(lambda: now)
    batch = record_frame([dumps(v) for v in values], [source_stamp(i, 0) for i in range(len(values))],
                         [dumps(v[0]) for v in values])
    out = kernel.process_bounded(batch)
    return [v for v, _ in _decode_rows(list(zip(out[VALUE], stamps_of(out), strict=True)))]


class Watermark(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield key, context.window().start, [e[1] for e in elements], context.current_watermark()


def test_batch_mode_fires_every_window_after_the_input_as_flinks_batch_timers():
    kernel = window_kernel(WindowSpec("process", Watermark()), EventWindows("tumbling", 1000, processing_time=True),
                           "W", make_window=TimeWindow, runtime_context=RuntimeContext)
    # Long before the window's end: Flink's batch execution fires a key's processing-time timers after its input.
    assert sorted(_bounded(kernel, [("a", 1), ("b", 2), ("a", 3)], now=5)) == [
        ("a", 0, [1, 3], MAX_LONG), ("b", 0, [2], MAX_LONG)]
    continuous = _kernel("reduce", kind="tumbling", size=100,
                         trigger=TriggerSpec("continuous_processing_time", interval=40))
    assert _bounded(continuous, [("a", 1), ("a", 2)], now=10) == [(("a", 3))] * 3  # at 40, 80 and 99
    on_global = window_kernel(WindowSpec("reduce", _sum), EventWindows("global"), "W", make_window=global_window_of,
                              trigger=TriggerSpec("continuous_processing_time", interval=40))
    with pytest.raises(ValueError, match="never ends .* not supported in batch mode"):
        _bounded(on_global, [("a", 1)], now=10)


def test_continuous_processing_time_trigger_fires_every_interval_and_at_the_end():
    host = ClockHost(_kernel(kind="tumbling", size=100, trigger=TriggerSpec("continuous_processing_time",
                                                                             interval=30)))
    host.at(10, [("a", 1)])  # the first firing: the interval boundary at or before 10, plus 30
    assert host.h.next_timer() == 30
    assert host.clock(30) == [(("a", (0, 100), [1]), 99)]
    host.at(40, [("a", 2)])
    assert host.clock(60) == [(("a", (0, 100), [1, 2]), 99)]
    # The clock jumps past two firings and the end: each fires, in time order, then the window goes.
    assert host.clock(150) == [(("a", (0, 100), [1, 2]), 99)] * 2
    assert host.h.state.scan("event_windows").empty


def test_purging_continuous_trigger_on_global_windows_emits_what_arrived_since():
    kernel = window_kernel(WindowSpec("process", Listing()), EventWindows("global"), "W", make_window=global_window_of,
                           trigger=TriggerSpec("continuous_processing_time", interval=50, purge=True),
                           runtime_context=RuntimeContext)
    assert isinstance(kernel, ProcessingTimeWindow) and kernel.event_time  # count/global windows keep event time

    class Keys(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield key, [e[1] for e in elements]

    kernel.spec = WindowSpec("process", Keys())
    host = ClockHost(kernel)
    host.at(120, [("a", 1), ("a", 2)])
    assert host.clock(150) == [(("a", [1, 2]), MAX_LONG)]
    assert host.clock(200) == []  # fired empty (purged): nothing, but the trigger keeps firing
    host.at(210, [("a", 3)])
    assert host.clock(260) == [(("a", [3]), MAX_LONG)]


def test_purging_processing_time_trigger_and_count_trigger_on_processing_time_windows():
    host = ClockHost(_kernel("reduce", kind="tumbling", size=10, trigger=TriggerSpec("count", count=2, purge=True)))
    assert host.at(1, [("a", 1), ("a", 2), ("a", 4)]) == [(("a", 3), 9)]
    assert host.clock(9) == []  # the count trigger does not fire on time; the window goes at its end
    assert host.h.state.scan("event_windows").empty


def test_processing_time_trigger_on_event_time_windows():
    kernel = window_kernel(WindowSpec("reduce", _sum), EventWindows("tumbling", 10), "W", make_window=TimeWindow,
                           trigger=TriggerSpec("processing_time"), runtime_context=RuntimeContext)
    assert kernel.has_timers and kernel.event_time
    host = ClockHost(kernel)
    host.h.set_time(1000)
    assert host.process([(("a", 1), 3), (("a", 2), 12)]) == []
    # Timers at the windows' max timestamps (9 and 19, event time) are due at processing time 1000 already.
    assert host.clock(1001) == [(("a", 1), 9), (("a", 2), 19)]
    assert host.watermark(15) == []  # the watermark drops [0, 10) without firing it (its trigger is on the clock)
    assert host.process([(("a", 5), 4)]) == []  # late for [0, 10): dropped
    assert host.end_of_input() == []  # the final watermark drops [10, 20): the event-time timers do not fire it


def test_event_time_triggers_are_refused_on_processing_time_windows():
    with pytest.raises(ValueError, match="EventTimeTrigger on a processing-time window is not supported"):
        _kernel(kind="tumbling", size=10, trigger=TriggerSpec("event_time"))


def test_window_kernel_picks_the_kernel_by_domain():
    plain = window_kernel(WindowSpec("reduce", _sum), EventWindows("tumbling", 10), "W")
    assert type(plain) is EventTimeWindow and not plain.has_timers and not plain.batch_clock
    timed = _kernel(kind="tumbling", size=10)
    assert type(timed) is ProcessingTimeWindow and timed.batch_clock and not timed.event_time


def test_trigger_specs_follow_pyflink():
    pane, trigger = Pane(), TriggerSpec("processing_time")
    assert trigger.processing_time and not trigger.on_element(pane, 0, max_timestamp=9, time=3)
    assert pane.timers == {9} and trigger.on_processing_time(pane, 9, 9)
    merged = trigger.on_merge([Pane(timers={9}), Pane(timers={14})], max_timestamp=14, time=12)
    assert merged.timers == {14}
    assert trigger.on_merge([Pane()], max_timestamp=14, time=14).timers == set()  # PyFlink: only a later end
    continuous = TriggerSpec("continuous_processing_time", interval=4)
    assert not continuous.on_event_time(Pane(), 4, 9)  # its timers are processing-time ones
    assert repr(TriggerSpec("continuous_processing_time", interval=4, purge=True)) == \
        "PurgingTrigger(ContinuousProcessingTimeTrigger(4))"
