"""Table API set operations: plans, schemas and Flink's refusals (no Spark)."""

from __future__ import annotations

import pytest

from changeflow.common.types import DataTypes as T
from changeflow.plan.nodes import Aggregate, Replicate, Union
from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment

LEFT = T.ROW([T.FIELD("k", T.INT()), T.FIELD("s", T.STRING())])
RIGHT = T.ROW([T.FIELD("id", T.BIGINT()), T.FIELD("name", T.STRING())])


def tables(settings):
    t_env = TableEnvironment.create(settings)
    return t_env.from_elements([(1, "a")], LEFT), t_env.from_elements([(2, "b")], RIGHT)


@pytest.mark.parametrize("method", ["union", "union_all", "intersect", "intersect_all", "minus", "minus_all"])
def test_batch_set_operations_take_the_left_names_and_the_common_types(method):
    left, right = tables(EnvironmentSettings.in_batch_mode())
    result = getattr(left, method)(right)
    assert [(n, str(t)) for n, t in result.plan.schema] == [("k", "BIGINT"), ("s", "STRING")]
    plan = result.plan
    if method == "union_all":
        assert isinstance(plan, Union)
    elif method.endswith("_all"):
        assert isinstance(plan, Replicate)  # rows repeated by their count, as Flink's $REPLICATE_ROWS$
    elif method == "union":
        assert isinstance(plan, Aggregate) and plan.keys == ("k", "s") and not plan.calls


@pytest.mark.parametrize("method, word", [("union", "UNION"), ("intersect", "INTERSECT"),
                                          ("intersect_all", "INTERSECT"), ("minus", "MINUS"),
                                          ("minus_all", "MINUS")])
def test_streaming_mode_refuses_all_but_union_all_as_flinks_table_api(method, word):
    left, right = tables(EnvironmentSettings.in_streaming_mode())
    with pytest.raises(PlanError, match=f"The {word} operation on two unbounded tables is currently not supported"):
        getattr(left, method)(right)
    assert left.union_all(right).get_schema().get_field_names() == ["k", "s"]


def test_distinct_and_arity_errors():
    left, right = tables(EnvironmentSettings.in_batch_mode())
    assert isinstance(left.distinct().plan, Aggregate)
    with pytest.raises(PlanError, match=r"INTERSECT inputs have 2 and 1 columns"):
        left.intersect(right.select(right.plan.field_names[0]))
    other = TableEnvironment.create(EnvironmentSettings.in_batch_mode()).from_elements([(1, "a")], LEFT)
    with pytest.raises(PlanError, match="same TableEnvironment"):
        left.minus(other)
