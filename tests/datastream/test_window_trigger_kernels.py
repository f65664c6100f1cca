"""Count windows and the triggers of the DataStream window kernel, driven by the harness (no Spark)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.datastream.functions import ProcessWindowFunction, RuntimeContext
from changeflow.datastream.window import CountWindow, TimeWindow, count_window_of
from changeflow.kernels.window.evaluate import WindowSpec
from changeflow.kernels.window.event_time import EventTimeWindow, EventWindows
from changeflow.kernels.window.triggers import TriggerSpec
from tests.datastream.event_time_helpers import RecordHost

MAX_LONG = 2**63 - 1


def _sum(a, b):
    return (a[0], a[1] + b[1])


class Listing(ProcessWindowFunction):
    def process(self, key, context, elements):
        w = context.window()
        yield key, getattr(w, "id", getattr(w, "start", None)), [e[1] for e in elements]


def _count(function_kind="reduce", **windows):
    function = {"reduce": _sum, "process": Listing()}[function_kind]
    return EventTimeWindow(WindowSpec(function_kind, function), EventWindows(**windows), "W",
                           make_window=count_window_of, runtime_context=RuntimeContext)


def _timed(kind, windows, trigger, **kw):
    function = {"reduce": _sum, "process": Listing()}[kind]
    return EventTimeWindow(WindowSpec(kind, function), windows, "W", make_window=TimeWindow, trigger=trigger,
                           runtime_context=RuntimeContext, **kw)


def _untimed(values):
    return [(v, None) for v in values]


# --- count windows ----------------------------------------------------------------------


def test_tumbling_count_window_fires_every_size_records_of_its_key():
    host = RecordHost(_count(kind="count_tumbling", size=2))
    out = host.process(_untimed([("a", 1), ("b", 10), ("a", 2), ("a", 4), ("b", 20)]))
    assert out == [(("a", 3), MAX_LONG), (("b", 30), MAX_LONG)]  # the result's timestamp: the window's max
    assert host.process(_untimed([("a", 8)])) == [(("a", 12), MAX_LONG)]
    assert host.end_of_input() == []  # an incomplete count window never fires (CountTrigger)


def test_sliding_count_window_fires_each_window_once_when_full():
    # size 3 every 2: window 0 has records 0..2, window 1 records 2..4, window 2 records 4..6
    host = RecordHost(_count("process", kind="count_sliding", size=3, slide=2))
    out = host.process(_untimed([("a", i) for i in range(6)]))
    assert [v for v, _ in out] == [("a", 0, [0, 1, 2]), ("a", 1, [2, 3, 4])]
    assert host.end_of_input() == []


def test_count_window_functions_see_count_windows():
    assert count_window_of(3, 2**63) == CountWindow(3) and CountWindow(3).max_timestamp() == MAX_LONG


def test_count_windows_no_record_reaches_are_dropped():
    kernel = _count(kind="count_tumbling", size=2)
    host = RecordHost(kernel, restart_every_batch=False)
    host.process(_untimed([("a", i) for i in range(7)]))
    state = host.h.state.scan("event_windows")
    from changeflow.kernels.keyed.records import loads

    (windows, count), = [loads(v) for v in state["_state"]]
    assert count == 7 and list(windows) == [(3, 2**63)]  # only the open window (record 6) is kept


def test_purging_count_trigger_on_count_windows_keeps_nothing_after_firing():
    kernel = _count(kind="count_tumbling", size=3)
    kernel.trigger = TriggerSpec("count", count=2, purge=True)
    host = RecordHost(kernel)
    out = host.process(_untimed([("a", i) for i in range(1, 7)]))
    # window 0 (records 1..3) fires at 2 (purged), window 1 (records 4..6) at 5: the 3rd record of each waits
    assert [v for v, _ in out] == [("a", 3), ("a", 9)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 9)), max_size=30), st.integers(1, 4),
       st.integers(1, 20))
def test_tumbling_count_windows_equal_batch_chunks(records, size, batch):
    """Property: the fired windows are each key's records in consecutive chunks of ``size``, however the
    records are cut into batches (the kernel restarted between them)."""
    host = RecordHost(_count(kind="count_tumbling", size=size))
    got = []
    for i in range(0, len(records), batch):
        got += [v for v, _ in host.process(_untimed(records[i:i + batch]))]
    expected = []
    for key in "abc":
        values = [v for k, v in records if k == key]
        expected += [(key, sum(values[i:i + size])) for i in range(0, len(values) - size + 1, size)]
    assert sorted(got) == sorted(expected)


# --- triggers on event-time windows -------------------------------------------------------

TUMBLE_10 = EventWindows("tumbling", 10)


def test_count_trigger_on_time_windows_fires_on_count_not_on_the_watermark():
    host = RecordHost(_timed("reduce", TUMBLE_10, TriggerSpec("count", count=2)))
    assert host.process([(("a", 1), 1), (("a", 2), 3), (("a", 4), 12)]) == [(("a", 3), 9)]
    assert host.process([(("a", 8), 5)]) == []  # the count restarts after firing; contents are kept
    assert host.watermark(30) == []  # the windows end without firing (cleared)
    assert host.process([(("a", 16), 15)]) == []  # a late record: dropped
    assert host.end_of_input() == []


def test_purging_count_trigger_on_time_windows():
    host = RecordHost(_timed("process", TUMBLE_10, TriggerSpec("count", count=2, purge=True)))
    out = host.process([(("a", 1), 1), (("a", 2), 3), (("a", 4), 5), (("a", 8), 6)])
    assert [v for v, _ in out] == [("a", 0, [1, 2]), ("a", 0, [4, 8])]


def test_continuous_event_time_trigger_fires_every_interval_and_at_the_end():
    host = RecordHost(_timed("reduce", TUMBLE_10, TriggerSpec("continuous_event_time", interval=3)))
    host.process([(("a", 1), 1)])  # next firing at 1 - 1 % 3 + 3 = 3
    assert host.watermark(2) == []
    assert host.watermark(3) == [(("a", 1), 9)]  # and registers the next firing, 6
    host.process([(("a", 2), 5)])
    assert host.watermark(6) == [(("a", 3), 9)]
    assert host.watermark(9) == [(("a", 3), 9)]  # 9 is the window's end and the next firing: fires once
    assert host.end_of_input() == []


def test_continuous_trigger_timer_registered_while_firing_waits_for_the_next_watermark():
    """As PyFlink 2.3 (its recorded golden event_time_continuous_trigger): a timer a firing registers fires at the
    next watermark advance, even when the current watermark passed it already, and never after the final one."""
    host = RecordHost(_timed("reduce", EventWindows("tumbling", 100), TriggerSpec("continuous_event_time",
                                                                                   interval=10)))
    host.process([(("a", 1), 0)])
    assert len(host.watermark(45)) == 1  # the timer at 10 (registering 20)
    assert len(host.watermark(46)) == 1  # 20 (registering 30)
    assert len(host.end_of_input()) == 2  # 30 (registering 40, which never fires) and the end, 99


def test_purging_event_time_trigger_fires_late_records_alone():
    host = RecordHost(_timed("process", TUMBLE_10, TriggerSpec("event_time", purge=True), lateness=5))
    host.process([(("a", 1), 1), (("a", 2), 2)])
    assert [v for v, _ in host.watermark(10)] == [("a", 0, [1, 2])]
    assert [v for v, _ in host.process([(("a", 4), 3)])] == [("a", 0, [4])]  # contents purged at the firing
    assert host.end_of_input() == []  # purged: nothing to fire at the end


def test_never_trigger_on_time_windows_emits_nothing():
    host = RecordHost(_timed("reduce", TUMBLE_10, TriggerSpec("never")))
    host.process([(("a", 1), 1)])
    assert host.end_of_input() == []


def test_sessions_merge_the_count_of_their_count_trigger():
    host = RecordHost(_timed("process", EventWindows("session", gap=5), TriggerSpec("count", count=3)))
    assert host.process([(("a", 1), 1), (("a", 2), 20)]) == []
    # 10 bridges nothing (1..6, 10..15, 20..25); 15 joins 10..15 and 20..25: count 1 + 1 + 1 = 3 fires
    assert host.process([(("a", 3), 10)]) == []
    [(key, start, values)] = [v for v, _ in host.process([(("a", 4), 15)])]
    assert (key, start, sorted(values)) == ("a", 10, [2, 3, 4])


def test_sessions_merge_continuous_trigger_to_the_earliest_firing():
    host = RecordHost(_timed("reduce", EventWindows("session", gap=10), TriggerSpec("continuous_event_time",
                                                                                      interval=4)))
    host.process([(("a", 1), 1), (("a", 2), 15)])  # next firings at 4 and 16
    host.process([(("a", 4), 9)])  # merges into one session 1..25; its next firing is 4
    assert host.watermark(4) == [(("a", 7), 24)]


def test_trigger_spec_refuses_unknown_kinds():
    with pytest.raises(ValueError, match="unknown trigger kind"):
        TriggerSpec("ingestion_time")


# --- the API: what it builds and what it refuses ------------------------------------------


def _keyed():
    from changeflow.datastream import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    return env.from_collection([("a", 1), ("b", 2)]).key_by(lambda r: r[0])


def test_count_window_builds_the_kernel_node_with_its_trigger():
    from changeflow.datastream.window import CountTrigger, PurgingTrigger

    stream = _keyed().count_window(3, 2).trigger(PurgingTrigger.of(CountTrigger.of(2))).reduce(_sum)
    node = stream._node
    assert node.windows == EventWindows("count_sliding", 3, slide=2) and node.make_window is count_window_of
    assert node.trigger == TriggerSpec("count", count=2, purge=True)
    assert "trigger=PurgingTrigger(CountTrigger(2))" in stream.get_name()
    assert _keyed().count_window(4).reduce(_sum)._node.trigger == TriggerSpec("count", count=4)


@pytest.mark.parametrize("assigner, args, windows", [
    ("TumblingProcessingTimeWindows", (1000, 250), EventWindows("tumbling", 1000, offset=250, processing_time=True)),
    ("SlidingProcessingTimeWindows", (1000, 500, 0), EventWindows("sliding", 1000, slide=500, processing_time=True)),
    ("ProcessingTimeSessionWindows", (1000,), EventWindows("session", gap=1000, processing_time=True))])
def test_processing_time_windows_build_the_kernel_with_pyflinks_names(assigner, args, windows):
    from changeflow.common import Time
    from changeflow.datastream import window

    cls = getattr(window, assigner)
    times = [Time.milliseconds(a) for a in args]
    instance = cls.with_gap(*times) if "Session" in assigner else cls.of(*times)
    assert repr(instance) == f"{assigner}({', '.join(map(str, args))})"  # PyFlink's repr
    assert not instance.is_event_time() and isinstance(instance.get_default_trigger(), window.ProcessingTimeTrigger)
    stream = _keyed().window(instance).reduce(_sum)
    assert stream._node.windows == windows and stream._node.trigger == TriggerSpec("processing_time")
    assert stream._node.make_window is TimeWindow


def test_event_time_triggers_are_refused_on_processing_time_windows_when_built():
    from changeflow.common import Time
    from changeflow.datastream import window

    windowed = _keyed().window(window.TumblingProcessingTimeWindows.of(Time.seconds(1)))
    with pytest.raises(ValueError, match=r"WindowedStream.trigger\(\): EventTimeTrigger on a processing-time window"):
        windowed.trigger(window.EventTimeTrigger.create()).reduce(_sum)


def test_window_all_takes_processing_time_windows():
    from changeflow.common import Time
    from changeflow.datastream import StreamExecutionEnvironment, window

    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.from_collection([1, 2]).window_all(window.SlidingProcessingTimeWindows.of(
        Time.seconds(2), Time.seconds(1))).reduce(lambda a, b: a + b)
    assert stream._node.windows == EventWindows("sliding", 2000, slide=1000, processing_time=True)
    assert stream.get_name().startswith("WindowAll(SlidingProcessingTimeWindows(2000, 1000, 0), reduce(")


def test_processing_time_assigners_check_their_arguments_as_pyflink():
    from changeflow.common import Time
    from changeflow.datastream import window

    with pytest.raises(ValueError, match=r"abs\(offset\) < size"):
        window.TumblingProcessingTimeWindows.of(Time.milliseconds(10), Time.milliseconds(10))
    with pytest.raises(ValueError, match=r"abs\(offset\) < slide"):
        window.SlidingProcessingTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5), Time.milliseconds(5))
    with pytest.raises(ValueError, match="0 < size"):
        window.ProcessingTimeSessionWindows.with_gap(Time.milliseconds(0))
    with pytest.raises(NotImplementedError, match="DynamicProcessingTimeSessionWindows"):
        window.ProcessingTimeSessionWindows.with_dynamic_gap(lambda e: 1)
    with pytest.raises(ValueError, match="positive interval"):
        window.ContinuousProcessingTimeTrigger.of(Time.milliseconds(0))
    with pytest.raises(ValueError, match="does not support event-time, processing-time or count windows"):
        keyed = _keyed()
        keyed.co_group(keyed).where(lambda r: r).equal_to(lambda r: r).window(
            window.TumblingProcessingTimeWindows.of(Time.seconds(1)))


def test_processing_time_triggers_give_their_kernel_triggers():
    from changeflow.common import Time
    from changeflow.datastream import window

    continuous = window.ContinuousProcessingTimeTrigger.of(Time.milliseconds(200))
    stream = _keyed().count_window(2).trigger(window.PurgingTrigger.of(continuous)).reduce(_sum)
    assert stream._node.trigger == TriggerSpec("continuous_processing_time", interval=200, purge=True)
    assert "trigger=PurgingTrigger(ContinuousProcessingTimeTrigger(200))" in stream.get_name()
    on_global = _keyed().window(window.GlobalWindows.create()).trigger(continuous).reduce(_sum)
    assert on_global._node.trigger == TriggerSpec("continuous_processing_time", interval=200)
    assert on_global._node.windows == EventWindows("global")
    event = _keyed().window(window.TumblingEventTimeWindows.of(Time.seconds(1))).trigger(
        window.ProcessingTimeTrigger.create()).reduce(_sum)
    assert event._node.trigger == TriggerSpec("processing_time") and not event._node.windows.processing_time


def test_global_window_triggers_are_refused_on_kernel_windows():
    from changeflow.datastream.window import EndOfStreamTrigger

    with pytest.raises(ValueError, match="got EndOfStreamTrigger"):
        _keyed().count_window(2).trigger(EndOfStreamTrigger())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 60), st.integers(0, 9)), max_size=40),
       st.integers(1, 3), st.integers(1, 10))
def test_purging_count_trigger_equals_batch_chunks_per_window(rows, n, batch):
    """Property: with ``PurgingTrigger.of(CountTrigger.of(n))`` on 10 ms tumbling windows and records out of order
    by less than the watermark's delay (none late), the firings are each (key, window)'s records in arrival order
    cut into chunks of ``n``, whatever the batches and watermarks between them."""
    delay = 5
    ordered = sorted(rows, key=lambda r: r[1])
    # Arrival order: each record displaced by less than the delay (sorted by time + a bounded jitter).
    arrivals = sorted(ordered, key=lambda r: r[1] + (r[2] % delay))
    host = RecordHost(_timed("process", TUMBLE_10, TriggerSpec("count", count=n, purge=True)))
    got, high = [], None
    for i in range(0, len(arrivals), batch):
        chunk = arrivals[i:i + batch]
        got += [v for v, _ in host.process([((k, v), t) for k, t, v in chunk])]
        high = max([t for _, t, _ in chunk] + ([high] if high is not None else []))
        got += [v for v, _ in host.watermark(high - delay - 1)]
    got += [v for v, _ in host.end_of_input()]
    expected = []
    for key in "ab":
        for start in range(0, 70, 10):
            values = [v for k, t, v in arrivals if k == key and start <= t < start + 10]
            expected += [(key, start, values[i:i + n]) for i in range(0, len(values) - n + 1, n)]
    assert sorted(got) == sorted(expected)


def test_global_windows_with_a_purging_count_trigger_run_in_the_window_kernel():
    from changeflow.datastream.window import (CountTrigger, EndOfStreamTrigger, GlobalWindow, GlobalWindows,
                                              PurgingTrigger, global_window_of)

    stream = _keyed().window(GlobalWindows.create()).trigger(PurgingTrigger.of(CountTrigger.of(2))).reduce(_sum)
    assert stream._node.windows == EventWindows("global") and stream._node.make_window is global_window_of
    # Back to a trigger of global windows: the FLIP-331 path again.
    windowed = _keyed().window(GlobalWindows.create()).trigger(CountTrigger.of(2)).trigger(EndOfStreamTrigger())
    assert type(windowed.reduce(_sum)._node).__name__ == "WindowNode"
    kernel = EventTimeWindow(WindowSpec("process", Listing()), EventWindows("global"), "W",
                             make_window=global_window_of, trigger=TriggerSpec("count", count=2, purge=True),
                             runtime_context=RuntimeContext)
    host = RecordHost(kernel)
    out = host.process(_untimed([("a", 1), ("a", 2), ("b", 5), ("a", 3), ("a", 4), ("a", 5)]))
    assert out == [(("a", None, [1, 2]), MAX_LONG), (("a", None, [3, 4]), MAX_LONG)]
    assert host.end_of_input() == []  # the global window's last record waits for a second one, forever
    assert global_window_of(0, 2**63) == GlobalWindow.get()
