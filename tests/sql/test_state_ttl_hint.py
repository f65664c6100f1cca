"""The STATE_TTL query hint: per join side and per group aggregation, unknown names refused (no Spark)."""

from __future__ import annotations

import pytest

from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.nodes import Aggregate, Join
from changeflow.plan.rules.state_ttl import join_ttl_ms, operator_ttl_ms
from changeflow.sql import SqlError

DAY, HOUR = 86_400_000, 3_600_000


def below(plan, node_type):
    while not isinstance(plan, node_type):
        plan = plan.inputs[0]
    return plan


def test_join_hint_gives_each_side_its_ttl_by_alias(catalog):
    join = below(catalog.plan("SELECT /*+ STATE_TTL('a' = '1d', 'b' = '12h') */ a.id, region "
                              "FROM t a JOIN u b ON a.id = b.id"), Join)
    assert (join.left_ttl_ms, join.right_ttl_ms) == (DAY, 12 * HOUR)
    assert join_ttl_ms(join, 5000) == (DAY, 12 * HOUR)


def test_a_side_the_hint_does_not_name_keeps_the_global_ttl(catalog):
    join = below(catalog.plan("SELECT /*+ STATE_TTL('u' = '2 min') */ * FROM t JOIN u ON t.id = u.id"), Join)
    assert (join.left_ttl_ms, join.right_ttl_ms) == (None, 120_000)
    assert join_ttl_ms(join, 5000) == (5000, 120_000)


def test_three_way_join_the_second_join_left_input_has_no_name(catalog):
    plan = catalog.plan("SELECT /*+ STATE_TTL('t' = '1d', 'u' = '2d', 'v' = '3d') */ t.id "
                        "FROM t JOIN u ON t.id = u.id JOIN u AS v ON t.id = v.id")
    top = below(plan, Join)
    assert (top.left_ttl_ms, top.right_ttl_ms) == (None, 3 * DAY)
    assert (top.left.left_ttl_ms, top.left.right_ttl_ms) == (DAY, 2 * DAY)


def test_group_aggregate_hint_on_its_input_table(catalog):
    agg = below(catalog.plan("SELECT /*+ STATE_TTL('t' = '1d') */ name, SUM(v) FROM t GROUP BY name"), Aggregate)
    assert agg.state_ttl_ms == DAY
    assert operator_ttl_ms(agg, 0) == DAY
    # Without a hint the global TTL applies.
    assert operator_ttl_ms(below(catalog.plan("SELECT name, SUM(v) FROM t GROUP BY name"), Aggregate), 7) == 7


def test_hint_in_an_outer_query_does_not_reach_a_subquery_join(catalog):
    # Flink: "The options of following hints cannot match the name of input tables or views: `t, u` in `STATE_TTL`".
    with pytest.raises(SqlError, match="cannot match the name of input tables or views: \n`t, u` in `STATE_TTL`"):
        catalog.plan("SELECT /*+ STATE_TTL('t' = '1d', 'u' = '1d') */ * "
                     "FROM (SELECT t.id, u.region FROM t JOIN u ON t.id = u.id) s")


def test_unknown_table_name_is_refused_as_flink_does(catalog):
    with pytest.raises(SqlError, match="cannot match the name of input tables or views: \n`nope` in `STATE_TTL`"):
        catalog.plan("SELECT /*+ STATE_TTL('nope' = '2d', 't' = '1d') */ * FROM t JOIN u ON t.id = u.id")


def test_aliased_table_is_named_by_its_alias(catalog):
    with pytest.raises(SqlError, match="`t` in `STATE_TTL`"):
        catalog.plan("SELECT /*+ STATE_TTL('t' = '1d') */ * FROM t AS a JOIN u ON a.id = u.id")


def test_bad_duration_and_other_hints_are_refused(catalog):
    with pytest.raises(SqlError, match="invalid duration 'soon' for 't'"):
        catalog.plan("SELECT /*+ STATE_TTL('t' = 'soon') */ name, COUNT(*) FROM t GROUP BY name")
    with pytest.raises(SqlError, match="unsupported SQL: query hint `BROADCAST"):
        catalog.plan("SELECT /*+ BROADCAST(u) */ * FROM t JOIN u ON t.id = u.id")


def test_explain_shows_each_stateful_operator_ttl(catalog):
    plan = catalog.plan("SELECT /*+ STATE_TTL('u' = '1 s') */ t.name, COUNT(*) AS n FROM t JOIN u ON t.id = u.id "
                        "GROUP BY t.name")
    text = explain(plan, ExplainSettings(state_ttl_ms=20_000))
    assert "leftStateTtl=[20000ms], rightStateTtl=[1000ms]" in text
    assert "GroupAggregate(groupBy=[name], select=[name, COUNT(*) AS n], stateTtl=[20000ms], changelogMode=" in text
    assert "stateTtl" not in explain(plan, ExplainSettings(streaming=False, state_ttl_ms=20_000))
    no_global = explain(plan, ExplainSettings())
    assert "leftStateTtl=[0ms], rightStateTtl=[1000ms]" in no_global and "stateTtl=[" not in no_global


def test_explain_sql_reads_table_exec_state_ttl(planning_env):
    from changeflow.common import DataTypes

    planning_env.get_config().set("table.exec.state.ttl", "20 s")
    planning_env.create_temporary_view("s", planning_env.from_elements(
        [(1, 2)], DataTypes.ROW([DataTypes.FIELD("k", DataTypes.BIGINT()), DataTypes.FIELD("v", DataTypes.BIGINT())])))
    text = planning_env.explain_sql("SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) "
                                    "AS rn FROM s) WHERE rn <= 2")
    assert "stateTtl=[20000ms]" in text
