"""KeyedProcessFunction with ValueState over buckets of keys."""

import pytest

from changeflow.datastream import KeyedProcessFunction, ValueStateDescriptor
from changeflow.kernels.keyed import KeyedProcess, UserFunctionError
from changeflow.kernels.state import InMemoryKeyedState

from kernel_helpers import records, values


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
    out = KeyedProcess(Dedupe(), "Dedupe").process(records([("a", 1), ("b", 1), ("a", 1), ("a", 2)]), state)
    assert values(out) == [("a", 1), ("changed", 1), ("b", 1), ("changed", 1), ("a", 2), ("changed", 2)]
    out = KeyedProcess(Dedupe(), "Dedupe").process(records([("b", 1), ("b", 3)], start=4), state)
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
    KeyedProcess(Clear(), "Clear").process(records([("a", 1)]), state)
    assert state.row_count("keyed") == 0


def test_failure_names_function_record_and_key():
    class Boom(KeyedProcessFunction):
        def process_element(self, value, ctx):
            raise ValueError("no")

    with pytest.raises(UserFunctionError, match=r"Boom failed on record \('k', 1\) \(key 'k'\): ValueError: no"):
        KeyedProcess(Boom(), "Boom").process(records([("k", 1)]), InMemoryKeyedState())


def test_timers_fail_loudly_until_supported():
    class Timer(KeyedProcessFunction):
        def process_element(self, value, ctx):
            ctx.timer_service().register_processing_time_timer(0)

    with pytest.raises(UserFunctionError, match="timers are not supported yet"):
        KeyedProcess(Timer(), "Timer").process(records([("k", 1)]), InMemoryKeyedState())
