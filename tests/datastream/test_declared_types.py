"""Declared types are enforced (issue "Nothing lost, nothing wrong"), no Spark.

``sum`` on a non-numeric field fails (it concatenated strings); a value written to typed
state, returned by a typed operator, a typed key selector or a keyed reduce on a typed
stream must fit the declared type, or the job fails naming the operator, the state or
output, the declared type and the value.
"""

import datetime

import pytest

from changeflow.datastream.functions import RuntimeContext
from changeflow.common import Row, Types
from changeflow.datastream import (AggregateFunction, AggregatingStateDescriptor, KeyedProcessFunction,
                                   ListStateDescriptor, MapStateDescriptor, ReducingStateDescriptor,
                                   StreamExecutionEnvironment, ValueStateDescriptor)
from changeflow.kernels.chain import ChainRunner
from changeflow.plan.stream_nodes import Op
from changeflow.datastream.accumulate import AccumulateReduce
from changeflow.kernels.keyed import KeyedProcess, KeyedReduce, UserFunctionError
from changeflow.kernels.keyed.records import VALUE, dumps
from changeflow.kernels.keyed.records import record_frame
from changeflow.kernels.order import source_stamp
from changeflow.kernels.state import InMemoryKeyedState

from kernel_helpers import records, values

PAIR = Types.TUPLE([Types.STRING(), Types.LONG()])
WORDS = Types.TUPLE([Types.STRING(), Types.STRING()])


# ----------------------------------------------------------------------------------------
#  sum on a non-numeric field.
# ----------------------------------------------------------------------------------------


def _env():
    return StreamExecutionEnvironment.get_execution_environment()


def test_sum_on_a_field_declared_a_string_fails_when_the_job_is_built():
    ds = _env().from_collection([("a", "x"), ("a", "y")], type_info=WORDS)
    with pytest.raises(TypeError) as error:
        ds.key_by(lambda r: r[0]).sum(1)
    message = str(error.value)
    assert "sum(1)" in message and "field 1" in message and "Types.STRING()" in message
    assert "not a number" in message


@pytest.mark.parametrize("type_info, position", [
    (Types.STRING(), 0),
    (Types.BOOLEAN(), 0),
    (Types.ROW_NAMED(["k", "when"], [Types.STRING(), Types.SQL_DATE()]), "when"),
    (Types.TUPLE([Types.STRING(), Types.LIST(Types.INT())]), 1),
])
def test_sum_refuses_every_declared_non_numeric_field(type_info, position):
    with pytest.raises(TypeError, match=rf"sum\({position!r}\).*not a number"):
        _env().from_collection([], type_info=type_info).key_by(lambda r: 0).sum(position)


def test_sum_on_declared_numbers_builds_and_a_bad_position_fails_when_built():
    ds = _env().from_collection([("a", 1)], type_info=PAIR)
    assert ds.key_by(lambda r: r[0]).sum(1).get_type() == PAIR
    with pytest.raises(IndexError, match=r"sum\(2\): field position out of range"):
        ds.key_by(lambda r: r[0]).sum(2)
    row = _env().from_collection([], type_info=Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.DOUBLE()]))
    with pytest.raises(KeyError, match="no field named 'w'"):
        row.key_by(lambda r: r.k).sum("w")
    assert row.key_by(lambda r: r.k).sum("v") is not None


def test_sum_on_an_undeclared_string_field_fails_on_the_first_such_record():
    # Undeclared (pickled) records are checked when summed, the key's first record included.
    kernel = KeyedReduce(AccumulateReduce("sum", 1), "sum(1)", runtime_context=RuntimeContext)
    with pytest.raises(UserFunctionError) as error:
        kernel.process(records([("a", "x"), ("a", "y")]), InMemoryKeyedState())
    message = str(error.value)
    assert "sum(1) failed on record ('a', 'x') (key 'a')" in message
    assert "field 1 is 'x' (str)" in message and "adds numbers only" in message


