"""Planning without Spark: schemas, Flink result types, EXPLAIN and errors."""

from __future__ import annotations

import pytest

from changeflow.common.types import DataTypes
from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col, count_star, lit


@pytest.fixture
def t_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


@pytest.fixture
def src(t_env):
    return t_env.from_elements([(1, "a", 1.5), (2, "b", 2.5)], ["id", "name", "score"])


def types(table):
    return {n: str(t) for n, t in zip(table.get_schema().get_field_names(),
                                       table.get_schema().get_field_data_types(), strict=True)}


def test_from_elements_infers_pyflink_types(src):
    assert types(src) == {"id": "BIGINT", "name": "STRING", "score": "DOUBLE"}


def test_aggregate_result_types_follow_flink(src):
    t = src.group_by(col("name")).select(
        col("name"), col("id").avg.alias("a"), col("score").avg.alias("d"),
        col("id").count.alias("c"), count_star().alias("n"), col("id").sum.alias("s"),
        col("id").stddev_pop.alias("sd"), col("name").list_agg(";").alias("l"))
    assert types(t) == {"name": "STRING", "a": "BIGINT", "d": "DOUBLE", "c": "BIGINT NOT NULL",
                        "n": "BIGINT NOT NULL", "s": "BIGINT", "sd": "BIGINT", "l": "STRING"}


def test_mod_takes_the_divisor_type(src):
    assert types(src.select((col("id") % 10).alias("b"))) == {"b": "INT"}


def test_explain_shows_changelog_modes_and_mini_batch(t_env, src):
    inner = src.group_by(col("name")).select(col("name"), col("id").sum.alias("s"))
    outer = inner.group_by(col("s")).select(col("s"), col("name").count.alias("c"))
    plan = outer.explain()
    assert "GroupAggregate(groupBy=[s], select=[s, COUNT(name) AS $agg0], changelogMode=[I,UB,UA,D])" in plan
    assert "GroupAggregate(groupBy=[name], select=[name, SUM(id) AS $agg0], changelogMode=[I,UB,UA])" in plan
    assert "TableSourceScan" in plan and "changelogMode=[I])" in plan
    t_env.get_config().set("table.exec.mini-batch.enabled", "true")
    t_env.get_config().set("table.exec.mini-batch.allow-latency", "5 s")
    t_env.get_config().set("table.exec.mini-batch.size", "100")
    plan = outer.explain()
    assert "MiniBatchGroupAggregate(groupBy=[s]" in plan
    assert "MiniBatchAssigner(interval=[5000ms], mode=[ProcTime], size=[100], changelogMode=[I])" in plan


def test_unknown_column_names_it_and_the_available_ones(src):
    with pytest.raises(PlanError, match=r"column 'nme' not found; available columns: id, name, score"):
        src.select(col("nme"))


def test_non_key_column_in_aggregate_select_is_an_error(src):
    with pytest.raises(PlanError, match=r"column 'id' .* neither a grouping key"):
        src.group_by(col("name")).select(col("id"), col("score").sum)


def test_type_errors_name_both_types(src):
    with pytest.raises(PlanError,
                       match=r"cannot compare name of type STRING with 3 of type INT NOT NULL in \(name > 3\)"):
        src.where(col("name") > 3)
    with pytest.raises(PlanError, match="must be BOOLEAN, but it is BIGINT"):
        src.where(col("id") + 1)


def test_misspelt_configuration_key_is_an_error(t_env):
    with pytest.raises(ValueError, match="table.exec.mini-batch.enabled"):
        t_env.get_config().set("table.exec.mini-batch.enable", "true")
    with pytest.raises(ValueError, match="table.exec.mini-batch.size"):
        t_env.get_config().set("table.exec.mini-batch.size", "lots")


def test_null_column_without_schema_asks_for_one(t_env):
    with pytest.raises(PlanError, match="cannot infer the type of column 'v'"):
        t_env.from_elements([(1, None)], ["k", "v"])
    t = t_env.from_elements([(1, None)], DataTypes.ROW([DataTypes.FIELD("k", DataTypes.BIGINT()),
                                                        DataTypes.FIELD("v", DataTypes.INT())]))
    assert types(t) == {"k": "BIGINT", "v": "INT"}


def test_table_config_get_returns_strings_as_pyflink(t_env):
    t_env.get_config().set("table.exec.mini-batch.allow-latency", "5000 ms")
    assert t_env.get_config().get("table.exec.mini-batch.allow-latency") == "5 s"
    assert t_env.get_config().get("table.exec.mini-batch.size", "x") == "x"


def test_literal_arithmetic_types(src):
    assert types(src.select((col("id") + lit(1.5)).alias("x"), (col("id") / 2).alias("y"))) == {
        "x": "DOUBLE", "y": "BIGINT"}


def test_select_may_repeat_a_grouping_expression(src):
    t = src.group_by(col("id") % 3).select((col("id") % 3).alias("b"), col("score").sum.alias("s"))
    assert types(t) == {"b": "INT", "s": "DOUBLE"}
    with pytest.raises(PlanError, match="neither a grouping key"):
        src.group_by(col("id") % 3).select((col("id") % 4).alias("b"))


def test_bad_element_names_the_element_column_and_value(t_env):
    with pytest.raises(PlanError, match=r"element 1 \(2, 'x'\): column 'v' of type BIGINT cannot hold 'x' \(str\)"):
        t_env.from_elements([(1, 2), (2, "x")], ["k", "v"])
    schema = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.INT())])
    with pytest.raises(PlanError, match=r"column 'k' of type INT cannot hold 4294967296"):
        t_env.from_elements([(2**32,)], schema)
