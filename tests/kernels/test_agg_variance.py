"""VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP: Welford's M2 and COUNT, as Flink 2.3 plans them."""

import math

import numpy as np
import pytest
from group_agg_helpers import DOUBLE, INT, Scenario, call, harness, ids
from hypothesis import given, settings, strategies as st

import changeflow.kernels.aggregate.variance as variance_module
from changeflow.kernels.aggregate.segments import Segments
from changeflow.kernels.aggregate.variance import welford_scan
from changeflow.testing import (
    assert_changelog,
    delete_record as D,
    insert_record as I,
    update_after_record as UA,
    update_before_record as UB,
)


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
    Scenario("integers - double arithmetic, truncated at the end", family(INT),
             # x = 1, 2: M2 = 0.5, so every result truncates to 0.
             # x = 1, 2, 4: M2 = 42/9; VAR_POP 1.56 -> 1, VAR_SAMP 2.33 -> 2, STDDEVs 1.25, 1.53 -> 1.
             [[I("a", 1), I("a", 2), I("a", 4)]],
             [I("a", 0, None, 0, None),
              UB("a", 0, None, 0, None), UA("a", 0, 0, 0, 0),
              UB("a", 0, 0, 0, 0), UA("a", 1, 2, 1, 1)]),
    Scenario("unchanged integral result - still emits because M2 and COUNT changed",
             [call("stddev_pop")],
             # Flink compares the aggregate node's outputs (M2, COUNT), not the projection.
             [[I("a", 4), I("a", 4)]], [I("a", 0), UB("a", 0), UA("a", 0)]),
    Scenario("null row - changes neither M2 nor COUNT, emits nothing", [call("var_pop")],
             [[I("a", 4), I("a", None)]], [I("a", 0)]),
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
    scenario.as_one_row_bundles().run()


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_vectorised_welford_matches_the_row_by_row_loop(data):
    lengths = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=40))
    n = sum(lengths)
    x = np.array(data.draw(st.lists(st.integers(-9, 9).map(lambda v: v / 4), min_size=n, max_size=n)))
    step = np.array(data.draw(st.lists(st.sampled_from([1, 1, 0, -1]), min_size=n, max_size=n)))
    k = len(lengths)
    base = (np.array(data.draw(st.lists(st.integers(-1, 3), min_size=k, max_size=k))),
            np.array(data.draw(st.lists(st.integers(-4, 4).map(float), min_size=k, max_size=k))),
            np.array(data.draw(st.lists(st.integers(0, 4).map(float), min_size=k, max_size=k))))
    segments = Segments(np.cumsum([0] + lengths[:-1]), n)
    saved = variance_module._VECTOR_MIN_SEGMENTS
    try:
        variance_module._VECTOR_MIN_SEGMENTS = 0
        vectorised = welford_scan(segments, x, step, base)
        variance_module._VECTOR_MIN_SEGMENTS = 10**9
        looped = welford_scan(segments, x, step, base)
    finally:
        variance_module._VECTOR_MIN_SEGMENTS = saved
    for a, b in zip(vectorised, looped, strict=True):
        assert a.tolist() == b.tolist()


def test_many_keys_take_the_vectorised_path():
    rows = [I(k, v) for v in (1, 2, 4) for k in range(40)]
    batch = Scenario("", family(INT), [rows], [])
    h = harness(batch.calls)
    out = h.process(rows)
    assert_changelog([r for r in out if r[0] == 7], [
        I(7, 0, None, 0, None), UB(7, 0, None, 0, None), UA(7, 0, 0, 0, 0), UB(7, 0, 0, 0, 0), UA(7, 1, 2, 1, 1)])
