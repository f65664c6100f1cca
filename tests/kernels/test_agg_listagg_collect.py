"""LISTAGG and COLLECT with retraction."""

import pytest
from group_agg_helpers import STRING, Scenario, call, ids

from changeflow.testing import (
    delete_record as D,
    insert_record as I,
    update_after_record as UA,
    update_before_record as UB,
)

LISTAGG = [call("listagg", STRING, out="l")]
COLLECT = [call("collect", STRING, out="c")]

SCENARIOS = [
    Scenario("listagg - joins in arrival order with the separator", [call("listagg", STRING, out="l", separator="|")],
             [[I("a", "x"), I("a", "y")]], [I("a", "x"), UB("a", "x"), UA("a", "x|y")]),
    Scenario("listagg - retract removes the first occurrence", LISTAGG,
             [[I("a", "x"), I("a", "y"), I("a", "x"), D("a", "x")]],
             [I("a", "x"), UB("a", "x"), UA("a", "x,y"), UB("a", "x,y"), UA("a", "x,y,x"),
              UB("a", "x,y,x"), UA("a", "y,x")]),
    Scenario("listagg - null when nothing survives, nulls ignored", LISTAGG,
             [[I("a", None), I("a", "x"), D("a", "x")]],
             [I("a", None), UB("a", None), UA("a", "x"), UB("a", "x"), UA("a", None)]),
    Scenario("collect - counts each value", COLLECT,
             [[I("a", "x"), I("a", "y"), I("a", "x")]],
             [I("a", {"x": 1}), UB("a", {"x": 1}), UA("a", {"x": 1, "y": 1}), UB("a", {"x": 1, "y": 1}),
              UA("a", {"x": 2, "y": 1})]),
    Scenario("collect - retraction removes entries that reach zero, empty is not null", COLLECT,
             [[I("a", None), I("a", "x"), D("a", "x")]],
             [I("a", {}), UB("a", {}), UA("a", {"x": 1}), UB("a", {"x": 1}), UA("a", {})]),
    Scenario("collect - state survives between batches", COLLECT,
             [[I("a", "x")], [I("a", "x")], [D("a", "x")]],
             [I("a", {"x": 1}), UB("a", {"x": 1}), UA("a", {"x": 2}), UB("a", {"x": 2}), UA("a", {"x": 1})]),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario(scenario):
    scenario.run()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario_as_one_row_bundles(scenario):
    scenario.as_one_row_bundles().run()


def test_collect_of_integers():
    Scenario("", [call("collect")], [[I("a", 1), I("a", 1), I("a", 2)]],
             [I("a", {1: 1}), UB("a", {1: 1}), UA("a", {1: 2}), UB("a", {1: 2}), UA("a", {1: 2, 2: 1})]).run()
