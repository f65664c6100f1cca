"""Mini-batch folding (MiniBatchGroupAggFunction): one change per key per bundle."""

import pandas as pd
import pytest
from group_agg_helpers import BIGINT, DOUBLE, STRING, Scenario, call, harness, ids

from changeflow.common.types import DataTypes
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.testing import (
    KernelHarness,
    assert_changelog,
    delete_record as D,
    format_changes,
    insert_record as I,
    rows_of,
    update_after_record as UA,
    update_before_record as UB,
)

SUM_COUNT = [call("sum"), call("count_star", out="n")]


def bundle(name, batches, expected, calls=SUM_COUNT):
    return Scenario(name, calls, batches, expected, mini_batch=True)


SCENARIOS = [
    bundle("bundle of inserts - should emit one insert with the final value",
           [[I("a", 1), I("a", 2), I("a", 3)]], [I("a", 6, 3)]),
    bundle("bundle on an existing key - should emit one update pair",
           [[I("a", 1)], [I("a", 2), I("a", 3)]], [I("a", 1, 1), UB("a", 1, 1), UA("a", 6, 3)]),
    bundle("bundle leaving the values unchanged - should emit nothing",
           [[I("a", 1)], [D("a", 1), I("a", 1)]], [I("a", 1, 1)]),
    bundle("new key inserted and deleted in one bundle - should emit nothing",
           [[I("a", 1), D("a", 1)]], []),
    bundle("existing key deleted by the bundle - should emit delete of the old value",
           [[I("a", 1), I("a", 2)], [D("a", 2), D("a", 1)]], [I("a", 3, 2), D("a", 3, 2)]),
    bundle("leading retractions of a new key - should be dropped",
           [[D("a", 9), UB("a", 9), I("a", 1), I("a", 2)]], [I("a", 3, 2)]),
    bundle("only retractions for a new key - should emit nothing and keep no state",
           [[D("a", 9)], [I("a", 1)]], [I("a", 1, 1)]),
    bundle("update pair in one bundle - should emit one update pair",
           [[I("a", 1)], [UB("a", 1), UA("a", 4)]], [I("a", 1, 1), UB("a", 1, 1), UA("a", 4, 1)]),
    bundle("count passing through zero inside a bundle - should not clear the accumulator",
           # Unlike per-row processing, the bundle applies every row to one accumulator.
           [[I("a", 5)], [D("a", 5), I("a", 1), D("a", 1), I("a", 2)]], [I("a", 5, 1), UB("a", 5, 1), UA("a", 2, 1)]),
    bundle("unmatched retraction inside a bundle - is applied as Flink does",
           # Flink only drops *leading* retractions: the count goes 1 -> 0 -> -1 -> 0.
           [[I("a", 5)], [D("a", 5), D("a", 5), I("a", 5)]], [I("a", 5, 1), D("a", 5, 1)]),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario(scenario):
    scenario.run()


def test_bundle_output_is_stamped_from_the_keys_last_row():
    h = harness(SUM_COUNT, mini_batch=True)
    h.process([I("b", 1)])
    batch = h.frame([I("a", 1), I("b", 2), I("a", 3), I("c", 1)])
    batch["_seq"] = [20, 21, 22, 23]
    batch["_sub"] = [1, 1, 2, 0]
    out = h.process_frame(batch)
    assert out[["k", "_kind", "_seq", "_sub"]].values.tolist() == [
        ["b", 1, 21, 4],
        ["b", 2, 21, 5],
        ["a", 0, 22, 8],
        ["c", 0, 23, 0],
    ]


@pytest.mark.parametrize("calls", [[call("sum")], [call("sum", DOUBLE)], [call("max")]], ids=["int", "float", "max"])
def test_bundle_in_any_row_order_gives_the_same_changes(calls):
    rows = [I("a", 1), I("b", 2), I("a", 3), I("c", 4), I("b", 5)]
    expected = harness(calls, mini_batch=True)
    expected_out = expected.process_frame(expected.frame(rows))
    h = harness(calls, mini_batch=True)
    shuffled = h.frame(rows).iloc[[4, 2, 0, 3, 1]].reset_index(drop=True)
    pd.testing.assert_frame_equal(h.process_frame(shuffled), expected_out)


def test_one_row_bundles_equal_per_row_processing():
    rows = [I("a", 1), D("a", 1), D("a", 1), I("a", 3), I("b", None), UB("a", 3), UA("a", 4), D("b", None)]
    per_row = harness(SUM_COUNT).process(rows)
    assert_changelog(harness(SUM_COUNT, mini_batch=True).process_each(rows), per_row)


# --- the mini-batch seed's daily-UV example: two chained aggregates ----------------------------

def daily_uv(mini_batch: bool):
    """SELECT day, SUM(cnt) FROM (SELECT day, MOD(user_id, 10), COUNT(DISTINCT user_id) AS cnt
    FROM source GROUP BY day, MOD(user_id, 10)) GROUP BY day."""
    inner = GroupAggregate(["day", "bucket"], [AggCall("count", "user_id", BIGINT, "cnt", distinct=True)],
                           mini_batch=mini_batch, input_insert_only=True)
    outer = GroupAggregate(["day"], [AggCall("sum", "cnt", BIGINT, "total")],
                           mini_batch=mini_batch, input_insert_only=False)
    return inner, outer


SOURCE = [I(1, "2023-12-19"), I(2, "2023-12-19"), I(11, "2023-12-19")]


def run_daily_uv(mini_batch: bool, batches: list[list]) -> list[str]:
    inner, outer = daily_uv(mini_batch)
    source = KernelHarness(None, ["user_id", "day"], dtypes={"user_id": "Int64", "day": object})
    inner_state, outer_state = InMemoryKeyedState(), InMemoryKeyedState()
    emitted = []
    for records in batches:
        frame = source.frame(records)
        frame["bucket"] = frame["user_id"] % 10  # the projection before the inner aggregate
        inner_out = inner.process(frame, inner_state)
        outer_out = outer.process(inner_out, outer_state)
        emitted += format_changes(rows_of(outer_out, ["day", "total"]))
    return emitted


def test_daily_uv_without_mini_batch_shows_intermediate_values():
    assert run_daily_uv(False, [SOURCE]) == [
        "+I[2023-12-19, 1]",
        "-U[2023-12-19, 1]", "+U[2023-12-19, 2]",
        "-U[2023-12-19, 2]", "+U[2023-12-19, 1]",
        "-U[2023-12-19, 1]", "+U[2023-12-19, 3]",
    ]


def test_daily_uv_without_mini_batch_does_not_depend_on_batches():
    assert run_daily_uv(False, [[r] for r in SOURCE]) == run_daily_uv(False, [SOURCE])


def test_daily_uv_with_one_bundle_emits_the_final_value_only():
    assert run_daily_uv(True, [SOURCE]) == ["+I[2023-12-19, 3]"]


def test_daily_uv_with_mini_batch_never_shows_a_smaller_total():
    # Two bundles: the total goes 2 -> 3 with no dip to 1 in between.
    assert run_daily_uv(True, [SOURCE[:2], SOURCE[2:]]) == [
        "+I[2023-12-19, 2]", "-U[2023-12-19, 2]", "+U[2023-12-19, 3]",
    ]


def test_strings_and_doubles_in_a_bundle():
    calls = [call("max", STRING, arg="s", out="m"), call("sum", DOUBLE, arg="x", out="s")]
    h = harness(calls, mini_batch=True, columns=("k", "s", "x"), dtypes={"k": object, "s": object, "x": "Float64"})
    h.process([I("a", "pear", 0.5), I("a", "apple", 0.25)])
    assert_changelog(h.process([I("a", "zoo", None), D("a", "pear", 0.5)]),
                     [UB("a", "pear", 0.75), UA("a", "zoo", 0.25)])


def test_float_sums_follow_source_order_exactly():
    # (1e16 + 1) + 1 loses both ones; 1e16 + (1 + 1) would keep them.
    h = harness([call("sum", DataTypes.DOUBLE())], mini_batch=True)
    out = h.process([I("a", 1e16), I("a", 1.0), I("a", 1.0)])
    assert out[0][1] == (1e16 + 1.0) + 1.0
