"""ALTER TABLE/VIEW, SHOW CREATE, CREATE/DROP FUNCTION and SHOW FUNCTIONS (no Spark).

The expected SHOW CREATE texts and error messages are what Flink 2.3 printed for the same
statements (run under PyFlink 2.3 when these tests were written).
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment

PEOPLE = ("CREATE TABLE t (id BIGINT NOT NULL, name STRING COMMENT 'who', ts TIMESTAMP(3), d AS id * 2, "
          "PRIMARY KEY (id) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) COMMENT 'people' "
          "WITH ('connector' = 'datagen', 'rows-per-second' = '5')")

FLINK_SHOW_CREATE_T = """\
CREATE TABLE `default_catalog`.`default_database`.`t` (
  `id` BIGINT NOT NULL,
  `name` VARCHAR(2147483647) COMMENT 'who',
  `ts` TIMESTAMP(3),
  `d` AS `id` * 2,
  WATERMARK FOR `ts` AS `ts` - INTERVAL '5' SECOND,
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
COMMENT 'people'
WITH (
{options}
)
"""


@pytest.fixture
def t_env():
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(PEOPLE)
    env.execute_sql("CREATE TEMPORARY TABLE u (a INT) WITH ('connector' = 'blackhole')")
    env.execute_sql("CREATE VIEW v (x, y) AS SELECT id, name FROM t WHERE id > 1")
    return env


def _text(env, sql: str) -> str:
    (row,) = list(env.execute_sql(sql).collect())
    return row[0]


def test_show_create_table_prints_flinks_ddl(t_env):
    assert _text(t_env, "SHOW CREATE TABLE t") == FLINK_SHOW_CREATE_T.format(
        options="  'connector' = 'datagen',\n  'rows-per-second' = '5'")
    assert _text(t_env, "SHOW CREATE TABLE u") == textwrap.dedent("""\
        CREATE TEMPORARY TABLE `default_catalog`.`default_database`.`u` (
          `a` INT
        )
        WITH (
          'connector' = 'blackhole'
        )
        """)


def test_show_create_view_prints_the_query_as_written(t_env):
    assert _text(t_env, "SHOW CREATE VIEW v") == ("CREATE VIEW `default_catalog`.`default_database`.`v` (\n  `x`,\n"
                                                  "  `y`\n)\nAS SELECT id, name FROM t WHERE id > 1\n")
    with pytest.raises(Exception, match="is a view. Please use SHOW CREATE VIEW"):
        t_env.execute_sql("SHOW CREATE TABLE v")


def test_alter_table_set_and_reset_options_as_flink(t_env):
    t_env.execute_sql("ALTER TABLE t SET ('rows-per-second' = '7', 'fields.id.kind' = 'sequence')")
    assert _text(t_env, "SHOW CREATE TABLE t") == FLINK_SHOW_CREATE_T.format(
        options="  'connector' = 'datagen',\n  'fields.id.kind' = 'sequence',\n  'rows-per-second' = '7'")
    t_env.execute_sql("ALTER TABLE t RESET ('rows-per-second')")
    assert _text(t_env, "SHOW CREATE TABLE t") == FLINK_SHOW_CREATE_T.format(
        options="  'connector' = 'datagen',\n  'fields.id.kind' = 'sequence'")


def test_alter_rename_and_flinks_errors(t_env):
    t_env.execute_sql("ALTER VIEW v RENAME TO v2")
    assert [tuple(r) for r in t_env.execute_sql("SHOW VIEWS").collect()] == [("v2",)]
    for sql in ("ALTER TABLE u RENAME TO w", "ALTER TABLE nosuch RENAME TO z"):
        name = sql.split()[2]
        with pytest.raises(Exception, match=f"Table `default_catalog`.`default_database`.`{name}` doesn't exist "
                                            "or is a temporary table."):
            t_env.execute_sql(sql)
    with pytest.raises(Exception, match="already exists"):
        t_env.execute_sql("ALTER VIEW v2 RENAME TO t")
    with pytest.raises(Exception, match="unsupported ALTER TABLE"):
        t_env.execute_sql("ALTER TABLE t ADD c INT")


def test_alter_view_as_replaces_the_query_and_validates_it(t_env):
    t_env.execute_sql("ALTER VIEW v AS SELECT name FROM t")
    assert t_env.from_path("v").get_schema().get_field_names() == ["name"]
    with pytest.raises(Exception, match="nosuch"):
        t_env.execute_sql("ALTER VIEW v AS SELECT nosuch FROM t")


@pytest.fixture
def udf_module(tmp_path, monkeypatch):
    (tmp_path / "cf_sql_udfs.py").write_text(textwrap.dedent("""\
        from changeflow.common.types import DataTypes
        from changeflow.table.udf import udf

        @udf(result_type=DataTypes.BIGINT())
        def twice(x):
            return x * 2
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "cf_sql_udfs"
    sys.modules.pop("cf_sql_udfs", None)


def test_create_python_function_from_sql_and_plan_a_call(t_env, udf_module):
    t_env.execute_sql(f"CREATE TEMPORARY FUNCTION twice AS '{udf_module}.twice' LANGUAGE PYTHON")
    t_env.execute_sql(f"CREATE TEMPORARY SYSTEM FUNCTION tw AS '{udf_module}.twice' LANGUAGE PYTHON")
    t_env.execute_sql(f"CREATE FUNCTION IF NOT EXISTS twice AS '{udf_module}.twice' LANGUAGE PYTHON")
    assert [r[0] for r in t_env.execute_sql("SHOW USER FUNCTIONS").collect()] == ["tw", "twice"]
    plan = t_env.sql_query("SELECT twice(id) AS a, tw(id) AS b FROM t")
    assert [str(t) for t in plan.get_schema().get_field_data_types()] == ["BIGINT", "BIGINT"]
    t_env.execute_sql("DROP TEMPORARY SYSTEM FUNCTION tw")
    t_env.execute_sql("DROP TEMPORARY FUNCTION twice")
    assert list(t_env.execute_sql("SHOW USER FUNCTIONS").collect()) == []


def test_function_errors_name_what_is_wrong(t_env, udf_module):
    with pytest.raises(Exception, match="LANGUAGE JAVA: Java user-defined functions are not supported"):
        t_env.execute_sql("CREATE FUNCTION f AS 'com.example.F'")
    with pytest.raises(Exception, match="module 'cf_sql_udfs' has no attribute 'nope'"):
        t_env.execute_sql(f"CREATE FUNCTION f AS '{udf_module}.nope' LANGUAGE PYTHON")
    with pytest.raises(Exception, match="cannot import module 'no_such_module'"):
        t_env.execute_sql("CREATE FUNCTION f AS 'no_such_module.f' LANGUAGE PYTHON")
    # Flink's messages for dropping what does not exist.
    for sql, message in (
            ("DROP FUNCTION nosuch", "Function default_database.nosuch does not exist in Catalog default_catalog."),
            ("DROP TEMPORARY FUNCTION nosuch",
             "Temporary catalog function `default_catalog`.`default_database`.`nosuch` doesn't exist"),
            ("DROP TEMPORARY SYSTEM FUNCTION nosuch",
             "Could not drop temporary system function. A function named 'nosuch' doesn't exist.")):
        with pytest.raises(Exception, match=message.replace(".", r"\.")):
            t_env.execute_sql(sql)
    t_env.execute_sql("DROP TEMPORARY FUNCTION IF EXISTS nosuch")


def test_show_functions_lists_built_ins_and_user_functions(t_env, udf_module):
    t_env.execute_sql(f"CREATE TEMPORARY FUNCTION twice AS '{udf_module}.twice' LANGUAGE PYTHON")
    names = [r[0] for r in t_env.execute_sql("SHOW FUNCTIONS").collect()]
    assert names == sorted(names) and {"abs", "count", "json_value", "listagg", "twice"} <= set(names)
    assert not {"case", "count_star", "sum0", "json"} & set(names)
    assert t_env.list_functions() == names


def test_show_create_table_prints_partition_keys_as_flink():
    """Flink 2.3's SHOW CREATE TABLE of a partitioned table (PyFlink 2.3's output, verbatim)."""
    from changeflow.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql("CREATE TABLE p (id INT, dt STRING, hm STRING) COMMENT 'c' PARTITIONED BY (dt, hm) WITH ("
                    "'connector'='filesystem','path'='/x','format'='csv')")
    assert _text(env, "SHOW CREATE TABLE p") == (
        "CREATE TABLE `default_catalog`.`default_database`.`p` (\n  `id` INT,\n  `dt` VARCHAR(2147483647),\n"
        "  `hm` VARCHAR(2147483647)\n)\nCOMMENT 'c'\nPARTITIONED BY (`dt`, `hm`)\nWITH (\n"
        "  'connector' = 'filesystem',\n  'format' = 'csv',\n  'path' = '/x'\n)\n")
