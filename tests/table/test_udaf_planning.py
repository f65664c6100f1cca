"""Planning Python aggregate functions (no Spark): schemas, EXPLAIN, and the refusals."""

from __future__ import annotations

import pytest

from changeflow.common import DataTypes, Row
from changeflow.functions import AggregateFunction, TableAggregateFunction
from changeflow.plan.nodes import Aggregate
from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col
from changeflow.table.udf import udaf, udtaf


class CountAndSum(AggregateFunction):
    """PyFlink's basic_operations example: takes the whole row."""

    def create_accumulator(self):
        return Row(0, 0)

    def accumulate(self, acc, row):
        acc[0] += 1
        acc[1] += row.v

    def get_value(self, acc):
        return Row(acc[0], acc[1])

    def get_result_type(self):
        return DataTypes.ROW([DataTypes.FIELD("cnt", DataTypes.BIGINT()), DataTypes.FIELD("sum", DataTypes.BIGINT())])


class Sum(AggregateFunction):
    def create_accumulator(self):
        return [0]

    def accumulate(self, acc, v):
        acc[0] += v or 0

    def get_value(self, acc):
        return acc[0]


class Top1(TableAggregateFunction):
    def create_accumulator(self):
        return [None]

    def accumulate(self, acc, v):
        acc[0] = v if acc[0] is None or (v is not None and v > acc[0]) else acc[0]

    def emit_value(self, acc):
        if acc[0] is not None:
            yield Row(acc[0])


@pytest.fixture
def t_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


def source(t_env):
    return t_env.from_elements([(1, 2), (1, 3)], ["k", "v"])


def names_and_types(table):
    schema = table.get_schema()
    return schema.get_field_names(), [str(t) for t in schema.get_field_data_types()]


def test_aggregate_with_the_function_itself_takes_the_row_and_expands(t_env):
    count_sum = udaf(CountAndSum())
    table = source(t_env).group_by(col("k")).aggregate(count_sum.alias("cnt", "total")).select(
        col("k"), col("cnt"), col("total"))
    assert names_and_types(table) == (["k", "cnt", "total"], ["BIGINT", "BIGINT", "BIGINT"])
    node = table.plan
    while not isinstance(node, Aggregate):
        node = node.inputs[0]
    assert node.calls[0].row_fields == ("k", "v")


def test_flat_aggregate_names_come_from_the_result_row_or_the_alias(t_env):
    top1 = udtaf(Top1(), result_type=DataTypes.ROW([DataTypes.FIELD("best", DataTypes.BIGINT())]), name="top1")
    grouped = source(t_env).group_by(col("k"))
    assert names_and_types(grouped.flat_aggregate(top1(col("v"))).select(col("k"), col("best")))[0] == ["k", "best"]
    aliased = source(t_env).flat_aggregate(top1(col("v")).alias("b")).select(col("b"))
    assert names_and_types(aliased) == (["b"], ["BIGINT"])
    assert "PythonGroupTableAggregate" in aliased.explain()


def test_explain_names_the_udaf(t_env):
    my_sum = udaf(Sum(), result_type=DataTypes.BIGINT(), name="my_sum")
    plan = source(t_env).group_by(col("k")).select(col("k"), my_sum(col("v")).alias("s")).explain()
    assert "my_sum(v) AS $agg0" in plan


def test_refusals(t_env):
    my_sum = udaf(Sum(), result_type=DataTypes.BIGINT(), name="my_sum")
    top1 = udtaf(Top1(), result_type=DataTypes.BIGINT(), name="top1")
    src = source(t_env)
    with pytest.raises(PlanError, match="flat_aggregate.*takes a table aggregate function"):
        src.group_by(col("k")).flat_aggregate(my_sum(col("v")))
    with pytest.raises(PlanError, match="can only be called in flat_aggregate"):
        src.group_by(col("k")).select(top1(col("v")))
    row_result = udaf(CountAndSum(), name="cs")
    with pytest.raises(NotImplementedError, match="ROW result in select"):
        src.group_by(col("k")).select(row_result(col("v")))
    with pytest.raises(PlanError, match="2 alias names"):
        src.group_by(col("k")).aggregate(my_sum(col("v")).alias("a", "b"))
    updating = src.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    with pytest.raises(ValueError, match="my_sum: Method retract is not implemented"):
        updating.group_by(col("s")).select(col("s"), my_sum(col("k"))).explain()


def test_sql_resolves_a_registered_udaf_in_group_by(t_env):
    t_env.create_temporary_view("src", source(t_env))
    my_sum = udaf(Sum(), result_type=DataTypes.BIGINT(), name="my_sum")
    if hasattr(t_env, "create_temporary_function"):
        t_env.create_temporary_function("my_sum", my_sum)
    else:  # registered through the catalog until the environment has the method
        t_env._catalog.functions.create("my_sum", my_sum.function, system=False)
    table = t_env.sql_query("SELECT k, MY_SUM(v) AS s FROM src GROUP BY k")
    assert names_and_types(table) == (["k", "s"], ["BIGINT", "BIGINT"])
    assert "my_sum(v)" in table.explain()
