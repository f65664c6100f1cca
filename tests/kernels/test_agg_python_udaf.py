"""Python aggregate functions (udaf) in the group-aggregate kernel, without Spark.

The strongest check: a udaf that computes SUM (with retract and merge) gives the
exact changelog of the built-in SUM, over random changelogs with retractions and
stray retractions, cut into random batches, with and without mini-batch; and in
two phases (local partials merged globally) the exact one-phase mini-batch output.
Materialized, that is the batch result (the built-in's property tests show that).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from changeflow.common import Row
from changeflow.common.types import DataTypes as T
from changeflow.functions import AggregateFunction
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.aggregate.local import LocalGroupAggregate, mergeable
from changeflow.kernels.aggregate.user import USER_FUNCTION, UserAggCall, check_call
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.table.udf import udaf
from changeflow.testing import KernelHarness, insert_record
from tests.kernels.test_group_agg_properties import COLUMNS, DTYPES, changelogs, split


class PySum(AggregateFunction):
    """SUM written as a udaf: [sum, non-null count]; null when no non-null value."""

    def create_accumulator(self):
        return [0, 0]

    def accumulate(self, acc, value):
        if value is not None:
            acc[0] += value
            acc[1] += 1

    def retract(self, acc, value):
        if value is not None:
            acc[0] -= value
            acc[1] -= 1

    def merge(self, acc, others):
        for other in others:
            acc[0] += other[0]
            acc[1] += other[1]

    def get_value(self, acc):
        return acc[0] if acc[1] else None


class NoRetract(PySum):
    retract = AggregateFunction.retract
    merge = AggregateFunction.merge


class SumAndCount(PySum):
    def get_value(self, acc):
        return Row(acc[0], acc[1])


BIGINT = T.BIGINT()


def user_call(instance, args=("x",), types=(BIGINT,), output="s", result=BIGINT, expand=()):
    function = udaf(instance, result_type=result, name=type(instance).__name__.lower()).function
    return UserAggCall(USER_FUNCTION, None, None, output, user=function, args=tuple(args), arg_types=tuple(types),
                       expand=tuple(expand))


def outputs(kernel, batches):
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES)
    for batch in batches:
        h.process(batch)
    return [(str(r.get_row_kind()), tuple(r)) for r in h.changes]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), mini_batch=st.booleans())
def test_udaf_sum_gives_the_changelog_of_builtin_sum(data, mini_batch):
    records = data.draw(changelogs())
    batches = data.draw(split(records))
    builtin = GroupAggregate(["k"], [AggCall("sum", "x", T.BIGINT(), "s")], mini_batch=mini_batch,
                             input_insert_only=False)
    python = GroupAggregate(["k"], [user_call(PySum())], mini_batch=mini_batch, input_insert_only=False)
    assert outputs(python, batches) == outputs(builtin, batches)


rows = st.tuples(st.sampled_from(["a", "b", None]), st.one_of(st.none(), st.integers(-3, 3)),
                 st.just(None), st.just(None))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bundles=st.lists(st.tuples(st.lists(rows, min_size=1, max_size=12), st.randoms(use_true_random=False)),
                        min_size=1, max_size=3))
def test_two_phase_udaf_equals_one_phase_mini_batch(bundles):
    calls = [user_call(PySum()), AggCall("count_star", None, None, "n")]
    local = LocalGroupAggregate(["k"], calls)
    merge = GroupAggregate(["k"], calls, mini_batch=True, input_insert_only=True, partial_input=True)
    one = GroupAggregate(["k"], calls, mini_batch=True, input_insert_only=True)
    h = KernelHarness(None, COLUMNS, dtypes=DTYPES)
    s1, s2 = InMemoryKeyedState(), InMemoryKeyedState()
    for records, rnd in bundles:
        frame = h.frame([insert_record(*r) for r in records])
        parts = [frame.iloc[i::2] for i in range(2)]
        partials = pd.concat([local.process(p.sample(frac=1, random_state=rnd.randint(0, 99)).reset_index(drop=True))
                              for p in parts if len(p)], ignore_index=True)
        expected = one.process(frame, s1)
        actual = merge.process(partials, s2)
        pd.testing.assert_frame_equal(actual.sort_values("_seq").reset_index(drop=True),
                                      expected.sort_values("_seq").reset_index(drop=True))


def test_mergeable_only_with_merge():
    assert mergeable(user_call(PySum()))
    assert not mergeable(user_call(NoRetract()))


def test_row_result_expands_into_columns_and_several_arguments():
    call = user_call(SumAndCount(), result=T.ROW([("s", T.BIGINT()), ("c", T.BIGINT())]), expand=("a", "b"))
    kernel = GroupAggregate(["k"], [call], mini_batch=False, input_insert_only=True)
    assert kernel.output_columns[:3] == ["k", "a", "b"]
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES)
    h.process([insert_record("a", 2, None, None), insert_record("a", None, None, None),
               insert_record("a", 3, None, None)])
    assert [(str(r.get_row_kind()), tuple(r)) for r in h.changes] == [   # an unchanged Row emits nothing
        ("+I", ("a", 2, 1)), ("-U", ("a", 2, 1)), ("+U", ("a", 5, 2))]


def test_two_arguments():
    class Dot(PySum):
        def accumulate(self, acc, a, b):
            acc[0] += a * b
            acc[1] += 1

    call = user_call(Dot(), args=("x", "j"), types=(T.BIGINT(), T.BIGINT()))
    kernel = GroupAggregate(["k"], [call], mini_batch=True, input_insert_only=True)
    h = KernelHarness(kernel, ["k", "j", "x"], dtypes={"k": object, "j": "Int64", "x": "Int64"})
    h.process([insert_record("a", 2, 3), insert_record("a", 4, 5)])
    assert [tuple(r) for r in h.changes] == [("a", 26)]


def test_state_is_carried_between_batches_as_pickled_accumulators():
    kernel = GroupAggregate(["k"], [user_call(PySum())], mini_batch=True, input_insert_only=True)
    state = InMemoryKeyedState()
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES, state=state)
    h.process([insert_record("a", 2, None, None)])
    h.process([insert_record("a", 5, None, None)])
    stored = state.load("acc", pd.DataFrame({"k": ["a"]}))
    assert isinstance(stored["s.acc"].iloc[0], bytes)
    assert [tuple(r) for r in h.changes] == [("a", 2), ("a", 2), ("a", 7)]


def test_failing_udaf_names_itself_and_the_row():
    class Broken(PySum):
        def accumulate(self, acc, value):
            raise ZeroDivisionError("boom")

    kernel = GroupAggregate(["k"], [user_call(Broken())], mini_batch=False, input_insert_only=True)
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES)
    with pytest.raises(RuntimeError, match=r"aggregate function broken: accumulate failed on input \(7,\)"):
        h.process([insert_record("a", 7, None, None)])


def test_refusals_at_plan_time():
    with pytest.raises(ValueError, match="Method retract is not implemented"):
        check_call(user_call(NoRetract()), streaming=True, input_insert_only=False)
    check_call(user_call(NoRetract()), streaming=True, input_insert_only=True)
    pandas_mean = udaf(lambda v: v.mean(), result_type=T.DOUBLE(), func_type="pandas", name="mean").function
    call = UserAggCall(USER_FUNCTION, None, None, "m", user=pandas_mean, args=("x",), arg_types=(T.BIGINT(),))
    with pytest.raises(NotImplementedError, match="Pandas UDAFs are not supported in streaming mode currently: mean"):
        check_call(call, streaming=True, input_insert_only=True)
    check_call(call, streaming=False, input_insert_only=True)


def test_unpicklable_accumulator_is_named():
    class Local:
        pass

    class Odd(PySum):
        def create_accumulator(self):
            return Local()

        def accumulate(self, acc, value):
            pass

        def get_value(self, acc):
            return 1

    kernel = GroupAggregate(["k"], [user_call(Odd())], mini_batch=True, input_insert_only=True)
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES)
    with pytest.raises(RuntimeError, match="aggregate function odd: its accumulator Local cannot be pickled"):
        h.process([insert_record("a", 1, None, None)])


def test_numpy_free_values_reach_the_function():
    seen = []

    class Spy(PySum):
        def accumulate(self, acc, value):
            seen.append(type(value))

    kernel = GroupAggregate(["k"], [user_call(Spy())], mini_batch=True, input_insert_only=True)
    KernelHarness(kernel, COLUMNS, dtypes=DTYPES).process([insert_record("a", 1, None, None),
                                                          insert_record("a", None, None, None)])
    assert seen == [int, type(None)]
    assert np.dtype(object) is not None