def test_sum_on_an_undeclared_field_checks_later_records_and_basic_values():
    kernel = KeyedReduce(AccumulateReduce("sum", 1), "sum(1)", runtime_context=RuntimeContext)
    with pytest.raises(UserFunctionError, match=r"on record \('a', '2'\).*field 1 is '2' \(str\)"):
        kernel.process(records([("a", 1), ("a", "2")]), InMemoryKeyedState())
    basic = KeyedReduce(AccumulateReduce("sum", 0), "sum(0)", runtime_context=RuntimeContext)
    with pytest.raises(UserFunctionError, match=r"the record \(a basic value, field 0\) is True \(bool\)"):
        basic.process(records([1, True], key=lambda v: 0), InMemoryKeyedState())
    with pytest.raises(UserFunctionError, match=r"field 1 is None"):
        kernel.final(records([("a", None)]))


def test_sum_still_adds_ints_floats_and_decimals():
    import decimal

    kernel = KeyedReduce(AccumulateReduce("sum", 1), "sum(1)", runtime_context=RuntimeContext)
    out = kernel.process(records([("a", 1), ("a", 2.5), ("b", decimal.Decimal("1.5")), ("b", 1)]),
                         InMemoryKeyedState())
    assert values(out) == [("a", 1), ("a", 3.5), ("b", decimal.Decimal("1.5")), ("b", decimal.Decimal("2.5"))]


# ----------------------------------------------------------------------------------------
#  Typed keyed state.
# ----------------------------------------------------------------------------------------


class Store(KeyedProcessFunction):
    """Writes each record's second field to the state ``descriptor`` describes, with ``write``."""

    def __init__(self, descriptor, getter, write):
        self.descriptor, self.getter, self.write = descriptor, getter, write

    def open(self, runtime_context):
        self.state = getattr(runtime_context, self.getter)(self.descriptor)

    def process_element(self, value, ctx):
        self.write(self.state, value[1])
        yield value


def _run(function, rows, state=None):
    kernel = KeyedProcess(function, "KeyedProcess(Store)", runtime_context=RuntimeContext)
    return kernel.process(records(rows), state or InMemoryKeyedState())


@pytest.mark.parametrize("descriptor, getter, write, bad", [
    (ValueStateDescriptor("total", Types.LONG()), "get_state", lambda s, v: s.update(v), "state 'total'"),
    (ListStateDescriptor("seen", Types.LONG()), "get_list_state", lambda s, v: s.add(v),
     "an element of state 'seen'"),
    (ListStateDescriptor("seen", Types.LONG()), "get_list_state", lambda s, v: s.update([1, v]),
     "an element of state 'seen'"),
    (MapStateDescriptor("counts", Types.STRING(), Types.LONG()), "get_map_state", lambda s, v: s.put("k", v),
     "a map value of state 'counts'"),
    (MapStateDescriptor("counts", Types.LONG(), Types.LONG()), "get_map_state", lambda s, v: s.put(v, 1),
     "a map key of state 'counts'"),
    (ReducingStateDescriptor("sum", lambda a, b: a + b, Types.LONG()), "get_reducing_state",
     lambda s, v: s.add(v), "state 'sum'"),
])
def test_a_value_that_does_not_fit_typed_state_fails_naming_operator_state_type_and_value(
        descriptor, getter, write, bad):
    with pytest.raises(UserFunctionError) as error:
        _run(Store(descriptor, getter, write), [("a", 1), ("a", "oops")])
    message = str(error.value)
    assert f"{bad} of KeyedProcess(Store) is declared Types.LONG()" in message
    assert "the value 'oops' (str) does not fit it" in message
    assert "(key 'a')" in message


