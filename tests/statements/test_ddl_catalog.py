"""CREATE/DROP TABLE and VIEW, SHOW and DESCRIBE, as PyFlink 2.3 prints them (no Spark)."""

import pytest

from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment

ORDERS = ("CREATE TABLE src (id INT, name STRING, price DECIMAL(10,2), ts TIMESTAMP(3), pt AS PROCTIME(), "
          "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) "
          "WITH ('connector'='datagen', 'number-of-rows'='3')")


@pytest.fixture
def t_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


def test_create_table_prints_ok_and_describe_shows_flink_columns(t_env, capsys):
    t_env.execute_sql(ORDERS).print()
    t_env.execute_sql("DESCRIBE src").print()
    assert capsys.readouterr().out == """OK
+-------+-----------------------------+-------+---------+---------------+----------------------------+
|  name |                        type |  null |     key |        extras |                  watermark |
+-------+-----------------------------+-------+---------+---------------+----------------------------+
|    id |                         INT | FALSE | PRI(id) |               |                            |
|  name |                      STRING |  TRUE |         |               |                            |
| price |              DECIMAL(10, 2) |  TRUE |         |               |                            |
|    ts |      TIMESTAMP(3) *ROWTIME* |  TRUE |         |               | `ts` - INTERVAL '5' SECOND |
|    pt | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |         | AS PROCTIME() |                            |
+-------+-----------------------------+-------+---------+---------------+----------------------------+
5 rows in set
"""


def test_describe_collects_rows_with_nulls_for_empty_cells(t_env):
    t_env.execute_sql("CREATE TABLE t (a INT NOT NULL, b VARCHAR(10), c TIMESTAMP) WITH ('connector'='blackhole')")
    rows = [tuple(r) for r in t_env.execute_sql("DESC t").collect()]
    assert rows == [("a", "INT", False, None, None, None), ("b", "VARCHAR(10)", True, None, None, None),
                    ("c", "TIMESTAMP(6)", True, None, None, None)]


def test_create_existing_table_fails_unless_if_not_exists(t_env):
    t_env.execute_sql(ORDERS)
    assert t_env.execute_sql("CREATE TABLE IF NOT EXISTS src (x INT)").get_result_kind().name == "SUCCESS"
    with pytest.raises(PlanError, match="Table \\(or view\\) default_database.src already exists"):
        t_env.execute_sql("CREATE TABLE src (x INT) WITH ('connector'='blackhole')")


def test_show_tables_lists_tables_and_views_of_one_catalog(t_env, capsys):
    t_env.execute_sql("CREATE TABLE t (a INT) WITH ('connector'='blackhole')")
    t_env.create_temporary_view("v", t_env.from_elements([(1,)], ["a"]))
    t_env.execute_sql("SHOW TABLES").print()
    t_env.execute_sql("SHOW VIEWS").print()
    assert capsys.readouterr().out == (
        "+------------+\n| table name |\n+------------+\n|          t |\n|          v |\n+------------+\n"
        "2 rows in set\n"
        "+-----------+\n| view name |\n+-----------+\n|         v |\n+-----------+\n1 row in set\n")


def test_drop_table_and_view_with_flink_errors(t_env):
    t_env.execute_sql("CREATE TABLE t (a INT) WITH ('connector'='blackhole')")
    t_env.create_temporary_view("v", t_env.from_elements([(1,)], ["a"]))
    with pytest.raises(PlanError, match="View with identifier 'default_catalog.default_database.t' does not exist"):
        t_env.execute_sql("DROP VIEW t")
    with pytest.raises(PlanError, match="Table with identifier 'default_catalog.default_database.v' does not exist"):
        t_env.execute_sql("DROP TABLE v")
    t_env.execute_sql("DROP TABLE t")
    t_env.execute_sql("DROP VIEW IF EXISTS v")
    t_env.execute_sql("DROP TABLE IF EXISTS nosuch")
    assert t_env.list_tables() == []


def test_missing_table_names_it_and_lists_known_ones(t_env):
    t_env.execute_sql("CREATE TABLE t (a INT) WITH ('connector'='blackhole')")
    with pytest.raises(PlanError, match="Table 'nosuch' not found; known tables and views: t"):
        t_env.from_path("nosuch")
    with pytest.raises(PlanError, match="'default_catalog.default_database.nosuch' doesn't exist"):
        t_env.execute_sql("DESCRIBE nosuch")


