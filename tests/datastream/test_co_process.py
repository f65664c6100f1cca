"""Two-input operators (DataStream.connect) without Spark: the KeyedCoProcess kernel through the KernelHarness
(state shared by both inputs, timers, restarts, the batch algorithm), the non-keyed calls, and the API."""

from __future__ import annotations

import pytest

from changeflow.common import Types
from changeflow.datastream import (CoFlatMapFunction, CoMapFunction, CoProcessFunction, ConnectedStreams,
                                   KeyedCoProcessFunction, ListStateDescriptor, OutputTag, RuntimeContext,
                                   StreamExecutionEnvironment, TimeDomain, ValueStateDescriptor)
from changeflow.kernels.keyed import UserFunctionError
from changeflow.kernels.keyed.co_process import FIRST, SECOND, CoCalls, CoSide, KeyedCoProcess
from changeflow.kernels.keyed.records import VALUE, dumps, loads, record_frame, timestamp_of
from changeflow.kernels.order import STAMP, source_stamp
from changeflow.plan.stream_nodes import CoProcessNode
from changeflow.testing import KernelHarness


class Host:
    """A KernelHarness fed two inputs' records: ``process([(side, value, timestamp), ...])`` returns
    ``[(value, timestamp), ...]`` in stamp order; a fresh kernel object every call (as Spark's micro-batches)."""

    def __init__(self, function, kind="process", output_type=None) -> None:
        kernel = KeyedCoProcess(CoCalls(function, kind, output_type, "Co"), "Co", runtime_context=RuntimeContext)
        self.h = KernelHarness(kernel, [], restart_every_batch=True)
        self.position = 0

    def _frame(self, records):
        records = list(records)
        frame = record_frame([(FIRST if side == 1 else SECOND) + dumps(v, t) for side, v, t in records],
                             [source_stamp(self.position + i, side) for i, (side, _, _) in enumerate(records)],
                             [dumps(v[0]) for _, v, _ in records])
        self.position += len(records)
        return frame

    def process(self, records) -> list:
        return _decoded(self.h.process_frame(self._frame(records)))

    def bounded(self, records) -> list:
        # Batch output goes out in the order the kernel emits it (key by key), not by stamp.
        return [(loads(b), timestamp_of(b)) for b in self.h.kernel.process_bounded(self._frame(records))[VALUE]]

    def watermark(self, ms: int) -> list:
        return _rows(self.h.watermark(ms))

    def end_of_input(self) -> list:
        return _rows(self.h.end_of_input())

    def processing_time(self, ms: int) -> list:
        return _rows(self.h.set_processing_time(ms))


def _decoded(frame) -> list:
    if frame is None or not len(frame):
        return []
    return [(loads(b), timestamp_of(b)) for b in frame.sort_values(STAMP, kind="stable")[VALUE]]


def _rows(rows) -> list:
    return [(loads(row[0]), timestamp_of(row[0])) for row in sorted(rows, key=lambda r: r[1])]


class Balance(KeyedCoProcessFunction):
    """Purchases (first input) add, refunds (second input) subtract: one state per key for both."""

    def open(self, runtime_context):
        self.balance = runtime_context.get_state(ValueStateDescriptor("balance", Types.INT()))

    def _add(self, amount, ctx, side):
        self.balance.update((self.balance.value() or 0) + amount)
        return side, ctx.get_current_key(), self.balance.value()

    def process_element1(self, value, ctx):
        yield self._add(value[1], ctx, 1)

    def process_element2(self, value, ctx):
        yield self._add(-value[1], ctx, 2)


def test_keyed_state_is_shared_by_both_inputs_across_batches():
    host = Host(Balance())
    assert host.process([(1, ("a", 5), None), (2, ("a", 2), None), (1, ("b", 1), None)]) == [
        ((1, "a", 5), None), ((2, "a", 3), None), ((1, "b", 1), None)]
    # A new kernel object (restart_every_batch) over the same state: the balances go on.
    assert host.process([(2, ("b", 4), None), (1, ("a", 10), None)]) == [((2, "b", -3), None), ((1, "a", 13), None)]


class Remind(KeyedCoProcessFunction):
    """An event-time timer 10 ms after each first-input record; a second-input record cancels the key's timers
    and sets a processing-time timer at its value instead."""

    def open(self, runtime_context):
        self.pending = runtime_context.get_list_state(ListStateDescriptor("pending", Types.LONG()))

    def process_element1(self, value, ctx):
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)
        self.pending.add(ctx.timestamp() + 10)
        return []

    def process_element2(self, value, ctx):
        for t in self.pending.get():
            ctx.timer_service().delete_event_time_timer(t)
        self.pending.clear()
        ctx.timer_service().register_processing_time_timer(value[1])
        return []

    def on_timer(self, timestamp, ctx):
        domain = "event" if ctx.time_domain() == TimeDomain.EVENT_TIME else "processing"
        yield ctx.get_current_key(), domain, timestamp, ctx.timer_service().current_watermark()


