"""KeyedProcessFunction with ValueState over buckets of keys."""

import pytest

from changeflow.datastream.functions import RuntimeContext
from changeflow.datastream import KeyedProcessFunction, ValueStateDescriptor
from changeflow.kernels.keyed import KeyedProcess, UserFunctionError
from changeflow.kernels.state import InMemoryKeyedState

from kernel_helpers import records, values
from keyed_functions import Reminder


class Dedupe(KeyedProcessFunction):
    """Emits a record the first time its key is seen and every time its value changes; fans out twice."""

    def open(self, runtime_context):
        self.last = runtime_context.get_state(ValueStateDescriptor("last"))

    def process_element(self, value, ctx):
        if self.last.value() != value[1]:
            self.last.update(value[1])
            yield ctx.get_current_key(), value[1]
            yield "changed", value[1]


def test_value_state_per_key_and_fan_out_order():
    state = InMemoryKeyedState()
    dedupe = KeyedProcess(Dedupe(), "Dedupe", runtime_context=RuntimeContext)
    out = dedupe.process(records([("a", 1), ("b", 1), ("a", 1), ("a", 2)]), state)
    assert values(out) == [("a", 1), ("changed", 1), ("b", 1), ("changed", 1), ("a", 2), ("changed", 2)]
    dedupe = KeyedProcess(Dedupe(), "Dedupe", runtime_context=RuntimeContext)   # a new kernel object, the same state
    out = dedupe.process(records([("b", 1), ("b", 3)], start=4), state)
    assert values(out) == [("b", 3), ("changed", 3)]


def test_cleared_state_is_deleted():
    class Clear(KeyedProcessFunction):
        def open(self, ctx):
            self.s = ctx.get_state(ValueStateDescriptor("s"))

        def process_element(self, value, ctx):
            self.s.update(1)
            self.s.clear()
            return []

    state = InMemoryKeyedState()
    KeyedProcess(Clear(), "Clear", runtime_context=RuntimeContext).process(records([("a", 1)]), state)
    assert state.row_count("keyed") == 0


def test_failure_names_function_record_and_key():
    class Boom(KeyedProcessFunction):
        def process_element(self, value, ctx):
            raise ValueError("no")

    with pytest.raises(UserFunctionError, match=r"Boom failed on record \('k', 1\) \(key 'k'\): ValueError: no"):
        KeyedProcess(Boom(), "Boom", runtime_context=RuntimeContext).process(records([("k", 1)]), InMemoryKeyedState())


def test_streaming_timers_fire_when_due_in_time_order_with_the_keys_state():
    state = InMemoryKeyedState()
    kernel = KeyedProcess(Reminder(), "Reminder", clock=lambda: 1000, runtime_context=RuntimeContext)
    kernel.process(records([("a", 1, 50), ("b", 2, 10), ("a", 3, 10)]), state)
    assert kernel.next_timer(state) == 1010
    assert values(kernel.fire(1009, state)) == []
    # Timers (b, 1010) and (a, 1010) are due; one timer per key and time, as Flink's timer service.
    assert sorted(values(kernel.fire(1010, state))) == [("timer", "a", 4, 1010), ("timer", "b", 2, 1010)]
    assert kernel.next_timer(state) == 1050
    assert values(kernel.fire(5000, state)) == [("timer", "a", 4, 1050)] and kernel.next_timer(state) is None


def test_batch_mode_fires_every_timer_of_a_key_after_its_input():
    # As PyFlink 2.3's batch execution: both of a's timers fire with a's final state.
    out = KeyedProcess(Reminder(), "Reminder", clock=lambda: 0, runtime_context=RuntimeContext).process_bounded(
        records([("a", 1, 0), ("b", 2, 3_600_000), ("a", 3, 3_600_000)]))
    got = values(out)
    assert [r for r in got if r[1] == "a"] == [("elem", "a", 1), ("elem", "a", 3), ("timer", "a", 4, 0),
                                               ("timer", "a", 4, 3_600_000)]
    assert [r for r in got if r[1] == "b"] == [("elem", "b", 2), ("timer", "b", 2, 3_600_000)]


def test_deleted_timers_do_not_fire():
    class Cancel(KeyedProcessFunction):
        def process_element(self, value, ctx):
            ctx.timer_service().register_processing_time_timer(5)
            if value[1] == "cancel":
                ctx.timer_service().delete_processing_time_timer(5)
            return []

        def on_timer(self, timestamp, ctx):
            yield ctx.get_current_key()

    state = InMemoryKeyedState()
    kernel = KeyedProcess(Cancel(), "Cancel", runtime_context=RuntimeContext)
    kernel.process(records([("a", "keep"), ("b", "keep"), ("b", "cancel")]), state)
    assert values(kernel.fire(10, state)) == ["a"]