@pytest.mark.parametrize("ddl, message", [
    ("CREATE TABLE x (a INT, a STRING)", "A regular Column named 'a' already exists"),
    ("CREATE TABLE x (a INT, PRIMARY KEY (b) NOT ENFORCED)", "Primary key column 'b' is not defined"),
    ("CREATE TABLE x (a INT, PRIMARY KEY (a))", "only supported mode is the NOT ENFORCED mode"),
    ("CREATE TABLE x (a INT, WATERMARK FOR b AS b)", "rowtime attribute field 'b' is not defined"),
    ("CREATE TABLE x (a INT, WATERMARK FOR a AS a)", "must be of type TIMESTAMP"),
    ("CREATE TABLE x (a GEOMETRY)", "unsupported type 'GEOMETRY' of column 'a'"),
    ("CREATE TABLE x (a INT) WITH ('k' = 'v', 'k' = 'w')", "option 'k' is given twice"),
    ("CREATE TABLE x (a INT) WITH ('k' 'v')", "expected = at line 1, column 34"),
])
def test_bad_ddl_names_the_problem(t_env, ddl, message):
    with pytest.raises(PlanError, match=message):
        t_env.execute_sql(ddl)


def test_constraint_name_quoted_identifiers_and_string_escapes(t_env):
    t_env.execute_sql("CREATE TABLE `my t` (`a b` INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts, "
                      "CONSTRAINT pk PRIMARY KEY (`a b`) NOT ENFORCED) WITH ('connector'='filesystem', "
                      "'path'='/it''s', 'format'='json');")
    rows = [tuple(r) for r in t_env.execute_sql("DESCRIBE `my t`").collect()]
    assert rows == [("a b", "INT", False, "PRI(a b)", None, None),
                    ("ts", "TIMESTAMP(3) *ROWTIME*", True, None, None, "`ts`")]
    assert t_env._catalog.get("my t").options["path"] == "/it's"


def test_one_statement_per_call(t_env):
    with pytest.raises(PlanError, match="single SQL statement"):
        t_env.execute_sql("SHOW TABLES; SHOW VIEWS")
    with pytest.raises(PlanError, match="unsupported SQL statement 'TRUNCATE'"):
        t_env.execute_sql("TRUNCATE TABLE t")


def test_table_descriptor_declares_the_same_table_as_ddl(t_env):
    from changeflow.common.types import DataTypes
    from changeflow.table.descriptor import Schema, TableDescriptor

    t_env.create_temporary_table("gen", TableDescriptor.for_connector("datagen")
                                 .schema(Schema.new_builder().column("id", DataTypes.INT())
                                         .column("v", DataTypes.DECIMAL(5, 2)).primary_key("id").build())
                                 .option("number-of-rows", 3).build())
    rows = [tuple(r) for r in t_env.execute_sql("DESCRIBE gen").collect()]
    assert rows == [("id", "INT", False, "PRI(id)", None, None), ("v", "DECIMAL(5, 2)", True, None, None, None)]
    assert t_env.from_path("gen").get_schema().get_field_names() == ["id", "v"]


def test_temporary_objects_shadow_permanent_ones_as_in_flink(t_env):
    view = t_env.from_elements([(1, "a")], ["id", "name"])
    t_env.create_temporary_view("v", view)
    with pytest.raises(PlanError, match="Temporary table '`default_catalog`.`default_database`.`v`' already exists"):
        t_env.create_temporary_view("v", view)
    with pytest.raises(PlanError, match="Temporary table .* already exists"):
        t_env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT id FROM v")
    t_env.execute_sql("CREATE TABLE v (a INT) WITH ('connector'='blackhole')")  # permanent, shadowed
    assert t_env.list_tables() == ["v"]
    assert t_env.from_path("v").get_schema().get_field_names() == ["id", "name"]
    assert t_env.drop_temporary_view("v") and not t_env.drop_temporary_view("v")
    assert t_env._catalog.get("v").options == {"connector": "blackhole"}


def test_show_and_use_the_one_catalog_as_flink_prints_them(t_env, capsys):
    """Flink 2.3's output for the same statements (PyFlink 2.3, TableEnvironment in streaming mode)."""
    for statement in ("SHOW CATALOGS", "SHOW CURRENT DATABASE", "SHOW MODULES", "USE CATALOG default_catalog",
                      "USE default_database", "USE default_catalog.default_database"):
        t_env.execute_sql(statement).print()
    assert capsys.readouterr().out == (
        "+-----------------+\n|    catalog name |\n+-----------------+\n| default_catalog |\n"
        "+-----------------+\n1 row in set\n"
        "+-----------------------+\n| current database name |\n+-----------------------+\n"
        "|      default_database |\n+-----------------------+\n1 row in set\n"
        "+-------------+\n| module name |\n+-------------+\n|        core |\n+-------------+\n1 row in set\n"
        "OK\nOK\nOK\n")
    with pytest.raises(Exception, match=r"A catalog with name \[nope\] does not exist\."):
        t_env.execute_sql("USE CATALOG nope")
    with pytest.raises(Exception, match=r"A database with name \[nope\] does not exist in the catalog: "
                                        r"\[default_catalog\]\."):
        t_env.execute_sql("USE nope")
