"""The keyed reduce kernel: running values in streaming mode, final values in batch mode."""

import pytest
from hypothesis import given, settings, strategies as st

from changeflow.datastream.functions import RuntimeContext
from changeflow.datastream.functions import ReduceFunction
from changeflow.kernels.keyed import KeyedReduce, UserFunctionError
from changeflow.kernels.state import InMemoryKeyedState

from kernel_helpers import records, values

add = KeyedReduce(lambda x, y: (x[0], x[1] + y[1]), "add", runtime_context=RuntimeContext)


def test_running_value_per_input_record_in_input_order():
    out = add.process(records([("a", 1), ("b", 10), ("a", 2), ("a", 3)]), InMemoryKeyedState())
    assert values(out) == [("a", 1), ("b", 10), ("a", 3), ("a", 6)]


def test_state_carries_across_micro_batches():
    state = InMemoryKeyedState()
    add.process(records([("a", 1), ("b", 10)]), state)
    out = add.process(records([("b", 5), ("a", 2)], start=2), state)
    assert values(out) == [("b", 15), ("a", 3)]


def test_input_order_is_restored_from_stamps():
    batch = records([("a", "x"), ("a", "y"), ("a", "z")]).iloc[::-1]
    concat = KeyedReduce(lambda x, y: (x[0], x[1] + y[1]), "concat", runtime_context=RuntimeContext)
    assert values(concat.process(batch, InMemoryKeyedState())) == [("a", "x"), ("a", "xy"), ("a", "xyz")]


def test_final_value_per_key_in_batch_mode():
    out = add.final(records([("a", 1), ("b", 10), ("a", 2)]))
    assert sorted(values(out)) == [("a", 3), ("b", 10)]


def test_reduce_function_class_is_opened_and_closed():
    calls = []

    class Add(ReduceFunction):
        def open(self, ctx):
            calls.append("open")

        def close(self):
            calls.append("close")

        def reduce(self, a, b):
            return a + b

    kernel = KeyedReduce(Add(), "Add", runtime_context=RuntimeContext)
    out = kernel.process(records([1, 2, 3], key=lambda v: 0), InMemoryKeyedState())
    assert values(out) == [1, 3, 6] and calls == ["open", "close"]


def test_a_failing_reduce_names_the_function_the_record_and_the_key():
    bad = KeyedReduce(lambda x, y: x[1] / y[1], "ratio", runtime_context=RuntimeContext)
    with pytest.raises(UserFunctionError, match=r"ratio failed on record \('a', 0\) \(key 'a'\): ZeroDivisionError"):
        bad.process(records([("a", 1), ("a", 0)]), InMemoryKeyedState())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.integers(-5, 5)), max_size=40),
       st.lists(st.integers(1, 10), max_size=6))
def test_streaming_last_value_per_key_equals_batch_result(rows, cuts):
    """Applied over any split into micro-batches, the last running value of each key is batch mode's value."""
    state, last, start = InMemoryKeyedState(), {}, 0
    bounds = sorted({min(c, len(rows)) for c in cuts} | {len(rows)})
    for end in bounds:
        for v in values(add.process(records(rows[start:end], start=start), state)):
            last[v[0]] = v
        start = end
    assert sorted(last.values()) == sorted(values(add.final(records(rows))))
