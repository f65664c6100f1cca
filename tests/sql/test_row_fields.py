"""ROW field access (``person.id``) and a watermark on a computed column, as nexmark's DDL uses them (no Spark)."""

from __future__ import annotations

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment


@pytest.fixture
def t_env(tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(f"CREATE TABLE ev (kind INT, p ROW<id BIGINT, `dateTime` TIMESTAMP(3), inner_row ROW<x INT>>, "
                      f"`dateTime` AS CASE WHEN kind = 0 THEN p.`dateTime` ELSE NULL END, "
                      f"WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json')")
    return t_env


def test_fields_of_a_row_column_and_a_rowtime_computed_from_them(t_env):
    table = t_env.sql_query("SELECT p.id, ev.p.inner_row.x AS x, `dateTime` FROM ev WHERE kind = 0")
    assert table.get_schema().get_field_names() == ["id", "x", "dateTime"]
    assert [str(t) for t in table.get_schema().get_field_data_types()] == ["BIGINT", "INT", "TIMESTAMP(3) *ROWTIME*"]
    plan = table.explain()
    assert "p.id AS id, p.inner_row.x AS x" in plan and "WatermarkAssigner(rowtime=[dateTime]" in plan


def test_unknown_fields_and_non_rows_are_refused_by_name(t_env):
    with pytest.raises(Exception, match="ROW p has no field 'nope'; its fields: id, dateTime, inner_row"):
        t_env.sql_query("SELECT p.nope FROM ev")
    with pytest.raises(Exception, match="cannot access field 'x' of kind: it is INT, not a ROW"):
        t_env.sql_query("SELECT kind.x FROM ev")
    with pytest.raises(Exception, match="column 'q.id' not found"):
        t_env.sql_query("SELECT q.id FROM ev")


def test_a_watermark_on_a_computed_column_that_is_no_timestamp_fails_at_create(t_env, tmp_path):
    with pytest.raises(Exception, match="Invalid data type of time field.*time field type is INT"):
        t_env.execute_sql(f"CREATE TABLE bad (a INT, b AS a + 1, WATERMARK FOR b AS b) "
                          f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json')")
