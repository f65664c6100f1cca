"""Which changes the group aggregate emits, without mini-batch (GroupAggFunction)."""

import pandas as pd
import pytest
from group_agg_helpers import DOUBLE, STRING, Scenario, call, harness, ids

from changeflow.common.types import DataTypes
from changeflow.kernels.aggregate import GroupAggregate
from changeflow.kernels.state import InMemoryKeyedState, KeyedState
from changeflow.testing import (
    KernelHarness,
    assert_changelog,
    delete_record as D,
    insert_record as I,
    update_after_record as UA,
    update_before_record as UB,
)

SUM_COUNT = [call("sum"), call("count_star", out="n")]

SCENARIOS = [
    Scenario("first row of a key - should emit insert", SUM_COUNT, [[I("a", 1)]], [I("a", 1, 1)]),
    Scenario(
        "second row - should emit update before and after",
        SUM_COUNT,
        [[I("a", 1), I("a", 2)]],
        [I("a", 1, 1), UB("a", 1, 1), UA("a", 3, 2)],
    ),
    Scenario(
        "unchanged aggregate values - should emit nothing",
        [call("sum")],
        [[I("a", 1), I("a", 0), I("a", None)]],
        [I("a", 1)],
    ),
    Scenario(
        "retract last row - should emit delete",
        SUM_COUNT,
        [[I("a", 1), I("a", 2), D("a", 2), D("a", 1)]],
        [I("a", 1, 1), UB("a", 1, 1), UA("a", 3, 2), UB("a", 3, 2), UA("a", 1, 1), D("a", 1, 1)],
    ),
    Scenario(
        "leading retraction - should be ignored",
        SUM_COUNT,
        [[D("a", 9), UB("a", 9), I("a", 2)]],
        [I("a", 2, 1)],
    ),
    Scenario(
        "retraction after the key was cleared - should be ignored",
        SUM_COUNT,
        [[I("a", 1), D("a", 1), D("a", 1), I("a", 3)]],
        [I("a", 1, 1), D("a", 1, 1), I("a", 3, 1)],
    ),
    Scenario(
        "cleared key - should start again from an empty accumulator",
        [call("sum")],
        # The -D does not match the inserted value, but the count reaches 0 and
        # clears the key: the next row starts from an empty sum, not from 5 - 7.
        [[I("a", 5), D("a", 7), I("a", 1)]],
        [I("a", 5), D("a", 5), I("a", 1)],
    ),
    Scenario(
        "update pair that empties the key - should emit delete then insert",
        SUM_COUNT,
        [[I("a", 1), UB("a", 1), UA("a", 4)]],
        [I("a", 1, 1), D("a", 1, 1), I("a", 4, 1)],
    ),
    Scenario(
        "null key - should be a group of its own",
        SUM_COUNT,
        [[I(None, 1), I("a", 5), I(None, 2)]],
        [I(None, 1, 1), I("a", 5, 1), UB(None, 1, 1), UA(None, 3, 2)],
    ),
    Scenario(
        "state - should carry over between batches",
        SUM_COUNT,
        [[I("a", 1)], [I("a", 2)], [D("a", 1)], [D("a", 2)], [I("a", 7)]],
        [I("a", 1, 1), UB("a", 1, 1), UA("a", 3, 2), UB("a", 3, 2), UA("a", 2, 1), D("a", 2, 1), I("a", 7, 1)],
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario(scenario):
    scenario.run()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_batch_boundaries_do_not_change_the_output(scenario):
    h = harness(scenario.calls)
    assert_changelog(h.process_each([r for batch in scenario.batches for r in batch]), scenario.expected)


def test_output_stamps_descend_from_the_input_row():
    h = harness(SUM_COUNT)
    batch = h.frame([I("a", 1), I("b", 1), I("a", 2), D("a", 1)])
    batch["_seq"] = [10, 11, 12, 13]
    batch["_sub"] = [0, 1, 2, 3]
    out = h.process_frame(batch)
    assert out[["k", "_kind", "_seq", "_sub"]].values.tolist() == [
        ["a", 0, 10, 0],
        ["b", 0, 11, 4],
        ["a", 1, 12, 8],
        ["a", 2, 12, 9],
        ["a", 1, 13, 12],
        ["a", 2, 13, 13],
    ]


def test_input_in_any_row_order_is_folded_in_seq_order():
    rows = [I("a", 1), I("b", 2), I("a", 3), D("a", 1), I("b", 4), D("b", 2), D("b", 4)]
    ordered = harness(SUM_COUNT).process_frame(harness(SUM_COUNT).frame(rows))
    h = harness(SUM_COUNT)
    shuffled = h.frame(rows).sample(frac=1.0, random_state=3).reset_index(drop=True)
    pd.testing.assert_frame_equal(h.process_frame(shuffled), ordered)


def test_output_columns_and_dtypes():
    h = harness([call("sum"), call("avg", out="a"), call("count", out="c"), call("max", out="m")])
    out = h.process_frame(h.frame([I("a", 1)]))
    assert list(out.columns) == ["k", "sum", "a", "c", "m", "_kind", "_seq", "_sub"]
    assert [str(t) for t in out.dtypes] == ["object", "Int64", "Int64", "Int64", "Int64", "int8", "int64", "int64"]


def test_empty_batch_emits_an_empty_frame_with_the_output_columns():
    h = harness(SUM_COUNT)
    out = h.process_frame(h.frame([]))
    assert len(out) == 0
    assert list(out.columns) == ["k", "sum", "n", "_kind", "_seq", "_sub"]


def test_insert_only_input_with_a_retraction_fails_naming_the_record():
    h = harness([call("max")], insert_only=True)
    with pytest.raises(ValueError, match="retraction record .*'v': 5"):
        h.process([I("a", 1), D("a", 5)])


def test_state_of_a_deleted_key_is_removed_from_every_table():
    calls = [call("sum"), call("max"), call("listagg", STRING, arg="s", out="l"), call("count", out="d", distinct=True)]
    h = harness(calls, columns=("k", "v", "s"), dtypes={"k": object, "v": "Int64", "s": object})
    h.process([I("a", 1, "x"), I("a", 2, "y")])
    assert h.state.tables() == ["acc", "agg.l", "agg.max", "distinct.v"]
    assert [h.state.row_count(t) for t in h.state.tables()] == [1, 2, 2, 2]
    h.process([D("a", 1, "x"), D("a", 2, "y")])
    assert [h.state.row_count(t) for t in h.state.tables()] == [0, 0, 0, 0]


def test_kernel_holds_no_per_key_state():
    kernel = harness(SUM_COUNT).kernel
    first, second = harness(SUM_COUNT), harness(SUM_COUNT)
    first.kernel = second.kernel = kernel  # one kernel, two independent states
    first.process([I("a", 1)])
    assert_changelog(second.process([I("a", 5)]), [I("a", 5, 1)])
    assert_changelog(first.process([I("a", 1)]), [UB("a", 1, 1), UA("a", 2, 2)])


def test_global_aggregate_without_keys():
    kernel = GroupAggregate([], SUM_COUNT, mini_batch=False, input_insert_only=False)
    h = KernelHarness(kernel, ["v"], dtypes={"v": "Int64"})
    assert_changelog(h.process([I(1), I(2), D(1), D(2)]), [I(1, 1), UB(1, 1), UA(3, 2), UB(3, 2), UA(2, 1), D(2, 1)])


def test_composite_keys_with_nulls():
    h = harness(SUM_COUNT, keys=("k", "j"), columns=("k", "j", "v"), dtypes={"k": object, "j": "Int64", "v": "Int64"})
    out = h.process([I("a", None, 1), I("a", 1, 2), I(None, None, 3), I("a", None, 4)])
    assert_changelog(out, [I("a", None, 1, 1), I("a", 1, 2, 1), I(None, None, 3, 1),
                           UB("a", None, 1, 1), UA("a", None, 5, 2)])


def test_float64_nan_is_null():
    h = harness([call("sum", DOUBLE), call("count", DOUBLE, out="c")])
    batch = h.frame([I("a", 1.5), I("a", None)])
    batch["v"] = batch["v"].astype("float64")  # NaN for the null, as Spark may deliver it
    assert h.process_frame(batch)[["sum", "c"]].values.tolist() == [[1.5, 1]]


def test_decimal_sums_fail_loudly():
    with pytest.raises(NotImplementedError, match="SUM over DECIMAL"):
        GroupAggregate(["k"], [call("sum", DataTypes.DECIMAL(10, 2))], mini_batch=False, input_insert_only=False)


def test_unknown_row_kind_fails_naming_the_record():
    h = harness(SUM_COUNT)
    batch = h.frame([I("a", 1)])
    batch["_kind"] = batch["_kind"].astype("int8") + 7
    with pytest.raises(ValueError, match="unknown _kind 7"):
        h.process_frame(batch)


class CountingState(KeyedState):
    def __init__(self):
        self.inner, self.calls = InMemoryKeyedState(), []

    def load(self, table, keys):
        self.calls.append(("load", table))
        return self.inner.load(table, keys)

    def store(self, table, keys, rows):
        self.calls.append(("store", table))
        self.inner.store(table, keys, rows)

    def scan(self, table):
        self.calls.append(("scan", table))
        return self.inner.scan(table)


@pytest.mark.parametrize("mini_batch", [False, True])
def test_state_is_loaded_and_stored_once_per_table_per_batch(mini_batch):
    calls = [call("sum"), call("max"), call("count", out="d", distinct=True), call("sum", out="e", distinct=True)]
    state = CountingState()
    h = harness(calls, mini_batch=mini_batch)
    h.state = state
    h.process([I("a", 1), I("b", 2), I("a", 3), D("a", 1)])
    tables = ["acc", "agg.max", "distinct.v"]
    assert sorted(state.calls) == sorted([("load", t) for t in tables] + [("store", t) for t in tables])