def test_event_time_timers_fire_on_the_watermark_and_at_end_of_input():
    host = Host(Remind())
    assert host.process([(1, ("a", 0), 5), (1, ("b", 0), 7), (1, ("a", 0), 30)]) == []
    # An event-time timer's output carries its time; the watermark the function sees is the one firing it.
    assert host.watermark(16) == [(("a", "event", 15, 16), 15)]
    assert host.watermark(17) == [(("b", "event", 17, 17), 17)]
    assert host.end_of_input() == [(("a", "event", 40, (1 << 63) - 1), 40)]


def test_the_second_input_deletes_the_first_inputs_timers_of_its_key():
    host = Host(Remind())
    host.process([(1, ("a", 0), 5), (1, ("b", 0), 5)])
    assert host.process([(2, ("a", 100), None)]) == []
    assert host.watermark(50) == [(("b", "event", 15, 50), 15)]
    assert host.processing_time(99) == []
    assert host.processing_time(100) == [(("a", "processing", 100, 50), None)]


def test_batch_runs_each_key_then_its_event_then_its_processing_timers():
    class Both(Remind):
        def process_element1(self, value, ctx):
            yield from super().process_element1(value, ctx)
            yield "first", value

        def process_element2(self, value, ctx):
            ctx.timer_service().register_processing_time_timer(value[1])
            yield "second", value

    out = [v for v, _ in Host(Both()).bounded([(1, ("a", 0), 5), (2, ("b", 9), None), (2, ("a", 7), None)])]
    maximum = (1 << 63) - 1
    # A key's records of both inputs in stamp order, then its event-time timers (the watermark at its maximum),
    # then its processing-time ones.
    assert out == [("first", ("a", 0)), ("second", ("a", 7)), ("a", "event", 15, maximum),
                   ("a", "processing", 7, -maximum - 1), ("second", ("b", 9)), ("b", "processing", 9, -maximum - 1)]


def test_co_map_drops_none_and_co_flat_map_emits_every_value():
    class Tag(CoMapFunction):
        def map1(self, value):
            return "left", value[1]

        def map2(self, value):
            return None if value[1] < 0 else ("right", value[1])

    class Repeat(CoFlatMapFunction):
        def flat_map1(self, value):
            yield from [value[1]] * 2

        def flat_map2(self, value):
            return []

    records = [(1, ("k", 1), None), (2, ("k", -1), None), (2, ("k", 2), None)]
    assert [v for v, _ in Host(Tag(), "map").process(records)] == [("left", 1), ("right", 2)]
    assert [v for v, _ in Host(Repeat(), "flat_map").process(records)] == [1, 1]


def test_outputs_convert_to_the_declared_type_and_a_misfit_names_the_operator_record_and_key():
    class Text(CoMapFunction):
        def map1(self, value):
            return value[1]

        def map2(self, value):
            return str(value[1])

    host = Host(Text(), "map", Types.STRING())
    assert host.process([(2, ("k", 3), None)]) == [("3", None)]
    with pytest.raises(UserFunctionError, match=r"Co failed on record \('k', 3\) \(key 'k'\).*Types.STRING"):
        host.process([(1, ("k", 3), None)])


def test_a_record_without_its_inputs_mark_fails():
    kernel = KeyedCoProcess(CoCalls(Balance(), "process", None, "Co"), "Co", runtime_context=RuntimeContext)
    frame = record_frame([dumps(("a", 1))], [source_stamp(0, 0)], [dumps("a")])
    with pytest.raises(ValueError, match="without its input's mark"):
        KernelHarness(kernel, []).process_frame(frame)


def test_co_side_is_one_inputs_calls_as_a_process_function():
    class Split(CoProcessFunction):
        def process_element1(self, value, ctx):
            yield value

        def process_element2(self, value, ctx):
            yield -value

    calls = CoCalls(Split(), "process", None, "Split")
    assert CoSide(calls, 0).process_element(3, None) == [3] and CoSide(calls, 1).process_element(3, None) == [-3]


# --- the API ----------------------------------------------------------------------------------------------------

