"""The broadcast state pattern without Spark: the BroadcastProcess kernel through the KernelHarness (broadcast state
kept in the state store across restarts, broadcast records first in a batch, one copy emitting, timers reading the
rules, the batch algorithm), the local step's fan-out to every bucket, and the API's surface and refusals."""

from __future__ import annotations

import json

import pytest

from changeflow.common import Types
from changeflow.datastream import (BroadcastConnectedStream, BroadcastProcessFunction, BroadcastStream,
                                   KeyedBroadcastProcessFunction, MapStateDescriptor, OutputTag, RuntimeContext,
                                   StreamExecutionEnvironment, ValueStateDescriptor)
from changeflow.datastream.state import BroadcastState, ReadOnlyBroadcastState, broadcast_state_for
from changeflow.kernels.chain import ChainRunner
from changeflow.kernels.keyed import UserFunctionError
from changeflow.kernels.keyed.broadcast import (QUIET, BroadcastCalls, BroadcastChains, BroadcastProcess, SpreadKey,
                                                is_routing_key, routing_key)
from changeflow.kernels.keyed.co_process import FIRST, SECOND
from changeflow.kernels.keyed.records import KEY, VALUE, dumps, loads, record_frame
from changeflow.kernels.order import STAMP, source_stamp
from changeflow.plan.stream_nodes import CoProcessNode, Op
from changeflow.testing import KernelHarness

LIMITS = MapStateDescriptor("limits", Types.STRING(), Types.INT())
OVER = OutputTag("over", Types.INT())


