"""sql_query, views, computed columns and EXPLAIN over the one catalog (no Spark)."""

import pytest

from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment

GEN = ("CREATE TABLE src (id INT, name STRING, pt AS PROCTIME(), twice AS id * 2, PRIMARY KEY (id) NOT ENFORCED) "
       "WITH ('connector' = 'datagen', 'number-of-rows' = '3')")


@pytest.fixture
def t_env():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(GEN)
    return t_env


def test_sql_query_reads_ddl_tables_and_table_api_views_alike(t_env):
    t_env.create_temporary_view("regions", t_env.from_elements([(1, "eu")], ["id", "region"]))
    table = t_env.sql_query("SELECT s.name, r.region FROM src AS s JOIN regions AS r ON s.id = r.id")
    assert table.get_schema().get_field_names() == ["name", "region"]
    with pytest.raises(PlanError, match="sql_query\\(\\) takes a query"):
        t_env.sql_query("SHOW TABLES")


def test_missing_table_in_a_query_names_it_and_lists_known_ones(t_env):
    with pytest.raises(PlanError, match="Table 'nosuch' not found; known tables and views: src"):
        t_env.sql_query("SELECT * FROM nosuch")


def test_computed_columns_are_typed_by_the_planner(t_env):
    rows = {r[0]: tuple(r) for r in t_env.execute_sql("DESCRIBE src").collect()}
    assert rows["twice"] == ("twice", "INT", False, None, "AS `id` * 2", None)
    assert rows["pt"][1] == "TIMESTAMP_LTZ(3) *PROCTIME*"
    with pytest.raises(PlanError, match="nope"):
        t_env.execute_sql("CREATE TABLE bad (a INT, b AS nope + 1) WITH ('connector' = 'datagen')")


def test_create_view_is_planned_at_creation_and_described(t_env):
    t_env.execute_sql("CREATE TEMPORARY VIEW counts (who, n) AS SELECT name, COUNT(*) FROM src GROUP BY name")
    rows = [tuple(r) for r in t_env.execute_sql("DESCRIBE counts").collect()]
    assert rows == [("who", "STRING", True, None, None, None), ("n", "BIGINT", False, None, None, None)]
    assert t_env.list_views() == ["counts"]
    with pytest.raises(PlanError, match="nosuch"):
        t_env.execute_sql("CREATE VIEW broken AS SELECT * FROM nosuch")


def test_explain_select_and_insert_print_the_plan_text(t_env, capsys):
    t_env.execute_sql("CREATE TABLE out (name STRING, n BIGINT) WITH ('connector' = 'print')")
    t_env.execute_sql("EXPLAIN SELECT id FROM src WHERE id > 1").print()
    t_env.execute_sql("EXPLAIN CHANGELOG_MODE INSERT INTO out SELECT name, COUNT(*) FROM src GROUP BY name").print()
    out = capsys.readouterr().out
    assert out.startswith("== Physical Plan ==\nCalc(select=[id], changelogMode=[I])\n")
    assert "TableSourceScan(table=[[default_catalog, default_database, src]]" in out
    assert "\nSink(table=[default_catalog.default_database.out], fields=[name, n]" in out
    assert "GroupAggregate(groupBy=[name], select=[name, COUNT(*) AS EXPR$1], changelogMode=[I,UB,UA])" in out


def test_insert_of_an_updating_query_into_a_file_sink_fails_at_planning(t_env):
    t_env.execute_sql("CREATE TABLE files (name STRING, n BIGINT) WITH ('connector' = 'filesystem', "
                      "'path' = '/nowhere', 'format' = 'csv')")
    with pytest.raises(PlanError, match="doesn't support consuming update changes which is produced by node "
                                        "GroupAggregate\\(groupBy=\\[name\\]"):
        t_env.execute_sql("INSERT INTO files SELECT name, COUNT(*) FROM src GROUP BY name")


def test_errors_in_a_statement_s_query_point_into_the_statement(t_env):
    t_env.execute_sql("CREATE TABLE out (a INT) WITH ('connector' = 'blackhole')")
    with pytest.raises(PlanError, match="Table 'nosuch' not found.*at line 2, column 15"):
        t_env.execute_sql("INSERT INTO out\nSELECT a FROM nosuch")
