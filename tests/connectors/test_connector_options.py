"""Connector options fail as Flink's factories do, when a table is read or written (no Spark)."""

import pytest

from changeflow.connectors import ConnectorError
from changeflow.plan.type_inference import PlanError
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col


@pytest.fixture
def t_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


@pytest.mark.parametrize("options, message", [
    ("'connector'='filesystem', 'path'='/x', 'format'='json', 'bogus'='1'",
     "Unsupported options found for 'filesystem'.\n\nUnsupported options:\n\nbogus\n\nSupported options:\n\n"),
    ("'connector'='filesystem', 'path'='/x'", "Missing required options are:\n\nformat"),
    ("'connector'='filesystem', 'path'='/x', 'format'='orc'",
     "Could not find any format factory for identifier 'orc'"),
    ("'bogus'='1'", "do not contain an option key 'connector'"),
    ("'connector'='datagen', 'fields.a.kind'='seq'", "Unsupported generator kind: seq"),
    ("'connector'='datagen', 'fields.a.kind'='sequence'", "Could not find required property 'fields.a.start'"),
    ("'connector'='datagen', 'fields.b.kind'='random'", "Unsupported options:\n\nfields.b.kind\n\nSupported options"
                                                        ":\n\nconnector\nfields.a.kind\nfields.a.max\nfields.a.min"),
    ("'connector'='datagen', 'fields.a.min'='x'", "Could not parse value 'x' for key 'fields.a.min'"),
    ("'connector'='blackhole'", "Connector 'blackhole' can only be used as a sink"),
])
def test_source_options_are_checked_when_read(t_env, options, message):
    t_env.execute_sql(f"CREATE TABLE t (a INT) WITH ({options})")  # CREATE does not check, as in Flink
    with pytest.raises(ConnectorError) as error:
        t_env.from_path("t")
    assert "Unable to create a source for reading table 'default_catalog.default_database.t'" in str(error.value)
    assert message in str(error.value)


def test_print_sink_options_are_checked_when_written(t_env):
    t_env.execute_sql("CREATE TABLE p (a INT) WITH ('connector'='print', 'bogus'='1')")
    with pytest.raises(ConnectorError, match="(?s)Unable to create a sink.*Unsupported options found for 'print'"):
        t_env._insert_plan("p", t_env.from_elements([(1,)], ["a"]).plan)


def test_updating_query_into_filesystem_sink_fails_at_planning(t_env):
    t_env.execute_sql("CREATE TABLE out (k STRING, c BIGINT) WITH ('connector'='filesystem', 'path'='/x', "
                      "'format'='json')")
    counts = t_env.from_elements([("a",), ("b",)], ["k"]).group_by(col("k")).select(col("k"), col("k").count)
    with pytest.raises(ConnectorError, match="Table sink 'default_catalog.default_database.out' doesn't support "
                                             "consuming update changes which is produced by node GroupAggregate"):
        t_env._insert_plan("out", counts.plan)


def test_insert_casts_between_timestamp_and_timestamp_ltz_as_flink(t_env):
    # One family in Flink: PyFlink 2.3 inserts TO_TIMESTAMP_LTZ(1000, 3) into a TIMESTAMP(3) column as
    # 1970-01-01T00:00:01, and its windowing examples a TIMESTAMP window start into a TIMESTAMP_LTZ column.
    from changeflow.table import DataTypes, Schema, TableDescriptor

    for name, t in (("plain", DataTypes.TIMESTAMP(3)), ("instant", DataTypes.TIMESTAMP_LTZ(3))):
        t_env.create_temporary_table(name, TableDescriptor.for_connector("blackhole").schema(
            Schema.new_builder().column("ts", t).build()).build())
    for sink, query in (("plain", "SELECT TO_TIMESTAMP_LTZ(1000, 3)"),
                        ("instant", "SELECT TIMESTAMP '1970-01-01 00:00:01'")):
        plan = t_env._insert_plan(sink, t_env.sql_query(query).plan)
        assert plan.schema[0][1].root == ("TIMESTAMP" if sink == "plain" else "TIMESTAMP_LTZ")


def test_insert_checks_column_count_and_types_as_flink(t_env):
    t_env.execute_sql("CREATE TABLE out (a INT) WITH ('connector'='blackhole')")
    with pytest.raises(PlanError, match="(?s)Cause: Different number of columns.*Query schema: \\[x: BIGINT, y: "
                                        "BIGINT\\]\nSink schema:  \\[a: INT\\]"):
        t_env._insert_plan("out", t_env.from_elements([(1, 2)], ["x", "y"]).plan)
    with pytest.raises(PlanError, match="Incompatible types for sink column 'a' at position 1"):
        t_env._insert_plan("out", t_env.from_elements([("x",)], ["s"]).plan)
    with pytest.raises(PlanError, match="Cannot find table '`default_catalog`.`default_database`.`nosuch`'"):
        t_env._insert_plan("nosuch", t_env.from_elements([(1,)], ["a"]).plan)
