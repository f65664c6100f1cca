"""Planning a join: output names and nullability as Flink's, equi keys split from the rest of ON."""

from __future__ import annotations

import pytest

from changeflow.common.types import DataTypes
from changeflow.plan.join_builder import join, unique_key_of
from changeflow.plan.nodes import Source
from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col

USERS = Source("users", (("id", DataTypes.INT(False)), ("name", DataTypes.STRING())), "elements", [])
ORDERS = Source("orders", (("id", DataTypes.BIGINT(False)), ("user", DataTypes.INT()), ("name", DataTypes.STRING())),
                "elements", [])


@pytest.mark.parametrize("join_type,left_nullable,right_nullable", [
    ("INNER", False, False), ("LEFT", False, True), ("RIGHT", True, False), ("FULL", True, True),
    ("left outer", False, True), ("FULL OUTER", True, True),
])
def test_outer_sides_become_nullable(join_type, left_nullable, right_nullable):
    node = join(USERS, ORDERS, join_type, col("id") == col("user"))
    types = dict(node.schema)
    assert types["id"].nullable is left_nullable
    assert types["id0"].nullable is right_nullable


def test_clashing_right_columns_get_the_first_free_suffix():
    node = join(USERS, ORDERS, "INNER", col("id") == col("user"))
    assert node.field_names == ["id", "name", "id0", "user", "name0"]


def test_equi_keys_are_split_from_the_rest_of_the_condition():
    node = join(USERS, ORDERS, "LEFT", (col("user") == col("id")) & (col("name") == col("name0")) & (col("id0") > 5))
    assert (node.left_keys, node.right_keys) == (("id", "name"), ("user", "name"))
    assert str(node.condition) == "(id0 > 5)"


def test_a_condition_without_equalities_keeps_no_keys():
    node = join(USERS, ORDERS, "INNER", col("id") < col("user"))
    assert node.left_keys == () and str(node.condition) == "(id < user)"


def test_errors_name_the_problem():
    with pytest.raises(PlanError, match="unknown join type 'cross'"):
        join(USERS, ORDERS, "cross", None)
    with pytest.raises(PlanError, match="must be BOOLEAN"):
        join(USERS, ORDERS, "INNER", col("id") + col("user"))
    with pytest.raises(PlanError, match="cannot compare id of type INT NOT NULL with name0 of type STRING"):
        join(USERS, ORDERS, "INNER", col("id") == col("name0"))


def test_unique_key_of_an_aggregation_is_its_grouping_key():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t = (t_env.from_elements([(1, "a")], ["k", "w"]).group_by(col("k"))
         .select(col("k").alias("kk"), col("w").count.alias("n")))
    assert unique_key_of(t.plan) == ("kk",)
    assert unique_key_of(USERS) is None


def test_table_api_join_methods():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    left = t_env.from_elements([(1, "a")], ["a", "b"])
    right = t_env.from_elements([(1, "x")], ["c", "d"])
    assert left.join(right, col("a") == col("c")).plan.join_type == "INNER"
    assert left.join(right).plan.left_keys == ()
    assert left.left_outer_join(right, col("a") == col("c")).plan.join_type == "LEFT"
    assert left.right_outer_join(right, col("a") == col("c")).plan.join_type == "RIGHT"
    assert left.full_outer_join(right, col("a") == col("c")).get_schema().get_field_names() == ["a", "b", "c", "d"]
    with pytest.raises(PlanError, match="ambiguous column names \\['a'\\]"):
        left.join(t_env.from_elements([(1,)], ["a"]), col("a") == col("a"))
    with pytest.raises(PlanError, match="needs a join predicate"):
        left.full_outer_join(right, None)
