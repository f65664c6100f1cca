"""Choosing two-phase aggregation (table.optimizer.agg-phase-strategy) and how EXPLAIN shows it."""

from __future__ import annotations

import pytest

from changeflow.plan.rules.agg_phase import two_phase_aggregates
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col


@pytest.fixture
def t_env():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.exec.mini-batch.enabled", "true")
    t_env.get_config().set("table.exec.mini-batch.allow-latency", "1 s")
    t_env.get_config().set("table.exec.mini-batch.size", "1000")
    return t_env


@pytest.fixture
def src(t_env):
    return t_env.from_elements([(1, "a", 1.5), (2, "b", 2.5)], ["id", "name", "score"])


def per_name(src, *aggregates):
    return src.group_by(col("name")).select(col("name"), *aggregates)


def test_mini_batch_plans_local_aggregate_below_the_exchange_and_global_above(src):
    plan = per_name(src, col("id").sum.alias("s"), col("id").count.alias("c"), col("name").max.alias("m")).explain()
    lines = plan.splitlines()
    assert lines[2:5] == [
        "+- GlobalGroupAggregate(groupBy=[name], select=[name, SUM((sum$0, count$1)) AS $agg0, "
        "COUNT(count$2) AS $agg1, MAX(max$3) AS $agg2], changelogMode=[I,UB,UA])",
        "   +- Exchange(distribution=[hash[name]], changelogMode=[I])",
        "      +- LocalGroupAggregate(groupBy=[name], select=[name, SUM(id) AS (sum$0, count$1), "
        "COUNT(id) AS count$2, MAX(name) AS max$3], changelogMode=[I])",
    ]
    assert "MiniBatchGroupAggregate" not in plan


@pytest.mark.parametrize("strategy, two_phase", [("AUTO", True), ("TWO_PHASE", True), ("ONE_PHASE", False)])
def test_strategy_decides(t_env, src, strategy, two_phase):
    t_env.get_config().set("table.optimizer.agg-phase-strategy", strategy)
    plan = per_name(src, col("id").sum.alias("s")).explain()
    assert ("LocalGroupAggregate" in plan) == two_phase
    assert ("MiniBatchGroupAggregate" in plan) == (not two_phase)


def test_without_mini_batch_two_phase_is_not_planned_as_in_flink(src):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.optimizer.agg-phase-strategy", "TWO_PHASE")
    plan = per_name(t_env.from_elements([(1, "a")], ["id", "name"]), col("id").sum.alias("s")).explain()
    assert "GroupAggregate(groupBy=[name]" in plan and "Local" not in plan and "Global" not in plan


@pytest.mark.parametrize("aggregate", [
    col("score").sum,        # float sums add one row at a time in source order
    col("score").avg,
    col("id").count.distinct,
    col("id").first_value,
], ids=["float sum", "float avg", "distinct", "first_value"])
def test_any_call_that_cannot_merge_keeps_one_phase(src, aggregate):
    plan = per_name(src, col("id").sum.alias("s"), aggregate.alias("x")).explain()
    assert "MiniBatchGroupAggregate(groupBy=[name]" in plan and "LocalGroupAggregate" not in plan


def test_only_aggregates_over_insert_only_input_are_split(src):
    inner = per_name(src, col("id").sum.alias("s"))
    outer = inner.group_by(col("s")).select(col("s"), col("name").count.alias("c"))
    plan = outer.explain()
    assert "MiniBatchGroupAggregate(groupBy=[s]" in plan  # its input updates
    assert "GlobalGroupAggregate(groupBy=[name]" in plan
    assert len(two_phase_aggregates(outer.plan, mini_batch=True, strategy="AUTO")) == 1


def test_global_aggregate_is_split_too(src):
    plan = src.select(col("id").sum.alias("t")).explain()
    assert "GlobalGroupAggregate(select=[SUM((sum$0, count$1)) AS $agg0]" in plan
    assert "Exchange(distribution=[single], changelogMode=[I])" in plan
    assert "LocalGroupAggregate(select=[SUM(id) AS (sum$0, count$1)], changelogMode=[I])" in plan