def test_typed_state_converts_as_flinks_serializer_would():
    class Keep(KeyedProcessFunction):
        def open(self, ctx):
            self.avg = ctx.get_state(ValueStateDescriptor("avg", Types.DOUBLE()))
            self.pair = ctx.get_state(ValueStateDescriptor("pair", Types.ROW_NAMED(["k", "n"],
                                                                                   [Types.STRING(), Types.INT()])))

        def process_element(self, value, ctx):
            self.avg.update(value[1])
            self.pair.update(value)
            yield self.avg.value(), self.pair.value()

    out = values(_run(Keep(), [("a", 1)]))
    assert out == [(1.0, Row(k="a", n=1))] and isinstance(out[0][0], float)


def test_reducing_state_checks_what_the_reduce_function_returns():
    descriptor = ReducingStateDescriptor("sum", lambda a, b: str(a + b), Types.LONG())
    with pytest.raises(UserFunctionError, match=r"state 'sum' .* declared Types.LONG\(\), but the value '3' \(str\)"):
        _run(Store(descriptor, "get_reducing_state", lambda s, v: s.add(v)), [("a", 1), ("a", 2)])


def test_aggregating_state_checks_the_accumulator_type():
    class Average(AggregateFunction):
        def create_accumulator(self):
            return (0, 0)

        def add(self, value, accumulator):
            return accumulator[0] + value, accumulator[1] + 1

        def get_result(self, accumulator):
            return accumulator[0] / accumulator[1]

        def merge(self, a, b):
            return a[0] + b[0], a[1] + b[1]

    class Avg(KeyedProcessFunction):
        def open(self, ctx):
            self.avg = ctx.get_aggregating_state(
                AggregatingStateDescriptor("avg", Average(), Types.TUPLE([Types.LONG(), Types.LONG()])))

        def process_element(self, value, ctx):
            self.avg.add(value[1])
            yield self.avg.get()

    assert values(_run(Avg(), [("a", 1), ("a", 2), ("b", 5)])) == [1.0, 1.5, 5.0]
    with pytest.raises(UserFunctionError, match=r"the accumulator of state 'avg' .* declared Types.TUPLE"):
        _run(Avg(), [("a", 1.5)])


def test_list_map_and_reducing_state_keep_their_values_across_batches():
    class All(KeyedProcessFunction):
        def open(self, ctx):
            self.seen = ctx.get_list_state(ListStateDescriptor("seen", Types.STRING()))
            self.counts = ctx.get_map_state(MapStateDescriptor("counts", Types.STRING(), Types.LONG()))
            self.total = ctx.get_reducing_state(ReducingStateDescriptor("total", lambda a, b: a + b, Types.LONG()))

        def process_element(self, value, ctx):
            self.seen.add(value[1])
            self.counts.put(value[1], (self.counts.get(value[1]) or 0) + 1)
            self.total.add(len(value[1]))
            yield self.seen.get(), dict(self.counts.items()), self.total.get()

    state = InMemoryKeyedState()
    _run(All(), [("a", "x"), ("a", "yy")], state)
    out = values(_run(All(), [("a", "x")], state))
    assert out == [(["x", "yy", "x"], {"x": 2, "yy": 1}, 4)]


def test_list_and_map_state_handles_behave_as_flinks():
    class Ops(KeyedProcessFunction):
        def open(self, ctx):
            self.items = ctx.get_list_state(ListStateDescriptor("items", Types.INT()))
            self.map = ctx.get_map_state(MapStateDescriptor("map", Types.STRING(), Types.INT()))

        def process_element(self, value, ctx):
            self.items.add_all([1, 2])
            copy = self.items.get()
            copy.append("not checked, not stored")
            self.map["a"] = 1
            self.map.put_all({"b": 2})
            del self.map["a"]
            yield self.items.get(), "a" in self.map, list(self.map), self.map.is_empty()
            self.items.update([])
            self.map.remove("b")
            yield self.items.get(), self.map.is_empty()
            with pytest.raises(ValueError, match="cannot add None"):
                self.items.add(None)

    state = InMemoryKeyedState()
    assert values(_run(Ops(), [("k", 0)], state)) == [([1, 2], False, ["b"], False), ([], True)]
    assert state.row_count("keyed") == 0  # emptied list and map state is deleted with the key


