"""MIN / MAX: with retraction (value -> count multiset) and over insert-only input."""

import pytest
from group_agg_helpers import DOUBLE, STRING, Scenario, call, harness, ids

from changeflow.common.types import DataTypes
from changeflow.testing import (
    assert_changelog,
    delete_record as D,
    insert_record as I,
    update_after_record as UA,
    update_before_record as UB,
)

MIN_MAX = [call("min"), call("max")]

RETRACTING = [
    Scenario("retract the max - should emit the penultimate until empty - then null", [call("max")],
             # The null row keeps the key alive once every value is retracted.
             [[I("a", None), I("a", 5), I("a", 3), I("a", 7), D("a", 7), D("a", 5), D("a", 3)]],
             [I("a", None), UB("a", None), UA("a", 5), UB("a", 5), UA("a", 7),
              UB("a", 7), UA("a", 5), UB("a", 5), UA("a", 3), UB("a", 3), UA("a", None)]),
    Scenario("retract the min - should fall back to the next smallest", [call("min")],
             [[I("a", 5), I("a", 3), I("a", 7), D("a", 3)]],
             [I("a", 5), UB("a", 5), UA("a", 3), UB("a", 3), UA("a", 5)]),
    Scenario("retract one of duplicate extremes - should emit nothing", MIN_MAX,
             [[I("a", 5), I("a", 5), I("a", 1), D("a", 5)]],
             [I("a", 5, 5), UB("a", 5, 5), UA("a", 1, 5)]),
    Scenario("retract a value that is not the extreme - should emit nothing", MIN_MAX,
             [[I("a", 1), I("a", 5), I("a", 3), D("a", 3)]],
             [I("a", 1, 1), UB("a", 1, 1), UA("a", 1, 5)]),
    Scenario("strings compare in code point order", [call("min", STRING), call("max", STRING, out="x")],
             [[I("a", "b"), I("a", "B"), I("a", "ä"), D("a", "B")]],
             [I("a", "b", "b"), UB("a", "b", "b"), UA("a", "B", "b"), UB("a", "B", "b"), UA("a", "B", "ä"),
              UB("a", "B", "ä"), UA("a", "b", "ä")]),
    Scenario("doubles", [call("max", DOUBLE)],
             [[I("a", 1.5), I("a", -2.5), D("a", 1.5)]], [I("a", 1.5), UB("a", 1.5), UA("a", -2.5)]),
    Scenario("state - the multiset survives between batches", [call("max")],
             [[I("a", 5), I("a", 9)], [D("a", 9)], [D("a", 5), I("a", 4)]],
             [I("a", 5), UB("a", 5), UA("a", 9), UB("a", 9), UA("a", 5), D("a", 5), I("a", 4)]),
]

INSERT_ONLY = [
    Scenario("insert only - keeps the running extreme and ignores nulls", MIN_MAX,
             [[I("a", None), I("a", 5), I("a", 3)], [I("a", 9), I("a", 4)]],
             [I("a", None, None), UB("a", None, None), UA("a", 5, 5), UB("a", 5, 5), UA("a", 3, 5),
              UB("a", 3, 5), UA("a", 3, 9)], insert_only=True),
    Scenario("insert only - strings", [call("max", STRING)],
             [[I("a", "kiwi"), I("b", "fig")], [I("a", "apple"), I("a", "lime")]],
             [I("a", "kiwi"), I("b", "fig"), UB("a", "kiwi"), UA("a", "lime")], insert_only=True),
    Scenario("insert only - booleans", [call("max", DataTypes.BOOLEAN())],
             [[I("a", False), I("a", True), I("a", False)]], [I("a", False), UB("a", False), UA("a", True)],
             insert_only=True, options={"dtypes": {"k": object, "v": "boolean"}}),
]


@pytest.mark.parametrize("scenario", RETRACTING + INSERT_ONLY, ids=ids(RETRACTING + INSERT_ONLY))
def test_scenario(scenario):
    scenario.run()


@pytest.mark.parametrize("scenario", RETRACTING + INSERT_ONLY, ids=ids(RETRACTING + INSERT_ONLY))
def test_scenario_as_one_row_bundles(scenario):
    scenario.as_one_row_bundles().run()


def test_insert_only_and_retracting_implementations_agree_on_inserts():
    batches = [[I("a", 4), I("b", None)], [I("a", 2), I("b", 7), I("a", 9)]]
    for mini_batch in (False, True):
        cheap = harness(MIN_MAX, mini_batch=mini_batch, insert_only=True)
        full = harness(MIN_MAX, mini_batch=mini_batch)
        assert_changelog([r for b in batches for r in cheap.process(b)], [r for b in batches for r in full.process(b)])
