"""A streaming job reports its operators' keys and bytes (read from its checkpoint), not Spark's page counts."""

from changeflow.table import EnvironmentSettings, TableEnvironment


def test_a_job_reports_the_keys_of_each_stateful_operator(spark, tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("changeflow.checkpoint-dir", str(tmp_path / "checkpoints"))
    rows = [(i % 50, i % 50 % 7, i) for i in range(400)]
    t_env.create_temporary_view("src", t_env.from_elements(rows, ["k", "g", "v"]))
    t_env.execute_sql("CREATE TABLE out (g BIGINT, total BIGINT, PRIMARY KEY (g) NOT ENFORCED) "
                      "WITH ('connector' = 'blackhole')")
    job = t_env.execute_sql("INSERT INTO out SELECT g, SUM(s) FROM "
                            "(SELECT k, MAX(g) AS g, SUM(v) AS s FROM src GROUP BY k) GROUP BY g").get_job_client()
    job.wait()
    metrics = job.get_state_metrics()
    by_keys = sorted((m["key_columns"], m["keys"]) for m in metrics)
    # The inner aggregation keeps 50 keys (k), the outer 7 (g); Spark's own figure would be pages.
    assert by_keys == [(["g"], 7), (["k"], 50)], metrics
    assert all(m["operator"] == "GroupAggregate" and m["bytes"] > 0 and m["pages"] >= 1 for m in metrics)
    assert {m["operator_id"] for m in metrics} == {0, 1}


def test_a_job_without_state_reports_none(spark, tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.checkpoint-dir", str(tmp_path / "checkpoints"))
    t_env.create_temporary_view("src", t_env.from_elements([(1, 2)], ["a", "b"]))
    t_env.execute_sql("CREATE TABLE out (a BIGINT, b BIGINT) WITH ('connector' = 'blackhole')")
    job = t_env.execute_sql("INSERT INTO out SELECT a, b FROM src WHERE a > 0").get_job_client()
    job.wait()
    assert job.get_state_metrics() == []