def test_one_state_name_cannot_be_two_kinds_or_types():
    class Twice(KeyedProcessFunction):
        def open(self, ctx):
            ctx.get_state(ValueStateDescriptor("s", Types.LONG()))
            ctx.get_state(ValueStateDescriptor("s", Types.LONG()))  # the same again is fine
            ctx.get_list_state(ListStateDescriptor("s", Types.LONG()))

        def process_element(self, value, ctx):
            return []

    with pytest.raises(ValueError, match="keyed state 's' was already asked for as a ValueStateDescriptor"):
        _run(Twice(), [("a", 1)])


def test_descriptors_check_their_arguments():
    with pytest.raises(TypeError, match="takes a TypeInformation"):
        ValueStateDescriptor("x", int)
    with pytest.raises(TypeError, match="takes an AggregateFunction"):
        AggregatingStateDescriptor("x", lambda a: a, Types.LONG())

    class WrongGetter(KeyedProcessFunction):
        def open(self, ctx):
            ctx.get_state(ListStateDescriptor("x", Types.LONG()))

        def process_element(self, value, ctx):
            return []

    with pytest.raises(TypeError, match=r"get_state\(\) takes a ValueStateDescriptor, got ListStateDescriptor"):
        _run(WrongGetter(), [("a", 1)])


def test_undeclared_state_accepts_any_value():
    for descriptor in (ValueStateDescriptor("v"), ValueStateDescriptor("v", Types.PICKLED_BYTE_ARRAY())):
        out = _run(Store(descriptor, "get_state", lambda s, v: s.update(v)), [("a", 1), ("a", "x")])
        assert values(out) == [("a", 1), ("a", "x")]


# ----------------------------------------------------------------------------------------
#  Declared output types, key types, reduce outputs, union.
# ----------------------------------------------------------------------------------------


def _frame(values_):
    return record_frame([dumps(v) for v in values_], [source_stamp(i, 0) for i in range(len(values_))])


@pytest.mark.parametrize("kind", ["map", "flat_map"])
def test_a_typed_map_or_flat_map_output_that_does_not_fit_fails_naming_operator_type_and_value(kind):
    func = (lambda r: (r, "n")) if kind == "map" else (lambda r: [(r, 1), (r, "n")])
    runner = ChainRunner([Op(kind, func, f"{kind}(f)", PAIR)])
    with pytest.raises(UserFunctionError) as error:
        runner.process(_frame(["a"]))
    message = str(error.value)
    assert f"the output of {kind}(f) is declared {PAIR!r}" in message
    assert "('a', 'n')" in message and "does not fit" in message


def test_a_typed_output_is_converted_and_its_fast_path_keeps_conforming_values():
    runner = ChainRunner([Op("map", lambda r: (r, 1), "m", Types.TUPLE([Types.STRING(), Types.DOUBLE()]))])
    out = runner.process(_frame(["a"]))
    assert [__import__("pickle").loads(b) for b in out[VALUE]] == [("a", 1.0)]
    big = Types.TUPLE([Types.STRING(), Types.INT()]).converter()
    assert big(("a", 1)) == ("a", 1)
    with pytest.raises(ValueError, match="out of range"):
        big(("a", 2**31))
    with pytest.raises(ValueError, match="expected an int, got bool"):
        big(("a", True))
    assert Types.TUPLE([Types.STRING(), Types.INT()]).converter()(["a", 1]) == ("a", 1)