class Check(KeyedBroadcastProcessFunction):
    """Each key's running total checked against the broadcast limit "max"; an event-time timer reports the final."""

    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.INT()))

    def process_element(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_event_time_timer(100)
        limit = ctx.get_broadcast_state(LIMITS).get("max")
        if limit is not None and value[1] > limit:
            yield OVER, value[1]
        yield ctx.get_current_key(), self.total.value(), limit

    def process_broadcast_element(self, value, ctx):
        state = ctx.get_broadcast_state(LIMITS)
        before = state.get(value[0])
        state.put(value[0], value[1])
        yield "rule", value[0], before, value[1]

    def on_timer(self, timestamp, ctx):
        yield "end", ctx.get_current_key(), self.total.value(), sorted(ctx.get_broadcast_state(LIMITS).items())


class Host:
    """A KernelHarness for one bucket, a fresh kernel object every call (as Spark's micro-batches).
    ``process([(side, value), ...])``: side 1 the keyed stream (keyed by ``value[0]``), 2 the broadcast stream;
    ``quiet`` sends the broadcast records as a copy that does not emit (another bucket's)."""

    def __init__(self, function, keyed=True, side_tags=None) -> None:
        calls = BroadcastCalls(function, None, "Rules", broadcast_state_for, keyed=keyed)
        self.kernel = BroadcastProcess(calls, "Rules", runtime_context=RuntimeContext, side_tags=side_tags)
        self.h = KernelHarness(self.kernel, [], restart_every_batch=True)
        self.position = 0

    def frame(self, records, quiet=False):
        records = list(records)
        mark = QUIET if quiet else SECOND
        frame = record_frame([(FIRST if side == 1 else mark) + dumps(v) for side, v in records],
                             [source_stamp(self.position + i, side) for i, (side, _) in enumerate(records)],
                             [dumps(v[0]) if side == 1 else routing_key(0) for side, v in records])
        self.position += len(records)
        return frame

    def process(self, records, quiet=False) -> list:
        out = self.h.process_frame(self.frame(records, quiet))
        # In the order the kernel emits (a batch's broadcast records first); outputs keep their records' stamps.
        return [] if out is None or not len(out) else [loads(b) for b in out[VALUE]]

    def end_of_input(self) -> list:
        return [loads(row[0]) for row in sorted(self.h.end_of_input(), key=lambda r: r[1])]


def test_a_batchs_rules_apply_before_its_records_and_survive_restarts():
    host = Host(Check())
    # The rule comes after the record in the batch; the kernel applies it first (documented order).
    assert host.process([(1, ("a", 5)), (2, ("max", 4))]) == [("rule", "max", None, 4), ("a", 5, 4)]
    # A new kernel object and the state restored from the snapshot: the rule and the key's total are kept.
    assert host.process([(1, ("a", 3)), (1, ("b", 9))]) == [("a", 8, 4), ("b", 9, 4)]
    assert host.process([(2, ("max", 10)), (1, ("b", 1))]) == [("rule", "max", 4, 10), ("b", 10, 10)]
    # The event-time timers read the final rules at the end of input.
    assert host.end_of_input() == [("end", "a", 8, [("max", 10)]), ("end", "b", 10, [("max", 10)])]


def test_a_quiet_copy_updates_its_buckets_state_without_emitting():
    host = Host(Check())
    assert host.process([(2, ("max", 1))], quiet=True) == []
    assert host.process([(1, ("a", 2))]) == [("a", 2, 1)]


def test_side_outputs_are_marked_and_dropped_when_unread():
    read = Host(Check(), side_tags={"over": Types.INT()})
    frame = read.h.process_frame(read.frame([(2, ("max", 4)), (1, ("a", 5))]))
    assert sum(v.startswith(b"S") for v in frame[VALUE]) == 1
    unread = Host(Check())
    assert unread.process([(2, ("max", 4)), (1, ("a", 5))]) == [("rule", "max", None, 4), ("a", 5, 4)]


def test_batch_algorithm_reads_all_rules_first_and_fires_each_keys_timers_after_it():
    host = Host(Check())
    frame = host.frame([(1, ("a", 5)), (1, ("b", 1)), (2, ("max", 4)), (1, ("a", 1)), (2, ("max", 6))])
    # A second (quiet) copy of the same rule records, as two partitions' copies meeting in one: applied once.
    copies = host.frame([(2, ("max", 4)), (2, ("max", 6))], quiet=True)
    copies[STAMP] = frame.loc[frame[VALUE].map(lambda v: v[:1] == SECOND), STAMP].to_numpy()
    import pandas as pd

    out = [loads(v) for v in host.kernel.process_bounded(pd.concat([copies, frame], ignore_index=True))[VALUE]]
    assert out == [("rule", "max", None, 4), ("rule", "max", 4, 6), ("a", 5, 6), ("a", 6, 6),
                   ("end", "a", 6, [("max", 6)]), ("b", 1, 6), ("end", "b", 1, [("max", 6)])]


class Reader(BroadcastProcessFunction):
    """Tries what process_element may not: write the broadcast state."""

    def process_element(self, value, ctx):
        state = ctx.get_broadcast_state(LIMITS)
        assert isinstance(state, ReadOnlyBroadcastState) and not isinstance(state, BroadcastState)
        state.put("max", 1)  # PyFlink's read-only state has no put: AttributeError
        return []

    def process_broadcast_element(self, value, ctx):
        return []


def test_the_read_only_view_has_no_put_and_refuses_clear():
    with pytest.raises(UserFunctionError, match="AttributeError"):
        Host(Reader(), keyed=False).process([(1, ("a", 1))])
    view = broadcast_state_for(LIMITS, lambda: {"limits": {"max": 3}}, "Op", writable=False)
    assert (view.get("max"), view.contains("max"), view.items(), view.is_empty(), list(view), view["max"],
            "max" in view) == (3, True, [("max", 3)], False, ["max"], 3, True)
    with pytest.raises(AttributeError, match="read-only"):
        view.remove("max")
    with pytest.raises(RuntimeError, match="read-only"):
        view.clear()
    with pytest.raises(TypeError, match="MapStateDescriptor"):
        broadcast_state_for(ValueStateDescriptor("v"), dict, "Op", writable=True)


class _UsesKeyedState:
    """Asks for keyed state in open() and writes it from process_broadcast_element."""

    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value, ctx):
        return []

    def process_broadcast_element(self, value, ctx):
        self.total.update(1)
        return []


