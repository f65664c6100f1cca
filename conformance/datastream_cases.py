"""DataStream API conformance cases: programs written once against PyFlink's DataStream names.

Each case is ``program(env, api) -> DataStream``: ``env`` is a
``StreamExecutionEnvironment`` already set to the case's runtime mode, ``api``
a namespace of ``Types``, ``KeyedProcessFunction``, ``ValueStateDescriptor``,
``ReduceFunction``, ``MapFunction`` and ``FlatMapFunction`` taken from
``pyflink`` (``record_flink_datastream.py``) or ``changeflow``
(``tests/conformance/test_datastream_conformance.py``). This module imports
neither. The recorder collects the returned stream with
``execute_and_collect()`` at parallelism 1.

``compare`` says how a result is compared with Flink's:

- ``exact``: the record sequence (Flink is deterministic at parallelism 1:
  sources emit in order and a keyed operator keeps per-key order);
- ``multiset``: where Flink does not define the order (batch mode's order of
  keys);
- ``last_per_key``: the number of records and the last record per key (the
  first field): a union's interleaving of its inputs is Flink's choice, so a
  keyed sum's intermediate values depend on it but its final ones do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Case:
    name: str
    mode: str          # "streaming" | "batch"
    compare: str       # "exact" | "multiset" | "last_per_key"
    program: Callable
    description: str


CASES: dict[str, Case] = {}


def case(name: str, description: str, modes=("streaming", "batch"), ordered_in_batch: bool = False,
         unordered_inputs: bool = False, compare: str | None = None):
    """Registers ``program`` under ``<name>_<mode>`` for each mode."""
    def register(program):
        for mode in modes:
            full = f"{name}_{mode}"
            how = compare
            if how is None and unordered_inputs and mode == "streaming":
                how = "last_per_key"
            elif how is None:
                how = "exact" if mode == "streaming" or ordered_in_batch else "multiset"
            CASES[full] = Case(full, mode, how, program, description)
        return program
    return register


TUPLES = [("a", 5, "x"), ("b", 2, "p"), ("a", 3, "y"), ("a", 3, "z"), ("b", 7, "q"), ("a", 9, "w"), ("c", 1, "m")]


def _tuples(env, api):
    return env.from_collection(TUPLES, type_info=api.Types.TUPLE(
        [api.Types.STRING(), api.Types.INT(), api.Types.STRING()]))


@case("keyed_sum_tuple", "sum(1) on 3-tuples: the first record with the running sum")
def keyed_sum_tuple(env, api):
    return _tuples(env, api).key_by(lambda r: r[0]).sum(1)


@case("keyed_min_tuple", "min(1): only the field changes, other fields stay the first record's")
def keyed_min_tuple(env, api):
    return _tuples(env, api).key_by(lambda r: r[0]).min(1)


@case("keyed_max_tuple", "max(1)")
def keyed_max_tuple(env, api):
    return _tuples(env, api).key_by(lambda r: r[0]).max(1)


@case("keyed_min_by_tuple", "min_by(1) with ties (3, y) and (3, z): the first stays")
def keyed_min_by_tuple(env, api):
    return _tuples(env, api).key_by(lambda r: r[0]).min_by(1)


@case("keyed_max_by_tuple", "max_by(1)")
def keyed_max_by_tuple(env, api):
    return _tuples(env, api).key_by(lambda r: r[0]).max_by(1)


def _named_rows(env, api):
    return env.from_collection([("a", 1, 10.5), ("b", 4, 1.0), ("a", 3, -2.0), ("b", 2, 7.25), ("a", 2, 0.0)],
                               type_info=api.Types.ROW_NAMED(["k", "n", "x"], [api.Types.STRING(), api.Types.INT(),
                                                                               api.Types.DOUBLE()]))


@case("keyed_sum_named_row", "sum('x') on named rows")
def keyed_sum_named_row(env, api):
    return _named_rows(env, api).key_by(lambda r: r["k"]).sum("x")


@case("keyed_max_by_named_row", "max_by('n') on named rows")
def keyed_max_by_named_row(env, api):
    return _named_rows(env, api).key_by(lambda r: r["k"]).max_by("n")


@case("keyed_min_positional_row", "min(1) on Types.ROW rows (positional)")
def keyed_min_positional_row(env, api):
    ds = env.from_collection([("a", 4), ("a", 2), ("b", 1), ("a", 3)],
                             type_info=api.Types.ROW([api.Types.STRING(), api.Types.INT()]))
    return ds.key_by(lambda r: r[0]).min(1)


@case("keyed_sum_basic_values", "sum() of plain ints keyed by parity (pickled values, no type info)")
def keyed_sum_basic_values(env, api):
    return env.from_collection([1, 2, 3, 4, 5, 6, 7]).key_by(lambda v: v % 2).sum()


@case("keyed_reduce_lambda", "reduce with a lambda building a string per key")
def keyed_reduce_lambda(env, api):
    ds = env.from_collection([("a", "1"), ("b", "2"), ("a", "3"), ("b", "4"), ("a", "5")])
    return ds.key_by(lambda r: r[0]).reduce(lambda acc, r: (acc[0], acc[1] + "+" + r[1]))


@case("keyed_reduce_function_class", "a ReduceFunction class after a MapFunction class")
def keyed_reduce_function_class(env, api):
    class Scale(api.MapFunction):
        def map(self, value):
            return value[0], value[1] * 10

    class Longest(api.ReduceFunction):
        def reduce(self, value1, value2):
            return value2 if value2[1] > value1[1] else value1

    ds = env.from_collection([("a", 2), ("a", 1), ("b", 5), ("a", 7)])
    return ds.map(Scale()).key_by(lambda r: r[0]).reduce(Longest())


@case("stateless_chain", "flat_map, filter and map chained; fan-out order kept", ordered_in_batch=True)
def stateless_chain(env, api):
    class Words(api.FlatMapFunction):
        def flat_map(self, value):
            for w in value.split():
                yield w

    ds = env.from_collection(["to be or", "not to be", "", "that is"], type_info=api.Types.STRING())
    return (ds.flat_map(Words(), output_type=api.Types.STRING())
            .filter(lambda w: w != "is")
            .map(lambda w: (w, len(w)), output_type=api.Types.TUPLE([api.Types.STRING(), api.Types.INT()])))


@case("cache_reuse", "a cached map computed by one job (execute_and_collect), then read by a second job's keyed "
      "sum (FLIP-205: the cache changes no result; PyFlink 2.3 recomputes it on its local cluster)", modes=("batch",))
def cache_reuse(env, api):
    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT()])
    cached = _tuples(env, api).map(lambda r: (r[0], r[1] * 10), output_type=t).cache()
    with cached.execute_and_collect() as first:  # the first job creates the cache
        list(first)
    return cached.key_by(lambda r: r[0]).sum(1)


@case("cache_of_cached", "the seed's example: a cached source, a flat_map over it cached too, each computed by "
      "its own job, then a third job filtering the second cache", modes=("batch",), ordered_in_batch=True)
def cache_of_cached(env, api):
    sample = env.from_collection(["to be or", "not to be", "that is"], type_info=api.Types.STRING()).cache()
    with sample.execute_and_collect() as first:
        list(first)
    words = sample.flat_map(lambda line: line.split(), output_type=api.Types.STRING()).cache()
    with words.execute_and_collect() as second:
        list(second)
    return words.filter(lambda w: len(w) == 2).map(lambda w: w.upper(), output_type=api.Types.STRING())


def _split_by_size(env, api):
    """A ProcessFunction sending values below 10 to a side output (as strings), the rest to its main output."""
    small = api.OutputTag("small", api.Types.STRING())

    class Split(api.ProcessFunction):
        def process_element(self, value, ctx):
            if value < 10:
                yield small, f"s{value}"
            else:
                yield value * 2

    ds = env.from_collection([4, 12, 7, 30, 1, 11], type_info=api.Types.INT())
    return ds.process(Split(), output_type=api.Types.INT()), small


@case("side_output", "a ProcessFunction's side output (yield tag, value) unioned with its main output",
      compare="multiset")
def side_output(env, api):
    main, small = _split_by_size(env, api)
    return main.map(lambda v: f"m{v}", output_type=api.Types.STRING()).union(main.get_side_output(small))


@case("cache_side_output", "a cached side output, computed by one job and read by the next (the seed caches side "
      "outputs too)", modes=("batch",), ordered_in_batch=True)
def cache_side_output(env, api):
    main, small = _split_by_size(env, api)
    cached = main.get_side_output(small).cache()
    with cached.execute_and_collect() as first:
        list(first)
    return cached.map(lambda s: s.upper(), output_type=api.Types.STRING())


@case("union_then_sum", "union of two sources then a keyed sum (union order is Flink's choice)",
      unordered_inputs=True)
def union_then_sum(env, api):
    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT()])
    left = env.from_collection([("a", 1), ("b", 2), ("a", 3)], type_info=t)
    right = env.from_collection([("a", 10), ("c", 20)], type_info=t)
    return left.union(right.map(lambda r: (r[0], r[1] * 2), output_type=t)).key_by(lambda r: r[0]).sum(1)


@case("process_value_state", "KeyedProcessFunction with ValueState: emit a key's count on every 2nd record "
      "and its running maximum")
def process_value_state(env, api):
    class EverySecond(api.KeyedProcessFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(api.ValueStateDescriptor("count", api.Types.LONG()))
            self.best = runtime_context.get_state(api.ValueStateDescriptor("best", api.Types.INT()))

        def process_element(self, value, ctx):
            n = (self.count.value() or 0) + 1
            self.count.update(n)
            if self.best.value() is None or value[1] > self.best.value():
                self.best.update(value[1])
            if n % 2 == 0:
                yield ctx.get_current_key(), n, self.best.value()

    ds = env.from_collection([("a", 3), ("b", 1), ("a", 5), ("a", 4), ("b", 9), ("a", 1), ("c", 2)],
                             type_info=api.Types.TUPLE([api.Types.STRING(), api.Types.INT()]))
    return ds.key_by(lambda r: r[0]).process(EverySecond(), output_type=api.Types.TUPLE(
        [api.Types.STRING(), api.Types.LONG(), api.Types.INT()]))


@case("union_of_maps", "union of three streams, one of them twice mapped", compare="multiset")
def union_of_maps(env, api):
    a = env.from_collection([1, 2, 3])
    b = env.from_collection([10, 20]).map(lambda v: v + 1).map(lambda v: -v)
    c = env.from_collection(["x"])
    return a.union(b, c)


@case("process_timers", "KeyedProcessFunction with processing-time timers: batch mode fires every timer of a key, "
      "in time order, after the key's input (streaming firing depends on wall-clock time: not a golden)",
      modes=("batch",))
def process_timers(env, api):
    class Reminder(api.KeyedProcessFunction):
        def open(self, runtime_context):
            self.total = runtime_context.get_state(api.ValueStateDescriptor("total", api.Types.LONG()))

        def process_element(self, value, ctx):
            self.total.update((self.total.value() or 0) + value[1])
            ctx.timer_service().register_processing_time_timer(
                ctx.timer_service().current_processing_time() + value[2])
            yield "elem", value[0], value[1]

        def on_timer(self, timestamp, ctx):
            yield "timer", ctx.get_current_key(), self.total.value()

    ds = env.from_collection([("a", 1, 0), ("b", 2, 3_600_000), ("a", 3, 7_200_000), ("c", 4, 10)])
    return ds.key_by(lambda r: r[0]).process(Reminder())


# --- windows over GlobalWindows (FLIP-331) ----------------------------------------------------
# ``api.end_of_stream(keyed)`` / ``api.end_of_stream_all(stream)`` window a stream into one global
# window that fires once, after all input: changeflow's
# ``GlobalWindows.create_with_end_of_stream_trigger()``; under PyFlink (which has no Python API for
# it) ``GlobalWindows.create()`` with a trigger doing what Flink's Java ``EndOfStreamTrigger`` does
# (an event-time timer at the window's end, fired by the final watermark). Flink fires the keys'
# windows in its timer queue's order, so keyed cases compare as a multiset.

SCORES = [("a", 5), ("b", 2), ("a", 3), ("c", 7), ("b", 4), ("a", 1), ("d", 0)]


def _scores(env, api):
    return env.from_collection(SCORES, type_info=api.Types.TUPLE([api.Types.STRING(), api.Types.INT()]))


def average_function(api):
    """An AggregateFunction computing the average of the second field (also used by tests/window)."""
    class Average(api.AggregateFunction):
        def create_accumulator(self):
            return 0, 0

        def add(self, value, accumulator):
            return accumulator[0] + value[1], accumulator[1] + 1

        def get_result(self, accumulator):
            return accumulator[0] / accumulator[1]

        def merge(self, a, b):
            return a[0] + b[0], a[1] + b[1]

    return Average()


@case("window_end_of_stream_reduce", "keyed GlobalWindows end-of-stream window, reduce: one sum per key after all "
      "input (PyFlink 2.3's batch mode emits one key twice with the Python trigger: streaming only)",
      modes=("streaming",), compare="multiset")
def window_end_of_stream_reduce(env, api):
    return api.end_of_stream(_scores(env, api).key_by(lambda r: r[0])).reduce(lambda a, b: (a[0], a[1] + b[1]))


@case("window_end_of_stream_aggregate", "keyed end-of-stream window, AggregateFunction (average) with a "
      "ProcessWindowFunction naming the key", modes=("streaming",), compare="multiset")
def window_end_of_stream_aggregate(env, api):
    class WithKey(api.ProcessWindowFunction):
        def process(self, key, context, elements):
            for average in elements:
                yield key, average

    return api.end_of_stream(_scores(env, api).key_by(lambda r: r[0])).aggregate(average_function(api), WithKey())


@case("window_end_of_stream_process", "keyed end-of-stream window, ProcessWindowFunction: the key's elements in "
      "input order and the final watermark (Flink's batch mode drops process windows here: streaming only)",
      modes=("streaming",), compare="multiset")
def window_end_of_stream_process(env, api):
    class Listing(api.ProcessWindowFunction):
        def process(self, key, context, elements):
            values = [e[1] for e in elements]
            yield key, values, context.current_watermark(), context.window().max_timestamp()
            if len(values) > 1:
                yield key, "max", max(values)

    return api.end_of_stream(_scores(env, api).key_by(lambda r: r[0])).process(Listing())


@case("window_end_of_stream_apply", "keyed end-of-stream window, WindowFunction.apply(key, window, inputs)",
      modes=("streaming",), compare="multiset")
def window_end_of_stream_apply(env, api):
    class Count(api.WindowFunction):
        def apply(self, key, window, inputs):
            return [(key, len(list(inputs)))]

    return api.end_of_stream(_scores(env, api).key_by(lambda r: r[0])).apply(Count())


@case("window_end_of_stream_reduce_then_window_function", "keyed end-of-stream reduce (max by score) handing its "
      "result to a WindowFunction", modes=("streaming",), compare="multiset")
def window_end_of_stream_reduce_then_window_function(env, api):
    class Label(api.WindowFunction):
        def apply(self, key, window, inputs):
            for best in inputs:
                yield "best of " + key, best[1]

    keyed = _scores(env, api).key_by(lambda r: r[0])
    return api.end_of_stream(keyed).reduce(lambda a, b: b if b[1] > a[1] else a, window_function=Label())


@case("window_all_end_of_stream_reduce", "window_all end-of-stream window: one reduce over the whole stream")
def window_all_end_of_stream_reduce(env, api):
    return api.end_of_stream_all(_scores(env, api)).reduce(lambda a, b: ("all", a[1] + b[1]))


@case("window_all_end_of_stream_process", "window_all end-of-stream window, ProcessAllWindowFunction over every "
      "element in input order", modes=("streaming",))
def window_all_end_of_stream_process(env, api):
    class Order(api.ProcessAllWindowFunction):
        def process(self, context, elements):
            yield "".join(e[0] for e in elements), sum(e[1] for e in elements)

    return api.end_of_stream_all(_scores(env, api)).process(Order())


@case("window_all_end_of_stream_aggregate", "window_all end-of-stream window, AggregateFunction (average)",
      modes=("streaming",))
def window_all_end_of_stream_aggregate(env, api):
    return api.end_of_stream_all(_scores(env, api)).aggregate(average_function(api))


@case("window_global_never_fires", "GlobalWindows.create(): its trigger never fires, not even at end of input")
def window_global_never_fires(env, api):
    return _scores(env, api).key_by(lambda r: r[0]).window(api.GlobalWindows.create()).reduce(
        lambda a, b: (a[0], a[1] + b[1]))


@case("window_all_global_never_fires", "window_all(GlobalWindows.create()).process: never fires")
def window_all_global_never_fires(env, api):
    class Everything(api.ProcessAllWindowFunction):
        def process(self, context, elements):
            yield len(list(elements))

    return _scores(env, api).window_all(api.GlobalWindows.create()).process(Everything())


@case("window_end_of_stream_then_keyed_sum", "an end-of-stream window reduce feeding a keyed sum by the first "
      "letter class (vowel or not): the sum's final value per class", modes=("streaming",),
      compare="last_per_key")
def window_end_of_stream_then_keyed_sum(env, api):
    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT()])
    totals = api.end_of_stream(_scores(env, api).key_by(lambda r: r[0])).reduce(lambda a, b: (a[0], a[1] + b[1]))
    by_class = totals.map(lambda r: ("vowel" if r[0] in "aeiou" else "consonant", r[1]), output_type=t)
    return by_class.key_by(lambda r: r[0]).sum(1)


# The event-time and two-input cases live in their own modules; importing them registers them here.
from conformance import datastream_event_time_cases as _event_time_cases  # noqa: E402,F401
from conformance import datastream_connect_cases as _connect_cases  # noqa: E402,F401
from conformance import datastream_broadcast_cases as _broadcast_cases  # noqa: E402,F401
