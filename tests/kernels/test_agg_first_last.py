"""FIRST_VALUE / LAST_VALUE: surviving values in arrival order, or one value over insert-only input."""

import pytest
from group_agg_helpers import STRING, Scenario, call, ids

from changeflow.testing import (
    delete_record as D,
    insert_record as I,
    update_after_record as UA,
    update_before_record as UB,
)

FIRST_LAST = [call("first_value", out="f"), call("last_value", out="l")]

RETRACTING = [
    Scenario("retract the first - should fall back to the next surviving value", FIRST_LAST,
             [[I("a", 1), I("a", 2), I("a", 3), D("a", 1)]],
             [I("a", 1, 1), UB("a", 1, 1), UA("a", 1, 2), UB("a", 1, 2), UA("a", 1, 3), UB("a", 1, 3), UA("a", 2, 3)]),
    Scenario("retract the last - should fall back to the previous surviving value", FIRST_LAST,
             [[I("a", 1), I("a", 2), I("a", 3), D("a", 3), D("a", 2)]],
             [I("a", 1, 1), UB("a", 1, 1), UA("a", 1, 2), UB("a", 1, 2), UA("a", 1, 3), UB("a", 1, 3), UA("a", 1, 2),
              UB("a", 1, 2), UA("a", 1, 1)]),
    Scenario("retract a repeated value - should remove its earliest occurrence", FIRST_LAST,
             # Surviving order after the -D is [2, 1]: Flink drops orderList.get(0).
             [[I("a", 1), I("a", 2), I("a", 1), D("a", 1)]],
             [I("a", 1, 1), UB("a", 1, 1), UA("a", 1, 2), UB("a", 1, 2), UA("a", 1, 1), UB("a", 1, 1), UA("a", 2, 1)]),
    Scenario("nulls - are ignored", FIRST_LAST,
             [[I("a", None), I("a", 4), I("a", None)]],
             [I("a", None, None), UB("a", None, None), UA("a", 4, 4)]),
    Scenario("state - arrival order survives between batches", [call("first_value", STRING, out="f")],
             [[I("a", "x"), I("a", "y")], [I("a", "z")], [D("a", "x")], [D("a", "y")]],
             [I("a", "x"), UB("a", "x"), UA("a", "y"), UB("a", "y"), UA("a", "z")]),
]

INSERT_ONLY = [
    Scenario("insert only - first keeps its value, last follows new non-null values", FIRST_LAST,
             [[I("a", None), I("a", 5), I("a", None)], [I("a", 7), I("b", 1)], [I("a", None)]],
             [I("a", None, None), UB("a", None, None), UA("a", 5, 5), UB("a", 5, 5), UA("a", 5, 7), I("b", 1, 1)],
             insert_only=True),
]


@pytest.mark.parametrize("scenario", RETRACTING + INSERT_ONLY, ids=ids(RETRACTING + INSERT_ONLY))
def test_scenario(scenario):
    scenario.run()


@pytest.mark.parametrize("scenario", RETRACTING + INSERT_ONLY, ids=ids(RETRACTING + INSERT_ONLY))
def test_scenario_as_one_row_bundles(scenario):
    scenario.as_one_row_bundles().run()


def test_bundle_takes_first_and_last_in_source_order():
    s = Scenario("", FIRST_LAST, [[I("a", 3), I("a", 1), I("a", 2)], [I("a", 9)]],
                 [I("a", 3, 2), UB("a", 3, 2), UA("a", 3, 9)], mini_batch=True)
    s.run()
    Scenario("", FIRST_LAST, s.batches, s.expected, mini_batch=True, insert_only=True).run()