class KeyedInBroadcast(_UsesKeyedState, KeyedBroadcastProcessFunction):
    pass


class KeyedWithoutKeys(_UsesKeyedState, BroadcastProcessFunction):
    pass


def test_keyed_state_is_refused_where_there_is_no_key():
    with pytest.raises(UserFunctionError, match="keyed state is not available in process_broadcast_element"):
        Host(KeyedInBroadcast()).process([(2, ("max", 1))])
    with pytest.raises(RuntimeError, match="only available to functions applied on a KeyedStream"):
        Host(KeyedWithoutKeys(), keyed=False).process([(1, ("a", 1))])


def test_the_local_step_copies_each_broadcast_record_to_every_route():
    first = ChainRunner([Op("key", lambda v: v[0], "first key")])
    second = ChainRunner([Op("key", SpreadKey(), "spread")])
    routes = [routing_key(7), routing_key(3)]
    frame = record_frame([FIRST + dumps(("a", 1)), SECOND + dumps(("max", 2))], [source_stamp(0, 0),
                                                                                 source_stamp(0, 1)])
    out = BroadcastChains(first, second, routes).process(frame)
    rows = sorted((k, v[:1], loads(v[1:])) for k, v in zip(out[KEY], out[VALUE], strict=True))
    assert rows == sorted([(dumps("a"), FIRST, ("a", 1)), (routes[0], SECOND, ("max", 2)),
                           (routes[1], QUIET, ("max", 2))])
    assert is_routing_key(routes[0]) and not is_routing_key(dumps("a"))


def test_broadcast_builds_a_broadcast_node_and_refuses_as_pyflink():
    env = StreamExecutionEnvironment.get_execution_environment()
    t = Types.TUPLE([Types.STRING(), Types.INT()])
    stream, rules = env.from_collection([("a", 1)], type_info=t), env.from_collection([("max", 1)], type_info=t)
    assert stream.broadcast()._node is stream._node  # broadcast partitioning: the same records
    broadcast = rules.broadcast(LIMITS)
    assert isinstance(broadcast, BroadcastStream) and broadcast.broadcast_state_descriptors == [LIMITS]
    connected = stream.key_by(lambda r: r[0]).connect(broadcast)
    assert isinstance(connected, BroadcastConnectedStream)
    node = connected.process(Check())._node
    assert isinstance(node, CoProcessNode) and (node.kind, node.keyed, node.name) == (
        "broadcast", True, "Keyed-Co-Process-Broadcast")
    assert stream.connect(broadcast).process(Reader()).get_name() == "Co-Process-Broadcast"
    connected.process(Check()).print()
    stream.connect(broadcast).process(Reader()).print()
    plan = {n["type"]: [p["ship_strategy"] for p in n.get("predecessors", [])]
            for n in json.loads(env.get_execution_plan())["nodes"]}
    # As PyFlink 2.3 prints them (recorded): the broadcast input is BROADCAST, the other HASH when keyed.
    assert (plan["Keyed-Co-Process-Broadcast"], plan["Co-Process-Broadcast"]) == (["HASH", "BROADCAST"],
                                                                                  ["FORWARD", "BROADCAST"])
    with pytest.raises(TypeError, match="BroadcastProcessFunction should be applied to non-keyed DataStream"):
        connected.process(Reader())
    with pytest.raises(TypeError, match="KeyedBroadcastProcessFunction should be applied to keyed DataStream"):
        stream.connect(broadcast).process(Check())
    with pytest.raises(TypeError, match="broadcast_state_descriptor must be MapStateDescriptor"):
        rules.broadcast(ValueStateDescriptor("v"))
    with pytest.raises(TypeError, match="Cannot override partitioning for KeyedStream."):
        rules.key_by(lambda r: r[0]).broadcast(LIMITS)
