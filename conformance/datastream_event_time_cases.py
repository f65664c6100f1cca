"""DataStream conformance cases of event time: timestamps, watermarks, event-time windows and timers.

Registered into :data:`conformance.datastream_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_datastream.py`` like every DataStream case.

Flink reads a bounded collection so fast that every record usually arrives
before the first periodic watermark (200 ms): its windows and timers all fire
at the end of input, on the final watermark. changeflow's watermark advances
after every micro-batch, so its windows fire earlier, in another order. The
records are out of order by less than the strategy's bound, so no record is
late either way, and the cases compare what is emitted by the end of input
as a multiset (a function's output never shows the watermark it fired at).
"""

from __future__ import annotations

from conformance.datastream_cases import case

# (key, event time ms, value): out of order by at most 4 ms.
EVENTS = [("a", 1, 1), ("b", 3, 10), ("a", 12, 2), ("a", 9, 4), ("b", 14, 20), ("a", 11, 8), ("b", 27, 30),
          ("a", 25, 16), ("a", 23, 32), ("c", 40, 64)]


def _timed(env, api, delay_ms=5):
    class ByTime(api.TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1]

    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT(), api.Types.INT()])
    strategy = api.WatermarkStrategy.for_bounded_out_of_orderness(api.Duration.of_millis(delay_ms)) \
        .with_timestamp_assigner(ByTime())
    return env.from_collection(EVENTS, type_info=t).assign_timestamps_and_watermarks(strategy)


@case("event_time_tumbling_reduce", "event time: bounded out-of-orderness watermarks, tumbling 10 ms windows, "
      "reduce (sum of the values, latest time); windows all fire by the end of input", compare="multiset")
def event_time_tumbling_reduce(env, api):
    windows = api.TumblingEventTimeWindows.of(api.Time.milliseconds(10))
    return _timed(env, api).key_by(lambda r: r[0]).window(windows).reduce(
        lambda a, b: (a[0], max(a[1], b[1]), a[2] + b[2]))


@case("event_time_sliding_process", "event time: sliding windows (10 ms every 5 ms), a ProcessWindowFunction "
      "naming each window and its sorted values", modes=("streaming",), compare="multiset")
def event_time_sliding_process(env, api):
    class Listing(api.ProcessWindowFunction):
        def process(self, key, context, elements):
            w = context.window()
            yield key, w.start, w.end, sorted(e[2] for e in elements)

    windows = api.SlidingEventTimeWindows.of(api.Time.milliseconds(10), api.Time.milliseconds(5))
    return _timed(env, api).key_by(lambda r: r[0]).window(windows).process(Listing())


@case("event_time_session_aggregate", "event time: session windows (gap 5 ms) merging as records arrive out of "
      "order, AggregateFunction (sum, count) with a ProcessWindowFunction adding the session's bounds",
      modes=("streaming",), compare="multiset")
def event_time_session_aggregate(env, api):
    class SumCount(api.AggregateFunction):
        def create_accumulator(self):
            return [0, 0]

        def add(self, value, accumulator):
            return [accumulator[0] + value[2], accumulator[1] + 1]

        def get_result(self, accumulator):
            return accumulator[0], accumulator[1]

        def merge(self, a, b):
            return [a[0] + b[0], a[1] + b[1]]

    class Bounds(api.ProcessWindowFunction):
        def process(self, key, context, elements):
            for total, count in elements:
                yield key, context.window().start, context.window().end, total, count

    windows = api.EventTimeSessionWindows.with_gap(api.Time.milliseconds(5))
    return _timed(env, api).key_by(lambda r: r[0]).window(windows).aggregate(SumCount(), Bounds())


@case("event_time_timers", "KeyedProcessFunction: ctx.timestamp() of each record, an event-time timer 5 ms "
      "after it; on_timer yields the key, the time, ctx.timestamp() and whether the domain is EVENT_TIME",
      modes=("streaming",), compare="multiset")
def event_time_timers(env, api):
    class Later(api.KeyedProcessFunction):
        def process_element(self, value, ctx):
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 5)
            yield "record", value[0], ctx.timestamp()

        def on_timer(self, timestamp, ctx):
            yield "timer", ctx.get_current_key(), timestamp, ctx.timestamp(), \
                ctx.time_domain() == api.TimeDomain.EVENT_TIME

    return _timed(env, api).key_by(lambda r: r[0]).process(Later())


@case("event_time_process_timestamp", "a ProcessFunction after assign_timestamps_and_watermarks reads each "
      "record's timestamp; a map before it keeps the timestamp", modes=("streaming",))
def event_time_process_timestamp(env, api):
    class Stamp(api.ProcessFunction):
        def process_element(self, value, ctx):
            yield value[0], ctx.timestamp()

    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT(), api.Types.INT()])
    return _timed(env, api).map(lambda r: (r[0].upper(), r[1], r[2]), output_type=t).process(Stamp())


# --- count windows and the triggers of event-time windows ------------------------------------


def _untimed(env, api):
    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT(), api.Types.INT()])
    return env.from_collection(EVENTS, type_info=t)


