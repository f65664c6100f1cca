"""DataStream conformance cases of the broadcast state pattern: ``stream.connect(rules.broadcast(descriptor))``.

Registered into :data:`conformance.datastream_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_datastream.py`` like every DataStream case.

Flink's batch execution reads the whole broadcast input before the other one, and
changeflow applies a micro-batch's broadcast records before its other records (in
batch mode the whole input is one batch): so in batch mode every record sees the
final rules in both. In streaming mode Flink interleaves the two inputs as they
arrive, so the streaming cases compare only what does not depend on that: the
broadcast side's own outputs (one input, in its order), the keyed side's keyed
state, and what event-time timers firing at the end of input (after both inputs)
read from the broadcast state.
"""

from __future__ import annotations

from conformance.datastream_cases import case

PURCHASES = [("ann", 5), ("bob", 2), ("ann", 3), ("cid", 7), ("bob", 1), ("ann", 9)]
# (rule, limit): "max" set, then raised; "min" set then removed (a limit of 0; Flink's INT field takes no None).
LIMITS = [("max", 6), ("min", 2), ("max", 10), ("min", 0)]


def _and_side_output(main, tag, describe, api):
    """``main`` (a stream of strings) and its side output ``tag``'s records described as strings, unioned."""
    return main.union(main.get_side_output(tag).map(describe, output_type=api.Types.STRING()))


@case("broadcast_keyed_rules_timers", "a KeyedBroadcastProcessFunction: limits broadcast (one raised, one removed "
      "mid-stream, each update reported by process_broadcast_element with the value it replaced); purchases keyed by "
      "customer keep a running total in ValueState and set an event-time timer that fires at the end of input and "
      "checks the total against the final limits; the purchases above the final max go to a side output from "
      "on_timer; main and side output unioned. Streaming only: in batch mode Flink 2.3 emits one key's timer output "
      "twice and drops on_timer's side output (docs/differences.md); tests/datastream/test_broadcast_spark.py checks "
      "that changeflow's batch result is this streaming result", modes=("streaming",), compare="multiset")
def broadcast_keyed_rules_timers(env, api):
    limits = api.MapStateDescriptor("limits", api.Types.STRING(), api.Types.INT())
    over = api.OutputTag("over", api.Types.TUPLE([api.Types.STRING(), api.Types.INT()]))

    class Limits(api.KeyedBroadcastProcessFunction):
        def open(self, runtime_context):
            self.total = runtime_context.get_state(api.ValueStateDescriptor("total", api.Types.INT()))
            self.items = runtime_context.get_list_state(api.ListStateDescriptor("items", api.Types.INT()))

        def process_element(self, value, ctx):
            self.total.update((self.total.value() or 0) + value[1])
            self.items.add(value[1])
            ctx.timer_service().register_event_time_timer(1 << 40)
            yield f"{ctx.get_current_key()} total {self.total.value()}"

        def process_broadcast_element(self, value, ctx):
            state = ctx.get_broadcast_state(limits)
            before = state.get(value[0])
            if value[1] == 0:
                state.remove(value[0])
            else:
                state.put(value[0], value[1])
            yield f"{value[0]}: {before} -> {value[1]} ({len(list(state.keys()))} rules)"

        def on_timer(self, timestamp, ctx):
            state = ctx.get_broadcast_state(limits)
            top, bottom = state.get("max"), state.get("min")
            key = ctx.get_current_key()
            yield f"{key} at end: {self.total.value()} max {top} min {bottom} rules {sorted(state.keys())}"
            for item in self.items.get():
                if top is not None and item > top // 2:
                    yield over, (key, item)

    t = api.Types
    purchases = env.from_collection(PURCHASES, type_info=t.TUPLE([t.STRING(), t.INT()]))
    rules = env.from_collection(LIMITS, type_info=t.TUPLE([t.STRING(), t.INT()]))
    main = purchases.key_by(lambda p: p[0]).connect(rules.broadcast(limits)).process(Limits(),
                                                                                     output_type=t.STRING())
    return _and_side_output(main, over, lambda r: f"{r[0]} over: {r[1]}", api)


