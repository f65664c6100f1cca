"""The end-of-input window kernels without Spark: groups across batches, combiners, window functions, co-group."""

import random
from types import SimpleNamespace

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from changeflow.datastream.functions import RuntimeContext
from changeflow.datastream.functions import (AggregateFunction, AllWindowFunction, CoGroupFunction, FlatJoinFunction,
                                             JoinFunction, ProcessWindowFunction, WindowFunction)
from changeflow.datastream.window import MAX_LONG_VALUE, GlobalWindow
from changeflow.kernels.keyed import UserFunctionError
from changeflow.kernels.keyed.records import KEY, VALUE, dumps, loads, record_frame
from changeflow.kernels.order import STAMP, source_stamp, stamp_seq, stamps_of
from changeflow.kernels.window import CoGroupKernel, PartialFold, WindowKernel, WindowSpec, complete_groups
from changeflow.kernels.window.evaluate import SIDE
from conformance.datastream_cases import average_function


def records(values, key=lambda v: v[0], start=0, source=0):
    return record_frame([dumps(v) for v in values], [source_stamp(start + i, source) for i in range(len(values))],
                        [dumps(key(v)) for v in values])


def window_kernel(spec, name):
    """A kernel over all of each key's records (the global window that fires at end of input)."""
    return WindowKernel(spec, name, runtime_context=RuntimeContext, window=GlobalWindow.get())


def co_group_kernel(how, function, name):
    return CoGroupKernel(how, function, name, runtime_context=RuntimeContext)


def fire(kernel, values, partitions=1):
    """Runs a kernel as the Spark runtime does: combine per partition (if combinable), sort by key and stamp, fire."""
    frame = records(values)
    if kernel.spec.combinable:
        cut = sorted(random.Random(7).sample(range(1, len(values)), partitions - 1)) if partitions > 1 else []
        parts = [frame.iloc[a:b] for a, b in zip([0] + cut, cut + [len(values)], strict=True)]
        folded = []
        for part in parts:
            fold = PartialFold(kernel)
            fold.add(part)
            folded.append(fold.result())
        frame = pd.concat(folded, ignore_index=True)
    frame = frame.sort_values([KEY] + STAMP, kind="stable", ignore_index=True)
    return [loads(v) for v in kernel.fire(frame)[VALUE]]


Average = type(average_function(SimpleNamespace(AggregateFunction=AggregateFunction)))


ROWS = [("a", 5), ("b", 2), ("a", 3), ("c", 7), ("b", 4), ("a", 1)]


def test_reduce_emits_one_value_per_key_whatever_the_partitioning():
    concat = window_kernel(WindowSpec("reduce", lambda x, y: (x[0], x[1] * 10 + y[1])), "Concat")
    for partitions in (1, 2, 3):
        assert sorted(fire(concat, ROWS, partitions)) == [("a", 531), ("b", 24), ("c", 7)]


def test_aggregate_merges_partial_accumulators_then_gets_the_result():
    average = window_kernel(WindowSpec("aggregate", Average()), "Average")
    assert sorted(fire(average, ROWS, partitions=3)) == [3.0, 3.0, 7.0]


