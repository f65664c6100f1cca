"""DataStream conformance cases of two-input operators: ``a.connect(b)`` with ``map``, ``flat_map``, ``process``.

Registered into :data:`conformance.datastream_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_datastream.py`` like every DataStream case.

Flink reads the two inputs of a two-input operator in an order it does not
define (two sources, even at parallelism 1), and so does changeflow (its
micro-batches hold a few records of each). So the cases compare what does not
depend on that interleaving: a multiset of outputs (each output depends only on
its own record, or on state complete by the time it is emitted), or the number
of records and the final value per key of a running aggregate over both inputs
(``last_per_key``). In batch mode Flink sorts both keyed inputs by key and
interleaves a key's records of the two inputs; changeflow also processes a key's
records of both inputs together, in its own order.
"""

from __future__ import annotations

from conformance.datastream_cases import case

# First input: (customer, amount); second input: (amount, customer), another type.
PURCHASES = [("ann", 5), ("bob", 2), ("ann", 3), ("cid", 7), ("bob", 1), ("ann", 9)]
REFUNDS = [(4, "bob"), (1, "ann"), (6, "dan"), (2, "bob")]


def _inputs(env, api):
    t = api.Types
    first = env.from_collection(PURCHASES, type_info=t.TUPLE([t.STRING(), t.INT()]))
    second = env.from_collection(REFUNDS, type_info=t.TUPLE([t.INT(), t.STRING()]))
    return first, second


@case("connect_keyed_state_sum", "a KeyedCoProcessFunction keyed by customer on both inputs (key selectors of "
      "two types): one ValueState per key updated by both, the running balance after each record",
      compare="last_per_key")
def connect_keyed_state_sum(env, api):
    class Balance(api.KeyedCoProcessFunction):
        def open(self, runtime_context):
            self.balance = runtime_context.get_state(api.ValueStateDescriptor("balance", api.Types.INT()))

        def _add(self, amount, ctx):
            self.balance.update((self.balance.value() or 0) + amount)
            return ctx.get_current_key(), self.balance.value()

        def process_element1(self, value, ctx):
            yield self._add(value[1], ctx)

        def process_element2(self, value, ctx):
            yield self._add(-value[0], ctx)

    first, second = _inputs(env, api)
    return first.connect(second).key_by(lambda p: p[0], lambda r: r[1]).process(Balance())


@case("connect_keyed_co_map_count", "keyed ConnectedStreams.map with a CoMapFunction counting each key's records "
      "of both inputs in keyed state (open() asks the runtime context)", compare="last_per_key")
def connect_keyed_co_map_count(env, api):
    class Count(api.CoMapFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(api.ValueStateDescriptor("count", api.Types.INT()))

        def _next(self, key):
            self.count.update((self.count.value() or 0) + 1)
            return key, self.count.value()

        def map1(self, value):
            return self._next(value[0])

        def map2(self, value):
            return self._next(value[1])

    first, second = _inputs(env, api)
    return first.connect(second).key_by(lambda p: p[0], lambda r: r[1]).map(Count())


@case("connect_enrichment", "a join-like enrichment: purchases wait in ListState for their customer's record "
      "(ValueState), are emitted enriched when it comes, and those still waiting at the end of input go out "
      "unmatched from an event-time timer (fired by the final watermark). Streaming only: in batch mode Flink 2.3 "
      "drops the unmatched purchase (docs/differences.md); tests/datastream/test_co_process_spark.py checks that "
      "changeflow's batch result is this streaming result", modes=("streaming",), compare="multiset")
def connect_enrichment(env, api):
    customers = [("ann", "Ann Arbor"), ("bob", "Boston"), ("dan", "Dallas")]

    class Enrich(api.KeyedCoProcessFunction):
        def open(self, runtime_context):
            self.city = runtime_context.get_state(api.ValueStateDescriptor("city", api.Types.STRING()))
            self.waiting = runtime_context.get_list_state(api.ListStateDescriptor("waiting", api.Types.INT()))

        def process_element1(self, value, ctx):
            if self.city.value() is not None:
                yield value[0], value[1], self.city.value()
            else:
                self.waiting.add(value[1])
                ctx.timer_service().register_event_time_timer(1 << 40)

        def process_element2(self, value, ctx):
            self.city.update(value[1])
            for amount in self.waiting.get():
                yield value[0], amount, value[1]
            self.waiting.clear()

        def on_timer(self, timestamp, ctx):
            for amount in self.waiting.get():
                yield ctx.get_current_key(), amount, "unmatched"
            self.waiting.clear()

    t = api.Types
    purchases = env.from_collection(PURCHASES, type_info=t.TUPLE([t.STRING(), t.INT()]))
    cities = env.from_collection(customers, type_info=t.TUPLE([t.STRING(), t.STRING()]))
    return purchases.connect(cities).key_by(lambda p: p[0], lambda c: c[0]).process(Enrich())


@case("connect_event_time_timers", "both inputs timestamped (watermarks 5 ms behind each); each record sets an "
      "event-time timer 3 ms after it; on_timer sums the key's values of both inputs up to the timer's time, "
      "complete only if the timer waits for the slower input's watermark (the minimum, as Flink)",
      modes=("streaming",), compare="multiset")
def connect_event_time_timers(env, api):
    class ByTime(api.TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1]

    class SumUpTo(api.KeyedCoProcessFunction):
        def open(self, runtime_context):
            self.seen = runtime_context.get_list_state(api.ListStateDescriptor(
                "seen", api.Types.TUPLE([api.Types.LONG(), api.Types.INT()])))

        def _record(self, value, ctx, side):
            self.seen.add((ctx.timestamp(), value[2]))
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 3)
            return side, value[0], ctx.timestamp()

        def process_element1(self, value, ctx):
            yield self._record(value, ctx, "first")

        def process_element2(self, value, ctx):
            yield self._record(value, ctx, "second")

        def on_timer(self, timestamp, ctx):
            total = sum(v for t, v in self.seen.get() if t <= timestamp)
            yield "timer", ctx.get_current_key(), timestamp, total

    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT(), api.Types.INT()])
    strategy = api.WatermarkStrategy.for_bounded_out_of_orderness(api.Duration.of_millis(5)) \
        .with_timestamp_assigner(ByTime())
    # Out of order by less than 5 ms on each input; the second input's times run behind the first's.
    first = env.from_collection([("a", 2, 1), ("b", 4, 2), ("a", 1, 4), ("a", 10, 8), ("b", 14, 16),
                                 ("a", 12, 32), ("a", 30, 64), ("b", 41, 128)], type_info=t)
    second = env.from_collection([("a", 1, 100), ("b", 3, 200), ("a", 9, 300), ("a", 7, 400), ("b", 20, 500),
                                  ("a", 31, 600)], type_info=t)
    return first.assign_timestamps_and_watermarks(strategy).connect(
        second.assign_timestamps_and_watermarks(strategy)).key_by(lambda r: r[0], lambda r: r[0]).process(SumUpTo())