@case("broadcast_keyed_batch_limits", "a KeyedBroadcastProcessFunction in batch mode: every purchase checked "
      "against the final limits (Flink's batch execution reads the broadcast input first) and counted per key in "
      "ValueState", modes=("batch",), compare="multiset")
def broadcast_keyed_batch_limits(env, api):
    limits = api.MapStateDescriptor("limits", api.Types.STRING(), api.Types.INT())

    class Check(api.KeyedBroadcastProcessFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(api.ValueStateDescriptor("count", api.Types.INT()))

        def process_element(self, value, ctx):
            self.count.update((self.count.value() or 0) + 1)
            top = ctx.get_broadcast_state(limits).get("max")
            yield f"{ctx.get_current_key()} #{self.count.value()}: {value[1]} within {top}: {value[1] <= top}"

        def process_broadcast_element(self, value, ctx):
            ctx.get_broadcast_state(limits).put(value[0], value[1])
            return []

    t = api.Types
    purchases = env.from_collection(PURCHASES, type_info=t.TUPLE([t.STRING(), t.INT()]))
    rules = env.from_collection([("max", 4), ("max", 6)], type_info=t.TUPLE([t.STRING(), t.INT()]))
    return purchases.key_by(lambda p: p[0]).connect(rules.broadcast(limits)).process(Check(), output_type=t.STRING())


@case("broadcast_unkeyed_streaming_counts", "a BroadcastProcessFunction in streaming mode: the broadcast side counts "
      "its updates in the broadcast state and reports each; the other side's outputs do not read the state (its "
      "interleaving with the broadcast input is Flink's to choose)", modes=("streaming",), compare="multiset")
def broadcast_unkeyed_streaming_counts(env, api):
    counts = api.MapStateDescriptor("counts", api.Types.STRING(), api.Types.INT())

    class Count(api.BroadcastProcessFunction):
        def process_element(self, value, ctx):
            yield f"value {value * 10}"

        def process_broadcast_element(self, value, ctx):
            state = ctx.get_broadcast_state(counts)
            state.put(value, (state.get(value) or 0) + 1)
            yield f"{value} seen {state.get(value)} times"

    t = api.Types
    numbers = env.from_collection([1, 2, 3], type_info=t.INT())
    names = env.from_collection(["x", "y", "x", "x"], type_info=t.STRING())
    return numbers.connect(names.broadcast(counts)).process(Count(), output_type=t.STRING())


@case("broadcast_unkeyed_dictionary", "a BroadcastProcessFunction over a stream without keys: a dictionary "
      "broadcast (one entry replaced, one removed, put_all of two), words translated with the final entries "
      "(Flink's batch execution reads the broadcast input first), words without an entry to a side output; "
      "the read-only view's contains/is_empty/items", modes=("batch",), compare="multiset")
def broadcast_unkeyed_dictionary(env, api):
    words_state = api.MapStateDescriptor("words", api.Types.STRING(), api.Types.STRING())
    unknown = api.OutputTag("unknown", api.Types.STRING())

    class Translate(api.BroadcastProcessFunction):
        def process_element(self, value, ctx):
            state = ctx.get_broadcast_state(words_state)
            if state.contains(value):
                yield f"{value} -> {state.get(value)} ({len(sorted(state.items()))} entries, {state.is_empty()})"
            else:
                yield unknown, value

        def process_broadcast_element(self, value, ctx):
            state = ctx.get_broadcast_state(words_state)
            if value[0] == "*":
                # Pairs: PyFlink 2.3's put_all iterates its argument as pairs, so a dict fails there.
                state.put_all([("dog", "chien"), ("sun", "soleil")])
            elif value[1] == "":
                state.remove(value[0])
            else:
                state.put(value[0], value[1])
            return []

    t = api.Types
    words = env.from_collection(["cat", "dog", "sun", "moon", "cat"], type_info=t.STRING())
    entries = env.from_collection([("cat", "chat"), ("moon", "lune"), ("cat", "minou"), ("moon", ""), ("*", "")],
                                  type_info=t.TUPLE([t.STRING(), t.STRING()]))
    main = words.connect(entries.broadcast(words_state)).process(Translate(), output_type=t.STRING())
    return _and_side_output(main, unknown, lambda w: f"unknown {w}", api)
