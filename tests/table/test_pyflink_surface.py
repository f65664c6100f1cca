"""Every public method of PyFlink 2.3's TableEnvironment, Table, TableConfig and TableResult exists in
changeflow or raises naming itself; call_sql, the catalog methods and TableConfig's accessors (no Spark)."""

from __future__ import annotations

import datetime

import pytest

from changeflow.sql import SqlError
from changeflow.table import (EnvironmentSettings, Schema, SqlDialect, TableDescriptor, TableEnvironment,
                              TablePipeline)
from changeflow.table.expressions import call_sql, col
from changeflow.table.pyflink_names import UNSUPPORTED

# dir() of PyFlink 2.3's classes, public names (recorded with apache-flink 2.3.0).
PYFLINK_2_3 = {
    "TableEnvironment": [
        "add_python_archive", "add_python_file", "compile_plan_sql", "create", "create_catalog",
        "create_java_function", "create_java_temporary_function", "create_java_temporary_system_function",
        "create_model", "create_statement_set", "create_table", "create_temporary_function",
        "create_temporary_model", "create_temporary_system_function", "create_temporary_table",
        "create_temporary_view", "create_view", "drop_function", "drop_model", "drop_table",
        "drop_temporary_function", "drop_temporary_model", "drop_temporary_system_function",
        "drop_temporary_table", "drop_temporary_view", "drop_view", "execute_plan", "execute_sql",
        "explain_sql", "from_descriptor", "from_elements", "from_pandas", "from_path", "get_catalog",
        "get_config", "get_current_catalog", "get_current_database", "list_catalogs", "list_databases",
        "list_full_modules", "list_functions", "list_materialized_tables", "list_models", "list_modules",
        "list_tables", "list_temporary_models", "list_temporary_tables", "list_temporary_views",
        "list_user_defined_functions", "list_views", "load_module", "load_plan", "register_catalog",
        "set_python_requirements", "sql_query", "unload_module", "use_catalog", "use_database", "use_modules",
    ],
    "Table": [
        "add_columns", "add_or_replace_columns", "aggregate", "alias", "distinct", "drop_columns", "execute",
        "execute_insert", "explain", "fetch", "filter", "flat_aggregate", "flat_map", "from_changelog",
        "full_outer_join", "get_resolved_schema", "get_schema", "group_by", "insert_into", "intersect",
        "intersect_all", "join", "join_lateral", "left_outer_join", "left_outer_join_lateral", "limit", "map",
        "minus", "minus_all", "offset", "order_by", "over_window", "print_explain", "print_schema",
        "rename_columns", "right_outer_join", "select", "to_changelog", "to_pandas", "union", "union_all",
        "where", "window",
    ],
    "TableConfig": [
        "add_configuration", "get", "get_configuration", "get_default", "get_idle_state_retention",
        "get_local_timezone", "get_max_generated_code_length", "get_python_executable", "get_sql_dialect",
        "set", "set_idle_state_retention", "set_local_timezone", "set_max_generated_code_length",
        "set_python_executable", "set_sql_dialect", "to_map",
    ],
    "TableResult": [
        "collect", "get_job_client", "get_resolved_schema", "get_result_kind", "get_table_schema", "print",
        "wait",
    ],
}


@pytest.fixture
def t_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


@pytest.fixture
def table(t_env):
    return t_env.from_elements([(1, "a", 5), (2, None, 3)], ["id", "name", "v"])


def _owners(t_env, table):
    from changeflow.table.result import TableResult
    return {"TableEnvironment": t_env, "Table": table, "TableConfig": t_env.get_config(),
            "TableResult": TableResult.ok()}  # a TableResult without running a job


