"""StreamTableEnvironment's conversions as planned (no Spark starts: conversions are lazy)."""

from __future__ import annotations

import pytest

from changeflow.common import Configuration, Row, Types
from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.plan.type_inference import PlanError
from changeflow.table import ChangelogMode, DataTypes, EnvironmentSettings, Schema, StreamTableEnvironment
from changeflow.table.expressions import col


@pytest.fixture
def envs():
    env = StreamExecutionEnvironment.get_execution_environment()
    return env, StreamTableEnvironment.create(env)


def _names_types(table):
    schema = table.get_schema()
    return list(zip(schema.get_field_names(), [str(t) for t in schema.get_field_data_types()], strict=True))


def test_create_needs_an_argument():
    with pytest.raises(ValueError, match="'stream_execution_environment' or 'environment_settings' is required"):
        StreamTableEnvironment.create()


def test_shares_the_stream_environment_configuration_and_mode():
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "3")
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    t_env = StreamTableEnvironment.create(env)
    assert not t_env.streaming
    assert t_env.get_config().get("changeflow.state.buckets") == "3"
    t_env.get_config().set("changeflow.state.buckets", "5")
    assert env.get_config().get_string("changeflow.state.buckets", None) == "5"


def test_settings_choose_the_mode():
    t_env = StreamTableEnvironment.create(environment_settings=EnvironmentSettings.in_batch_mode())
    assert not t_env.streaming and t_env._stream_env._mode is RuntimeExecutionMode.BATCH


