"""``execution.runtime-mode`` set through a TableEnvironment's configuration: STREAMING, BATCH, AUTOMATIC."""

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col


def _counts(t_env):
    return t_env.from_elements([(1, "a")], ["k", "v"]).group_by(col("k")).select(col("k"), col("v").count.alias("n"))


@pytest.mark.parametrize("mode, batch", [("streaming", False), ("batch", True), ("automatic", True)])
def test_mode_set_through_the_config_decides_how_a_bounded_query_runs(mode, batch):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("execution.runtime-mode", mode)
    plan = _counts(t_env).explain()
    assert plan.startswith("== Physical Plan (batch) ==") == batch
    assert ("HashAggregate" in plan) == batch and ("changelogMode=[I,UB,UA]" in plan) != batch


def test_automatic_runs_a_query_over_an_unbounded_source_in_streaming_mode(tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("SET 'execution.runtime-mode' = 'automatic'")
    t_env.execute_sql(f"CREATE TABLE clicks (k BIGINT, v STRING) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}', 'format' = 'json', 'source.monitor-interval' = '1 s')")
    t_env.execute_sql(f"CREATE TABLE files (k BIGINT, v STRING) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}', 'format' = 'json')")
    query = "SELECT k, COUNT(v) AS n FROM {} GROUP BY k"
    assert "changelogMode=[I,UB,UA]" in t_env.sql_query(query.format("clicks")).explain()
    assert t_env.sql_query(query.format("files")).explain().startswith("== Physical Plan (batch) ==")