@case("count_window_tumbling_reduce", "count_window(2): each key's records two by two, summed; a key's last "
      "incomplete window never fires", modes=("streaming",), compare="multiset")
def count_window_tumbling_reduce(env, api):
    return _untimed(env, api).key_by(lambda r: r[0]).count_window(2).reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))


@case("count_window_sliding_process", "count_window(3, 2) (PyFlink's sliding count windows: each fires once, "
      "when full), a ProcessWindowFunction naming the CountWindow's id and its values; count_window_all(3) of "
      "the whole stream", modes=("streaming",), compare="multiset")
def count_window_sliding_process(env, api):
    class Listing(api.ProcessWindowFunction):
        def process(self, key, context, elements):
            yield key, context.window().id, [e[2] for e in elements]

    class AllListing(api.ProcessAllWindowFunction):
        def process(self, context, elements):
            yield "all", context.window().id, [e[2] for e in elements]

    keyed = _untimed(env, api).key_by(lambda r: r[0]).count_window(3, 2).process(Listing())
    return keyed.union(api.count_window_all(_untimed(env, api), 3).process(AllListing()))


@case("event_time_purging_count_trigger", "tumbling 10 ms event-time windows with PurgingTrigger.of("
      "CountTrigger.of(2)): a window fires with every second record and forgets it, never at its end",
      modes=("streaming",), compare="multiset")
def event_time_purging_count_trigger(env, api):
    class Listing(api.ProcessWindowFunction):
        def process(self, key, context, elements):
            yield key, context.window().start, sorted(e[2] for e in elements)

    windows = api.TumblingEventTimeWindows.of(api.Time.milliseconds(10))
    trigger = api.PurgingTrigger.of(api.CountTrigger.of(2))
    return _timed(env, api).key_by(lambda r: r[0]).window(windows).trigger(trigger).process(Listing())


@case("event_time_continuous_trigger", "tumbling 20 ms event-time windows with ContinuousEventTimeTrigger.of("
      "5 ms) and no watermarks before the end of input: at the end each window fires at each 5 ms step from its "
      "first record's, then at its end", modes=("streaming",), compare="multiset")
def event_time_continuous_trigger(env, api):
    class ByTime(api.TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1]

    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT(), api.Types.INT()])
    strategy = api.WatermarkStrategy.no_watermarks().with_timestamp_assigner(ByTime())
    windows = api.TumblingEventTimeWindows.of(api.Time.milliseconds(20))
    trigger = api.ContinuousEventTimeTrigger.of(api.Time.milliseconds(5))
    return env.from_collection(EVENTS, type_info=t).assign_timestamps_and_watermarks(strategy).key_by(
        lambda r: r[0]).window(windows).trigger(trigger).reduce(lambda a, b: (a[0], max(a[1], b[1]), a[2] + b[2]))


@case("global_window_purging_count_trigger", "GlobalWindows.create() with PurgingTrigger.of(CountTrigger.of(2)), "
      "keyed (Java's countWindow(2)) and window_all (countWindowAll(4)): each fires with the records since its "
      "last firing", modes=("streaming",), compare="multiset")
def global_window_purging_count_trigger(env, api):
    def add(a, b):
        return a[0], a[1], a[2] + b[2]

    keyed = _untimed(env, api).key_by(lambda r: r[0]).window(api.GlobalWindows.create()).trigger(
        api.PurgingTrigger.of(api.CountTrigger.of(2))).reduce(add)
    whole = _untimed(env, api).window_all(api.GlobalWindows.create()).trigger(
        api.PurgingTrigger.of(api.CountTrigger.of(4))).reduce(add)
    return keyed.union(whole)


@case("keyed_process_side_output", "KeyedProcessFunction side outputs: small values go to a side output from "
      "process_element, each key's event-time timer (5 ms after its record) yields to the side output and the "
      "main output from on_timer (its time, not state: when it fires is the runtime's choice); main and side "
      "output unioned", compare="multiset")
def keyed_process_side_output(env, api):
    small = api.OutputTag("small", api.Types.STRING())

    class Split(api.KeyedProcessFunction):
        def open(self, runtime_context):
            self.total = runtime_context.get_state(api.ValueStateDescriptor("total", api.Types.INT()))

        def process_element(self, value, ctx):
            self.total.update((self.total.value() or 0) + value[2])
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 5)
            if value[2] < 8:
                yield small, f"{ctx.get_current_key()} small {value[2]}"
            else:
                yield ctx.get_current_key(), value[2]

        def on_timer(self, timestamp, ctx):
            # Nothing read from state: when a timer fires (which watermark) is Flink's and changeflow's choice.
            yield small, f"{ctx.get_current_key()} timer {timestamp}"
            yield ctx.get_current_key(), -timestamp

    t = api.Types
    main = _timed(env, api).key_by(lambda r: r[0]).process(Split(), output_type=t.TUPLE([t.STRING(), t.INT()]))
    return main.map(lambda r: f"{r[0]} main {r[1]}", output_type=t.STRING()).union(main.get_side_output(small))