def _streams():
    env = StreamExecutionEnvironment.get_execution_environment()
    return (env.from_collection([("a", 1)], type_info=Types.TUPLE([Types.STRING(), Types.INT()])),
            env.from_collection([(2, "a")], type_info=Types.TUPLE([Types.INT(), Types.STRING()])))


class _Map(CoMapFunction):
    def map1(self, value):
        return value

    def map2(self, value):
        return value


class _KeyedProcess(KeyedCoProcessFunction):
    def process_element1(self, value, ctx):
        yield value

    def process_element2(self, value, ctx):
        yield value


def test_connect_builds_one_two_input_node_keyed_by_both_selectors():
    first, second = _streams()
    connected = first.connect(second)
    assert isinstance(connected, ConnectedStreams) and connected.stream1 is first and connected.stream2 is second
    unkeyed = connected.map(_Map(), output_type=Types.STRING())
    node = unkeyed._node
    assert isinstance(node, CoProcessNode) and not node.keyed and node.inputs == [first._node, second._node]
    assert (unkeyed.get_name(), unkeyed.get_type()) == ("Co-Map", Types.STRING())
    keyed = connected.key_by(lambda p: p[0], lambda r: r[1]).process(_KeyedProcess())
    assert keyed._node.keyed and keyed.get_name() == "Keyed Co-Process"
    assert keyed._node.first_key(("a", 1)) == "a" and keyed._node.second_key((2, "b")) == "b"
    assert connected.flat_map(_Flat()).get_name() == "Co-Flat Map"
    # PyFlink's rule: connected streams are keyed only when both are.
    half = first.key_by(lambda p: p[0]).connect(second)
    assert not half.map(_Map())._node.keyed


class _Flat(CoFlatMapFunction):
    def flat_map1(self, value):
        return [value]

    def flat_map2(self, value):
        return [value]


def test_connect_refusals_name_what_is_missing():
    first, second = _streams()
    with pytest.raises(TypeError, match="connect\\(\\) takes a DataStream or a BroadcastStream, got str"):
        first.connect("not a stream")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="The input function must be a CoMapFunction!"):
        first.connect(second).map(lambda v: v)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="The input must be a CoFlatMapFunction!"):
        first.connect(second).flat_map(_Map())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="The input must be a CoProcessFunction or KeyedCoProcessFunction!"):
        first.connect(second).process(_Map())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="KeyedCoProcessFunction needs keyed ConnectedStreams"):
        first.connect(second).process(_KeyedProcess())
    with pytest.raises(ValueError, match=r"side outputs come from process\(\) .*; Co-Map.* is not one"):
        first.connect(second).map(_Map()).get_side_output(OutputTag("x"))


# --- the planner ------------------------------------------------------------------------------------------------

def _planned(stream, flush=None):
    from changeflow.datastream.execution_plan import planned_job
    from changeflow.plan.optimizer import PlannerSettings

    return planned_job([stream._node], PlannerSettings(flush=flush))


def test_a_keyed_two_input_operator_keeps_a_streaming_job_streaming_and_an_unkeyed_one_does_not():
    from changeflow.datastream.window import GlobalWindows

    first, second = _streams()
    at_end = GlobalWindows.create_with_end_of_stream_trigger()

    def total(stream):
        return stream.key_by(lambda v: v[0]).window(at_end).reduce(lambda a, b: a)

    keyed = first.connect(second).key_by(lambda p: p[0], lambda r: r[1]).process(_KeyedProcess())
    job = _planned(total(keyed))
    # The keyed operator emits running values: the end-of-input window must read them to completion first.
    assert job.traits.streaming and job.outputs[0].input.traits.get("streaming_state")
    unkeyed = first.connect(second).map(_Map())
    assert not _planned(total(unkeyed)).traits.streaming  # stateless: the job may run as one batch job


def test_a_keyed_co_function_declaring_idempotent_output_buffers_under_a_flush_interval():
    from changeflow.plan.flush_policy import FlushPolicy

    class Latest(_KeyedProcess):
        def is_output_idempotent(self):
            return True

    first, second = _streams()
    connected = first.connect(second)
    policy = FlushPolicy(interval_ms=1000)
    keyed = connected.key_by(lambda p: p[0], lambda r: r[1]).process(Latest())
    assert _planned(keyed, policy).outputs[0].traits.get("buffers")
    assert not _planned(connected.process(_Unkeyed()), policy).outputs[0].traits.get("buffers")


class _Unkeyed(CoProcessFunction):
    def process_element1(self, value, ctx):
        yield value

    def process_element2(self, value, ctx):
        yield value

    def is_output_idempotent(self):
        return True
