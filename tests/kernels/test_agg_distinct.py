"""DISTINCT aggregates: the inner aggregate sees a value when its count goes 0 -> 1 and 1 -> 0."""

import pytest
from group_agg_helpers import STRING, Scenario, call, ids

from changeflow.testing import (
    delete_record as D,
    insert_record as I,
    update_after_record as UA,
    update_before_record as UB,
)


def distinct(function, arg_type=None, out=None):
    if arg_type is None:
        return call(function, out=out or f"{function}_d", distinct=True)
    return call(function, arg_type, out=out or f"{function}_d", distinct=True)


COUNT_SUM = [distinct("count"), distinct("sum")]

SCENARIOS = [
    Scenario("repeated value - counted once", COUNT_SUM,
             [[I("a", 1), I("a", 1), I("a", 2)]], [I("a", 1, 1), UB("a", 1, 1), UA("a", 2, 3)]),
    Scenario("retract one of two copies - emits nothing, the last copy - retracts", COUNT_SUM,
             [[I("a", 1), I("a", 1), I("a", 2), D("a", 1), D("a", 1)]],
             [I("a", 1, 1), UB("a", 1, 1), UA("a", 2, 3), UB("a", 2, 3), UA("a", 1, 2)]),
    Scenario("nulls - ignored", COUNT_SUM,
             [[I("a", None), I("a", 3), I("a", None)]], [I("a", 0, None), UB("a", 0, None), UA("a", 1, 3)]),
    Scenario("state - distinct counts survive between batches", COUNT_SUM,
             [[I("a", 1)], [I("a", 1)], [D("a", 1)], [D("a", 1)]],
             [I("a", 1, 1), D("a", 1, 1)]),
    Scenario("first_value distinct - keeps the first arrival of a value still present",
             [distinct("first_value"), call("first_value", out="f")],
             # Non-distinct drops the earliest 1 and shows 2; distinct never retracts 1.
             [[I("a", 1), I("a", 2), I("a", 1), D("a", 1)]],
             [I("a", 1, 1), UB("a", 1, 1), UA("a", 1, 2)]),
    Scenario("listagg distinct", [distinct("listagg", STRING)],
             [[I("a", "x"), I("a", "y"), I("a", "x"), D("a", "y")]],
             [I("a", "x"), UB("a", "x"), UA("a", "x,y"), UB("a", "x,y"), UA("a", "x")]),
    Scenario("collect distinct - every value counted once", [distinct("collect", STRING)],
             [[I("a", "x"), I("a", "x"), I("a", "y")]],
             [I("a", {"x": 1}), UB("a", {"x": 1}), UA("a", {"x": 1, "y": 1})]),
    Scenario("max distinct - same as max", [distinct("max"), call("max")],
             [[I("a", 1), I("a", 5), I("a", 5), D("a", 5)]],
             [I("a", 1, 1), UB("a", 1, 1), UA("a", 5, 5)]),
    Scenario("distinct and plain calls on one column", [distinct("count"), call("count", out="c")],
             [[I("a", 1), I("a", 1)]], [I("a", 1, 1), UB("a", 1, 1), UA("a", 1, 2)]),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario(scenario):
    scenario.run()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario_as_one_row_bundles(scenario):
    scenario.as_one_row_bundles().run()


def test_distinct_over_insert_only_input():
    Scenario("", COUNT_SUM, [[I("a", 1), I("a", 1)], [I("a", 4)]], [I("a", 1, 1), UB("a", 1, 1), UA("a", 2, 5)],
             insert_only=True).run()