def test_process_window_function_gets_key_elements_in_input_order_and_the_final_watermark():
    class Listing(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield key, [e[1] for e in elements], context.current_watermark(), context.window()

    out = fire(window_kernel(WindowSpec("process", Listing()), "Listing"), ROWS)
    assert out == [("a", [5, 3, 1], MAX_LONG_VALUE, GlobalWindow()), ("b", [2, 4], MAX_LONG_VALUE, GlobalWindow()),
                   ("c", [7], MAX_LONG_VALUE, GlobalWindow())]


def test_window_function_after_reduce_gets_the_single_reduced_value():
    class Label(WindowFunction):
        def apply(self, key, window, inputs):
            return [f"{key}:{list(inputs)}"]

    kernel = window_kernel(WindowSpec("reduce", lambda x, y: max(x, y), Label()), "Max")
    assert fire(kernel, ROWS, partitions=2) == ["a:[('a', 5)]", "b:[('b', 4)]", "c:[('c', 7)]"]


def test_all_window_function_gets_no_key():
    class Count(AllWindowFunction):
        def apply(self, window, inputs):
            yield len(list(inputs))

    assert fire(window_kernel(WindowSpec("apply", Count(), keyed=False), "Count"), ROWS) == [3, 2, 1]


def test_outputs_are_stamped_after_their_keys_last_record():
    kernel = window_kernel(WindowSpec("apply", _Twice(), keyed=True), "Twice")
    frame = records(ROWS).sort_values([KEY] + STAMP, ignore_index=True)
    out = kernel.fire(frame)
    stamps = dict(zip([loads(v) for v in out[VALUE]], stamps_of(out), strict=True))
    assert stamp_seq(stamps[("a", 0)]) == stamp_seq(source_stamp(5, 0)) and source_stamp(5, 0) < stamps[("a", 0)] \
        < stamps[("a", 1)]


class _Twice(WindowFunction):
    def apply(self, key, window, inputs):
        return [(key, 0), (key, 1)]


def test_a_failing_window_function_names_operator_and_key():
    class Broken(ProcessWindowFunction):
        def process(self, key, context, elements):
            raise KeyError("boom")

    with pytest.raises(UserFunctionError, match=r"user function Broken failed on .*\(key 'a'\): KeyError"):
        fire(window_kernel(WindowSpec("process", Broken()), "Broken"), ROWS)


def test_a_failing_reduce_names_the_record():
    kernel = window_kernel(WindowSpec("reduce", lambda x, y: x[1] / y[1]), "Ratio")
    with pytest.raises(UserFunctionError, match=r"Ratio failed on record \('a', 0\) \(key 'a'\)"):
        fire(kernel, [("a", 1), ("a", 0)])


def co_group_groups(first, second):
    frame = pd.concat([records(first).assign(**{SIDE: 0}), records(second, source=1).assign(**{SIDE: 1})],
                      ignore_index=True)
    return frame.sort_values([KEY, SIDE] + STAMP, ignore_index=True)


def test_co_group_sees_every_key_of_either_input():
    class Pair(CoGroupFunction):
        def co_group(self, first, second):
            yield [f[1] for f in first], [s[1] for s in second]

    out = co_group_kernel("co_group", Pair(), "CoGroup").fire(co_group_groups(ROWS, [("a", 10), ("d", 40)]))
    assert sorted(loads(v) for v in out[VALUE]) == [([], [40]), ([2, 4], []), ([5, 3, 1], [10]), ([7], [])]


def test_join_is_inner_with_first_input_outer_and_flat_join_may_emit_several():
    class Sum(JoinFunction):
        def join(self, first, second):
            return first[1] + second[1]

    class Both(FlatJoinFunction):
        def join(self, first, second):
            yield first[1]
            yield second[1]

    groups = co_group_groups(ROWS, [("a", 10), ("a", 20), ("d", 40)])
    assert [loads(v) for v in co_group_kernel("join", Sum(), "Join").fire(groups)[VALUE]] == [15, 25, 13, 23, 11, 21]
    assert [loads(v) for v in co_group_kernel("flat_join", Both(), "J").fire(groups)[VALUE]][:4] == [5, 10, 5, 20]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=30), st.lists(st.integers(1, 6), max_size=5))
def test_complete_groups_cuts_only_between_keys(keys, cuts):
    frame = pd.DataFrame({"k": sorted(keys), "i": range(len(keys))})
    bounds = sorted({min(c * 3, len(keys)) for c in cuts} | {0, len(keys)})
    parts = [frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    groups = list(complete_groups(parts, "k"))
    assert [i for g in groups for i in g["i"]] == list(range(len(keys)))
    firsts = [g["k"].iloc[0] for g in groups]
    assert all(g["k"].is_monotonic_increasing for g in groups) and len(set(firsts)) == len(firsts)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers(-50, 50)), min_size=1, max_size=40),
       st.integers(1, 4))
def test_end_of_stream_results_equal_a_plain_python_reference(rows, partitions):
    partitions = min(partitions, len(rows))
    reference_sum, reference_list = {}, {}
    for k, v in rows:
        reference_sum[k] = reference_sum.get(k, 0) + v
        reference_list.setdefault(k, []).append(v)

    class Listing(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield key, [e[1] for e in elements]

    total = window_kernel(WindowSpec("reduce", lambda x, y: (x[0], x[1] + y[1])), "Sum")
    average = window_kernel(WindowSpec("aggregate", Average()), "Average")
    assert dict(fire(total, rows, partitions)) == reference_sum
    assert sorted(fire(average, rows, partitions)) == sorted(sum(v) / len(v) for v in reference_list.values())
    assert dict(fire(window_kernel(WindowSpec("process", Listing()), "Listing"), rows)) == reference_list