def test_columns_follow_flinks_rules(envs):
    env, t_env = envs
    atomic = env.from_collection([1, 2], Types.LONG())
    assert _names_types(t_env.from_data_stream(atomic)) == [("f0", "BIGINT")]
    row = env.from_collection([("a", 1)], Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    assert _names_types(t_env.from_data_stream(row)) == [("w", "STRING"), ("n", "INT")]
    unnamed = env.from_collection([("a", 1.5)], Types.ROW([Types.STRING(), Types.DOUBLE()]))
    assert _names_types(t_env.from_data_stream(unnamed)) == [("f0", "STRING"), ("f1", "DOUBLE")]
    pair = env.from_collection([("a", 1)], Types.TUPLE([Types.STRING(), Types.INT()]))
    assert _names_types(t_env.from_data_stream(pair)) == [("f0", "STRING"), ("f1", "INT")]


def test_fields_rename_by_position_or_pick_by_name(envs):
    env, t_env = envs
    ds = env.from_collection([("a", 1)], Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    assert _names_types(t_env.from_data_stream(ds, col("x"), col("y"))) == [("x", "STRING"), ("y", "INT")]
    assert _names_types(t_env.from_data_stream(ds, col("n"), col("w").alias("word"))) == [
        ("n", "INT"), ("word", "STRING")]
    schema = Schema.new_builder().column("n", DataTypes.INT()).build()
    assert _names_types(t_env.from_data_stream(ds, schema)) == [("n", "INT")]


def test_a_schema_with_computed_columns_and_a_watermark_reads_as_flink(envs):
    # PyFlink's table/windowing examples: an INSTANT field cast to the rowtime, the others declared.
    from changeflow.common.time import Instant

    env, t_env = envs
    ds = env.from_collection([(Instant.of_epoch_milli(1000), "Alice", 110.1)],
                             Types.ROW([Types.INSTANT(), Types.STRING(), Types.FLOAT()]))
    assert _names_types(t_env.from_data_stream(ds))[0] == ("f0", "TIMESTAMP_LTZ(9)")
    declared = (Schema.new_builder().column_by_expression("ts", "CAST(f0 AS TIMESTAMP(3))")
                .column("f1", DataTypes.STRING()).column("f2", DataTypes.FLOAT())
                .watermark("ts", "ts - INTERVAL '3' SECOND").build())
    table = t_env.from_data_stream(ds, declared)
    assert _names_types(table) == [("ts", "TIMESTAMP(3) *ROWTIME*"), ("f1", "STRING"), ("f2", "FLOAT")]
    added = Schema.new_builder().column_by_expression("ts", "CAST(f0 AS TIMESTAMP_LTZ(3))").build()
    assert [n for n, _ in _names_types(t_env.from_data_stream(ds, added))] == ["f0", "f1", "f2", "ts"]
    with pytest.raises(NotImplementedError, match="computed columns or a watermark in the schema of "
                                                  "from_changelog_stream"):
        t_env.from_changelog_stream(ds, declared)


def test_bad_schemas_are_refused(envs):
    env, t_env = envs
    ds = env.from_collection([("a", 1)], Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    with pytest.raises(ValueError, match="Unable to find a field named 'x'"):
        t_env.from_data_stream(ds, Schema.new_builder().column("x", DataTypes.INT()).build())
    with pytest.raises(ValueError, match="column 'n' is declared BIGINT but the stream's field is INT"):
        t_env.from_data_stream(ds, Schema.new_builder().column("n", DataTypes.BIGINT()).build())
    with pytest.raises(ValueError, match="3 field names for a stream of 2 fields"):
        t_env.from_data_stream(ds, col("a"), col("b"), col("c"))


def test_an_untyped_stream_is_refused(envs):
    env, t_env = envs
    with pytest.raises(NotImplementedError, match="without a declared type \\(PICKLED_BYTE_ARRAY\\)"):
        t_env.from_data_stream(env.from_collection([(1, "a")]))


def test_an_upsert_changelog_is_normalized_by_its_primary_key(envs):
    from changeflow.common.types import DataTypes
    from changeflow.table import Schema

    env, t_env = envs
    ds = env.from_collection([Row("a", 1)], Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    keyed = Schema.new_builder().column("w", DataTypes.STRING().not_null()).column(
        "n", DataTypes.INT()).primary_key("w").build()
    plan = t_env.from_changelog_stream(ds, keyed, ChangelogMode.upsert()).explain()
    assert "ChangelogNormalize(key=[w], changelogMode=[I,UB,UA,D])" in plan
    assert "ChangelogNormalize" not in t_env.from_changelog_stream(ds, None, ChangelogMode.upsert()).explain()
    assert "ChangelogNormalize" not in t_env.from_changelog_stream(ds, keyed).explain()
    t_env.get_config().set("table.exec.source.cdc-events-duplicate", "true")
    assert "DropUpdateBefore" in t_env.from_changelog_stream(ds, keyed).explain()
    with pytest.raises(NotImplementedError, match="a primary key in the schema of from_data_stream"):
        t_env.from_data_stream(ds, keyed)


def test_upsert_to_changelog_stream_with_a_key_is_refused(envs):
    from changeflow.common.types import DataTypes
    from changeflow.table import Schema

    env, t_env = envs
    t = t_env.from_elements([(1, "a")], ["id", "data"])
    keyed = Schema.new_builder().column("id", DataTypes.BIGINT().not_null()).column(
        "data", DataTypes.STRING()).primary_key("id").build()
    with pytest.raises(NotImplementedError, match=r"upsert\(\) and a primary key"):
        t_env.to_changelog_stream(t, keyed, ChangelogMode.upsert())


def test_to_data_stream_refuses_an_updating_table(envs):
    _, t_env = envs
    t = t_env.from_elements([(1, "a")], ["id", "data"])
    counts = t.group_by(col("data")).select(col("data"), col("id").sum.alias("s"))
    with pytest.raises(PlanError, match="doesn't support consuming update changes which is produced by node "
                                        "GroupAggregate\\(groupBy=\\[data\\]\\)"):
        t_env.to_data_stream(counts)
    with pytest.raises(PlanError, match="update changes"):
        t_env.to_changelog_stream(counts, changelog_mode=ChangelogMode.insert_only())
    assert t_env.to_changelog_stream(counts).get_type() == Types.ROW_NAMED(["data", "s"],
                                                                          [Types.STRING(), Types.LONG()])


def test_a_changelog_source_plans_as_retracting(envs):
    env, t_env = envs
    ds = env.from_collection([Row("a", 1)], Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    text = t_env.from_changelog_stream(ds).select(col("n").sum).explain()
    assert "[I,UB,UA,D]" in text
    with pytest.raises(PlanError, match="update changes"):
        t_env.to_data_stream(t_env.from_changelog_stream(ds))


def test_create_temporary_view_of_a_stream(envs):
    env, t_env = envs
    ds = env.from_collection([("a", 1)], Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    t_env.create_temporary_view("clicks", ds, col("word"), col("cnt"))
    assert _names_types(t_env.from_path("clicks")) == [("word", "STRING"), ("cnt", "INT")]


def test_an_atomic_stream_has_one_field(envs):
    env, t_env = envs
    ds = env.from_collection([1], Types.INT())
    assert _names_types(t_env.from_data_stream(ds, col("n"))) == [("n", "INT")]
    with pytest.raises(ValueError, match="Too many fields referenced from an atomic type."):
        t_env.from_data_stream(ds, col("a"), col("b"))
