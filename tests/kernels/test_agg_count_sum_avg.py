"""COUNT(*), COUNT, SUM, SUM0 and AVG with retraction and nulls."""

import pytest
from group_agg_helpers import DOUBLE, INT, Scenario, call, ids

from changeflow.common.types import DataTypes
from changeflow.testing import (
    delete_record as D,
    insert_record as I,
    update_after_record as UA,
    update_before_record as UB,
)

ALL = [call("count_star", out="n"), call("count", out="c"), call("sum", out="s"), call("sum0", out="s0"),
       call("avg", out="a")]

SCENARIOS = [
    Scenario("nulls - count star counts them, the others ignore them", ALL,
             [[I("a", None), I("a", 4)]],
             [I("a", 1, 0, None, 0, None), UB("a", 1, 0, None, 0, None), UA("a", 2, 1, 4, 4, 4)]),
    Scenario("retract the only value - sum and avg become null, sum0 zero", ALL,
             [[I("a", None), I("a", 4), D("a", 4)]],
             [I("a", 1, 0, None, 0, None), UB("a", 1, 0, None, 0, None), UA("a", 2, 1, 4, 4, 4),
              UB("a", 2, 1, 4, 4, 4), UA("a", 1, 0, None, 0, None)]),
    Scenario("retract to empty - should emit delete of the last value", ALL,
             [[I("a", 3), I("a", 5), D("a", 3), D("a", 5)]],
             [I("a", 1, 1, 3, 3, 3), UB("a", 1, 1, 3, 3, 3), UA("a", 2, 2, 8, 8, 4),
              UB("a", 2, 2, 8, 8, 4), UA("a", 1, 1, 5, 5, 5), D("a", 1, 1, 5, 5, 5)]),
    Scenario("avg of integers - should truncate toward zero like Java", [call("avg")],
             [[I("a", -7), I("a", 2)]], [I("a", -7), UB("a", -7), UA("a", -2)]),
    Scenario("avg of doubles", [call("avg", DOUBLE)],
             [[I("a", 1.0), I("a", 2.0)]], [I("a", 1.0), UB("a", 1.0), UA("a", 1.5)]),
    Scenario("sum of INT - should wrap around on overflow like Java", [call("sum", INT)],
             [[I("a", 2147483647), I("a", 1)]], [I("a", 2147483647), UB("a", 2147483647), UA("a", -2147483648)]),
    Scenario("sum of TINYINT - should wrap around at 8 bits", [call("sum", DataTypes.TINYINT())],
             [[I("a", 100), I("a", 100)]], [I("a", 100), UB("a", 100), UA("a", -56)]),
    Scenario("sum of doubles", [call("sum", DOUBLE), call("sum0", DOUBLE, out="z")],
             [[I("a", 0.5), I("a", None), I("a", 0.25), D("a", 0.5)]],
             [I("a", 0.5, 0.5), UB("a", 0.5, 0.5), UA("a", 0.75, 0.75), UB("a", 0.75, 0.75), UA("a", 0.25, 0.25)]),
    Scenario("sum0 of doubles with only nulls - is 0.0", [call("sum0", DOUBLE)],
             [[I("a", None)]], [I("a", 0.0)]),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario(scenario):
    scenario.run()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario_as_one_row_bundles(scenario):
    scenario.as_one_row_bundles().run()
