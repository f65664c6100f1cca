"""VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP (Calcite's reduction to sums)."""

import math

import pytest
from group_agg_helpers import DOUBLE, INT, Scenario, call, ids

from changeflow.testing import delete_record as D, insert_record as I, update_after_record as UA, update_before_record as UB

def family(arg_type):
    return [call(f, arg_type, out=f) for f in ("var_pop", "var_samp", "stddev_pop", "stddev_samp")]


SCENARIOS = [
    Scenario("doubles - one value: population 0, sample null", family(DOUBLE),
             [[I("a", 2.0)]], [I("a", 0.0, None, 0.0, None)]),
    Scenario("doubles - four values", family(DOUBLE),
             [[I("a", 1.0), I("a", 2.0), I("a", 3.0), I("a", 4.0)]],
             [I("a", 0.0, None, 0.0, None),
              UB("a", 0.0, None, 0.0, None), UA("a", 0.25, 0.5, 0.5, math.sqrt(0.5)),
              UB("a", 0.25, 0.5, 0.5, math.sqrt(0.5)), UA("a", 2 / 3, 1.0, math.sqrt(2 / 3), 1.0),
              UB("a", 2 / 3, 1.0, math.sqrt(2 / 3), 1.0), UA("a", 1.25, 5 / 3, math.sqrt(1.25), math.sqrt(5 / 3))]),
    Scenario("integers - integer arithmetic truncates every division", family(INT),
             # x = 1, 2, 4: SUM(x*x) = 21, SUM(x) = 7, 49 / 3 = 16, 21 - 16 = 5;
             # VAR_POP = 5 / 3 = 1, VAR_SAMP = 5 / 2 = 2, STDDEV_SAMP = (int) sqrt(2) = 1.
             [[I("a", 1), I("a", 2), I("a", 4)]],
             [I("a", 0, None, 0, None),
              UB("a", 0, None, 0, None), UA("a", 0, 1, 0, 1),  # x = 1, 2: (5 - 9 / 2) = 1
              UB("a", 0, 1, 0, 1), UA("a", 1, 2, 1, 1)]),
    Scenario("retraction back to one value", family(DOUBLE),
             [[I("a", 1.0), I("a", 3.0), D("a", 1.0)]],
             [I("a", 0.0, None, 0.0, None), UB("a", 0.0, None, 0.0, None), UA("a", 1.0, 2.0, 1.0, math.sqrt(2.0)),
              UB("a", 1.0, 2.0, 1.0, math.sqrt(2.0)), UA("a", 0.0, None, 0.0, None)]),
    Scenario("nulls - ignored; no values gives null", family(DOUBLE),
             [[I("a", None)]], [I("a", None, None, None, None)]),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario(scenario):
    scenario.run()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario_as_one_row_bundles(scenario):
    Scenario(scenario.name, scenario.calls, [[r] for b in scenario.batches for r in b], scenario.expected,
             mini_batch=True).run()
