"""Side outputs of a KeyedProcessFunction and a KeyedCoProcessFunction without Spark: the kernel's marked
records (from process_element and on_timer, streaming and batch, across a restart), types, the planner."""

import pytest

from changeflow.common import Types
from changeflow.datastream import (KeyedCoProcessFunction, KeyedProcessFunction, OutputTag, RuntimeExecutionMode,
                                   StreamExecutionEnvironment, ValueStateDescriptor)
from changeflow.datastream.functions import RuntimeContext
from changeflow.kernels.keyed import KeyedProcess
from changeflow.kernels.keyed.co_process import FIRST, SECOND, CoCalls, KeyedCoProcess
from changeflow.kernels.keyed.records import SIDE, VALUE, dumps, loads, record_frame, side_mark, timestamp_of
from changeflow.kernels.order import STAMP, source_stamp
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.testing import KernelHarness

from kernel_helpers import records

SMALL = OutputTag("small", Types.STRING())
NOISE = OutputTag("noise", Types.INT())


class Split(KeyedProcessFunction):
    """Small values to the side output ``small`` (and every value to ``noise``), the key's running total to the
    main output; an event-time timer per record yields to both outputs."""

    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.INT()))

    def process_element(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_event_time_timer(value[1] * 10)
        yield NOISE, value[1]
        if value[1] < 5:
            yield SMALL, f"{ctx.get_current_key()} small {value[1]}"
        else:
            yield ctx.get_current_key(), self.total.value()

    def on_timer(self, timestamp, ctx):
        yield SMALL, f"{ctx.get_current_key()} timer {timestamp}"
        yield ctx.get_current_key(), -self.total.value()


def split(frame, tag_id="small"):
    """(main values, side values of ``tag_id``, whether every record is one of the two), in stamp order."""
    mark = side_mark(tag_id)
    blobs = list(frame.sort_values(STAMP, kind="stable")[VALUE])
    main = [loads(b) for b in blobs if b[:1] != SIDE]
    side = [loads(b[len(mark):]) for b in blobs if b.startswith(mark)]
    return main, side, len(main) + len(side) == len(blobs)


def _kernel(with_keys=False):
    return KeyedProcess(Split(), "Split", with_keys=with_keys, runtime_context=RuntimeContext,
                        side_tags={"small": Types.STRING()})


def test_side_output_records_are_marked_in_the_one_output_and_an_unread_side_output_is_dropped():
    out = _kernel().process(records([("a", 1), ("b", 7), ("a", 9), ("a", 2)]), InMemoryKeyedState())
    main, side, only_these = split(out)
    assert main == [("b", 7), ("a", 10)]
    assert side == ["a small 1", "a small 2"]
    assert only_these  # "noise" is read by nobody: its values are not emitted


def test_side_output_from_on_timer_and_across_a_restart():
    harness = KernelHarness(_kernel(), [VALUE])
    harness.process_frame(records([("a", 1), ("b", 7)]))
    harness.restart()  # a new kernel object over the same state, as every Spark micro-batch
    harness.process_frame(records([("a", 3)], start=2))
    harness.restart()
    fired = harness.kernel.on_watermark(30, harness.state)
    main, side, _ = split(fired)
    assert side == ["a timer 10", "a timer 30"]
    assert main == [("a", -4), ("a", -4)]
    # An event-time timer's outputs carry its time, side outputs as the main one.
    assert sorted(timestamp_of(b[len(side_mark("small")):]) for b in fired[VALUE] if b[:1] == SIDE) == [10, 30]
    later = split(harness.kernel.on_watermark(100, harness.state))
    assert later[:2] == ([("b", -7)], ["b timer 70"])


def test_batch_mode_emits_the_same_side_output_with_each_keys_timers_after_its_input():
    main, side, _ = split(_kernel().process_bounded(records([("a", 1), ("b", 7), ("a", 9)])))
    # Batch mode defines the order within a key only: its input's outputs, then its timers' in time order.
    assert [v for v in main if v[0] == "a"] == [("a", 10), ("a", -10), ("a", -10)]
    assert [v for v in main if v[0] == "b"] == [("b", 7), ("b", -7)]
    assert [v for v in side if v.startswith("a")] == ["a small 1", "a timer 10", "a timer 90"]
    assert [v for v in side if v.startswith("b")] == ["b timer 70"]


def test_a_side_value_is_converted_to_its_tags_type_and_a_misfit_names_the_side_output():
    class Bad(KeyedProcessFunction):
        def process_element(self, value, ctx):
            yield OutputTag("n", Types.INT()), "not a number"

    kernel = KeyedProcess(Bad(), "Bad", runtime_context=RuntimeContext, side_tags={"n": Types.INT()})
    with pytest.raises(Exception, match=r"the side output 'n' of Bad is declared Types.INT\(\)"):
        kernel.process(records([("a", 1)]), InMemoryKeyedState())


class Big(KeyedCoProcessFunction):
    def process_element1(self, value, ctx):
        yield (SMALL, f"first {value}") if value < 5 else value

    def process_element2(self, value, ctx):
        yield (SMALL, f"second {value}") if value < 5 else value * 10


def test_keyed_co_process_side_outputs_skip_the_main_outputs_type_conversion():
    calls = CoCalls(Big(), "process", Types.LONG(), "Big")
    kernel = KeyedCoProcess(calls, "Big", runtime_context=RuntimeContext, side_tags={"small": Types.STRING()})
    batch = record_frame([FIRST + dumps(1), SECOND + dumps(6), FIRST + dumps(8), SECOND + dumps(2)],
                         [source_stamp(i, 0) for i in range(4)], [dumps("k")] * 4)
    main, side, _ = split(kernel.process(batch, InMemoryKeyedState()))
    assert (main, side) == ([60, 8], ["first 1", "second 2"])


def _env():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    return env


def test_get_side_output_of_keyed_operators_and_the_flush_buffer():
    from changeflow.datastream.execution_plan import planned_job
    from changeflow.plan.flush_policy import FlushPolicy
    from changeflow.plan.optimizer import PlannerSettings

    class Latest(Split):
        def is_output_idempotent(self):
            return True

    ds = _env().from_collection([("a", 1)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    main = ds.key_by(lambda r: r[0]).process(Latest(), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
    side = main.get_side_output(SMALL)
    assert side.get_type() == Types.STRING()
    settings = PlannerSettings(flush=FlushPolicy(interval_ms=1000))
    # Idempotent main output, buffered; once a side output is read the operator emits at once, as Flink does.
    assert planned_job([main._node], settings).outputs[0].traits.get("buffers")
    job = planned_job([main._node, side._node], settings)
    assert not any(o.traits.get("buffers") for o in (job.outputs[0], job.outputs[1].input))

    connected = ds.connect(ds).key_by(lambda r: r[0], lambda r: r[0]).process(Big(), output_type=Types.INT())
    assert connected.get_side_output(SMALL).get_type() == Types.STRING()