@case("connect_co_map", "ConnectedStreams.map without keys: a CoMapFunction over words and numbers; a None "
      "result (a negative number) is dropped, as PyFlink's", compare="multiset")
def connect_co_map(env, api):
    class Describe(api.CoMapFunction):
        def map1(self, value):
            return "word", value.upper()

        def map2(self, value):
            return None if value < 0 else ("number", str(value * 2))

    t = api.Types
    words = env.from_collection(["ant", "bee", "cat"], type_info=t.STRING())
    numbers = env.from_collection([1, -2, 3], type_info=t.INT())
    return words.connect(numbers).map(Describe(), output_type=t.TUPLE([t.STRING(), t.STRING()]))


@case("connect_co_flat_map", "ConnectedStreams.flat_map without keys: sentences split into words, a number n "
      "into n copies of itself", compare="multiset")
def connect_co_flat_map(env, api):
    class Expand(api.CoFlatMapFunction):
        def flat_map1(self, value):
            yield from value.split()

        def flat_map2(self, value):
            return [str(value)] * value

    t = api.Types
    sentences = env.from_collection(["to be or", "not"], type_info=t.STRING())
    numbers = env.from_collection([2, 0, 1], type_info=t.INT())
    return sentences.connect(numbers).flat_map(Expand(), output_type=t.STRING())


@case("connect_co_process_side_output", "a CoProcessFunction without keys: small values of either input to a side "
      "output (yield tag, value), the rest to the main output; main and side output unioned", compare="multiset")
def connect_co_process_side_output(env, api):
    small = api.OutputTag("small", api.Types.INT())

    class Split(api.CoProcessFunction):
        def process_element1(self, value, ctx):
            yield (small, value) if value < 5 else value * 10

        def process_element2(self, value, ctx):
            yield (small, len(value)) if len(value) < 5 else len(value) * 100

    t = api.Types
    numbers = env.from_collection([1, 7, 3, 9], type_info=t.INT())
    words = env.from_collection(["tiny", "enormous"], type_info=t.STRING())
    main = numbers.connect(words).process(Split(), output_type=t.INT())
    return main.map(lambda v: ("main", v), output_type=t.TUPLE([t.STRING(), t.INT()])).union(
        main.get_side_output(small).map(lambda v: ("side", v), output_type=t.TUPLE([t.STRING(), t.INT()])))


@case("connect_keyed_co_process_side_output", "a KeyedCoProcessFunction's side outputs: each input's values "
      "above a threshold go to a side output, the rest to a running total per key; main and side output "
      "unioned", compare="multiset")
def connect_keyed_co_process_side_output(env, api):
    big = api.OutputTag("big", api.Types.TUPLE([api.Types.STRING(), api.Types.INT()]))

    class Total(api.KeyedCoProcessFunction):
        def open(self, runtime_context):
            self.total = runtime_context.get_state(api.ValueStateDescriptor("total", api.Types.INT()))

        def _add(self, amount, ctx, limit):
            if amount > limit:
                yield big, (ctx.get_current_key(), amount)
                return
            self.total.update((self.total.value() or 0) + amount)
            yield f"{ctx.get_current_key()} total {self.total.value()}"

        def process_element1(self, value, ctx):
            yield from self._add(value[1], ctx, 5)

        def process_element2(self, value, ctx):
            yield from self._add(value[1] * 10, ctx, 50)

    t = api.Types.TUPLE([api.Types.STRING(), api.Types.INT()])
    first = env.from_collection([("a", 1), ("b", 9), ("a", 4), ("b", 2)], type_info=t)
    second = env.from_collection([("a", 3), ("b", 8), ("c", 1)], type_info=t)
    main = first.connect(second).key_by(lambda r: r[0], lambda r: r[0]).process(
        Total(), output_type=api.Types.STRING())
    return main.union(main.get_side_output(big).map(lambda r: f"{r[0]} big {r[1]}",
                                                     output_type=api.Types.STRING()))