def test_keyed_process_output_type_is_enforced():
    class Bad(KeyedProcessFunction):
        def process_element(self, value, ctx):
            yield "not a number"

    ds = _env().from_collection([("a", 1)], type_info=PAIR).key_by(lambda r: r[0]).process(Bad(), Types.LONG())
    function = ds._node.function
    with pytest.raises(UserFunctionError, match=r"the output of KeyedProcess\(.*Bad\) is declared Types.LONG\(\), "
                                                r"but the value 'not a number' \(str\)"):
        KeyedProcess(function, "KeyedProcess(Bad)", runtime_context=RuntimeContext).process(
            records([("a", 1)]), InMemoryKeyedState())


def test_a_keyed_reduce_on_a_typed_stream_checks_its_outputs():
    ds = _env().from_collection([("a", 1)], type_info=PAIR)
    reduced = ds.key_by(lambda r: r[0]).reduce(lambda a, b: (a[0], str(a[1] + b[1])))
    kernel = KeyedReduce(reduced._node.function, reduced.get_name(), runtime_context=RuntimeContext)
    with pytest.raises(UserFunctionError, match=r"the output of Reduce\(.*\) is declared Types.TUPLE.*"
                                                r"but the value \('a', '3'\)"):
        kernel.process(records([("a", 1), ("a", 2)]), InMemoryKeyedState())
    # sum keeps its first-record check through the wrapper, and its idempotence
    summed = ds.key_by(lambda r: r[0]).sum(1)._node.function
    assert callable(summed.accept_first) and summed.is_output_idempotent()
    kernel = KeyedReduce(summed, "sum(1)", runtime_context=RuntimeContext)
    assert values(kernel.process(records([("a", 1), ("a", 2)]), InMemoryKeyedState())) == [("a", 1), ("a", 3)]


def test_a_declared_key_type_is_enforced_on_every_key():
    keyed = _env().from_collection([("a", 1)], type_info=PAIR).key_by(lambda r: r[1], key_type=Types.STRING())
    runner = ChainRunner([Op("key", keyed._key_selector, "KeySelector of X", context=RuntimeContext)])
    with pytest.raises(UserFunctionError, match=r"the key of key_by\(.*\) is declared Types.STRING\(\), "
                                                r"but the value 1 \(int\)"):
        runner.process(_frame([("a", 1)]))


def test_union_of_streams_of_two_declared_types_fails():
    env = _env()
    a = env.from_collection([("a", 1)], type_info=PAIR)
    b = env.from_collection([("a", "x")], type_info=WORDS)
    with pytest.raises(TypeError, match="union\\(\\) needs streams of one type"):
        a.union(b)
    assert a.union(env.from_collection([("b", 2)], type_info=PAIR)).get_type() == PAIR


def test_state_type_check_does_not_touch_dates_that_fit():
    descriptor = ValueStateDescriptor("when", Types.SQL_DATE())
    out = _run(Store(descriptor, "get_state", lambda s, v: s.update(v)), [("a", datetime.date(2024, 1, 1))])
    assert values(out) == [("a", datetime.date(2024, 1, 1))]


def test_a_sum_that_leaves_its_declared_field_type_fails():
    ints = _env().from_collection([], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    summed = ints.key_by(lambda r: r[0]).sum(1)._node.function
    kernel = KeyedReduce(summed, "sum(1)", runtime_context=RuntimeContext)
    assert values(kernel.process(records([("a", 1), ("a", 2)]), InMemoryKeyedState())) == [("a", 1), ("a", 3)]
    with pytest.raises(UserFunctionError, match=r"the sum of field 1 is declared Types.INT\(\), but the value "
                                                r"2147483648 \(int\) does not fit it"):
        kernel.process(records([("a", 2**31 - 1), ("a", 1)]), InMemoryKeyedState())
    doubles = _env().from_collection([], type_info=Types.TUPLE([Types.STRING(), Types.DOUBLE()]))
    kernel = KeyedReduce(doubles.key_by(lambda r: r[0]).sum(1)._node.function, "sum(1)", runtime_context=RuntimeContext)
    assert values(kernel.process(records([("a", 1.5), ("a", 2.0)]), InMemoryKeyedState())) == [("a", 1.5), ("a", 3.5)]