@pytest.mark.parametrize("owner", sorted(PYFLINK_2_3))
def test_every_pyflink_method_exists_or_is_refused_by_name(t_env, table, owner):
    obj = _owners(t_env, table)[owner]
    for name in PYFLINK_2_3[owner]:
        attribute = getattr(obj, name)  # never an AttributeError (nor, on a Table, "no column named")
        if name in UNSUPPORTED.get(owner, {}):
            with pytest.raises(NotImplementedError, match=rf"{owner}\.{name} \(PyFlink's\)"):
                attribute()
    for name in UNSUPPORTED.get(owner, {}):
        assert name in PYFLINK_2_3[owner], f"{owner}.{name} is not a PyFlink name"


def test_call_sql_is_a_sql_expression_over_the_table(table):
    t = table.where(call_sql("v > 2 AND name IS NOT NULL")).select(
        col("id"), call_sql("UPPER(name) || '!'"), call_sql("CAST(v AS DOUBLE) / 2").alias("half"))
    assert t.get_schema().get_field_names() == ["id", "_c1", "half"]  # Flink's Table API names: _c<position>
    assert [str(x) for x in t.get_schema().get_field_data_types()] == ["BIGINT", "STRING", "DOUBLE"]
    grouped = table.group_by(call_sql("MOD(v, 2)").alias("odd")).select(col("odd"), col("v").sum)
    assert grouped.get_schema().get_field_names() == ["odd", "EXPR$0"]


def test_call_sql_refusals_name_the_construct(table):
    with pytest.raises(SqlError, match="aggregate function in call_sql"):
        table.select(call_sql("SUM(v)"))
    with pytest.raises(SqlError, match="qualified column 't.v' in call_sql"):
        call_sql("t.v + 1")
    with pytest.raises(SqlError, match="subquery in call_sql"):
        call_sql("v IN (SELECT 1)")
    with pytest.raises(Exception, match="'nope' not found|nope"):
        table.select(call_sql("nope + 1"))


def test_catalog_methods_answer_for_the_one_catalog(t_env, table):
    assert (t_env.get_current_catalog(), t_env.get_current_database()) == ("default_catalog", "default_database")
    assert t_env.list_catalogs() == ["default_catalog"] and t_env.list_databases() == ["default_database"]
    t_env.use_catalog("default_catalog")
    t_env.use_database("default_database")
    with pytest.raises(Exception, match=r"catalog with name \[other\] does not exist"):
        t_env.use_catalog("other")
    t_env.create_view("pv", table)
    t_env.create_temporary_view("tv", table)
    assert t_env.list_views() == ["pv", "tv"] and t_env.list_temporary_tables() == ["tv"]
    assert t_env.drop_view("pv") is True and t_env.drop_view("pv") is False
    with pytest.raises(Exception, match="pv"):
        t_env.drop_view("pv", ignore_if_not_exists=False)


def test_from_descriptor_reads_an_unnamed_connector_table(t_env):
    from changeflow.common.types import DataTypes
    descriptor = TableDescriptor.for_connector("datagen").schema(
        Schema.new_builder().column("a", DataTypes.INT()).build()).option("number-of-rows", "3").build()
    assert t_env.from_descriptor(descriptor).get_schema().get_field_names() == ["a"]
    assert t_env.list_tables() == []


def test_table_config_accessors(t_env):
    config = t_env.get_config()
    config.set_idle_state_retention(datetime.timedelta(minutes=5))
    assert config.get_idle_state_retention() == datetime.timedelta(minutes=5)
    assert config.to_map()["table.exec.state.ttl"] == "5 min"
    assert config.get_local_timezone() == "default" and config.get_sql_dialect() == SqlDialect.DEFAULT
    with pytest.raises(NotImplementedError, match="set_sql_dialect"):
        config.set_sql_dialect(SqlDialect.HIVE)


def test_insert_into_is_a_pipeline_and_schemas_resolve(table):
    pipeline = table.insert_into("sink")
    assert isinstance(pipeline, TablePipeline)
    assert pipeline.get_sink_identifier() == "default_catalog.default_database.sink"
    assert table.get_resolved_schema().get_column_names() == ["id", "name", "v"]
