"""Mixed Table/DataStream programs run on Spark: every sink kind, both modes, order across fan-outs."""

from __future__ import annotations

import pytest

from changeflow.common import Configuration, Row, RowKind, Types
from changeflow.datastream import CollectSink, RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.table import ChangelogMode, DataTypes, Schema, StreamTableEnvironment, TableDescriptor
from changeflow.table.expressions import col


def _envs(spark, mode="streaming"):
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "2")
    conf.set_string("changeflow.source.rows-per-batch", "2")
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH if mode == "batch" else RuntimeExecutionMode.STREAMING)
    return env, StreamTableEnvironment.create(env)


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_execute_insert_of_a_table_through_a_datastream(spark, capsys, mode):
    """The PyFlink example's shape: table -> to_data_stream -> map -> from_data_stream -> execute_insert."""
    env, t_env = _envs(spark, mode)
    t_env.create_temporary_table("sink", TableDescriptor.for_connector("print").schema(
        Schema.new_builder().column("a", DataTypes.BIGINT()).build()).build())
    table = t_env.from_elements([(1, "a"), (2, "bb"), (3, "ccc")], ["id", "data"])
    ds = t_env.to_data_stream(table).map(lambda r: r[0] * 100 + len(r.data), output_type=Types.LONG())
    t_env.from_data_stream(ds, Schema.new_builder().column("f0", DataTypes.BIGINT()).build()) \
        .execute_insert("sink").wait()
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("+I")]
    expected = ["+I[101]", "+I[202]", "+I[303]"]
    assert lines == expected if mode == "streaming" else sorted(lines) == expected


def test_env_execute_runs_a_datastream_sink_of_a_changelog(spark):
    env, t_env = _envs(spark)
    t = t_env.from_elements([("a", 1), ("b", 2), ("a", 3)], ["k", "v"])
    sink = CollectSink()
    t_env.to_changelog_stream(t.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))).sink_to(sink)
    env.execute("changelog to a sink")
    assert [(str(r.get_row_kind()), tuple(r)) for r in sink.records] == [
        ("+I", ("a", 1)), ("+I", ("b", 2)), ("-U", ("a", 1)), ("+U", ("a", 4))]


def test_order_survives_a_fan_out_between_the_apis(spark):
    """A flat_map's outputs keep their order into a Table aggregate (LAST_VALUE sees them in order)."""
    env, t_env = _envs(spark)
    t = t_env.from_elements([(1, "a"), (2, "a"), (3, "b")], ["id", "k"])
    fanned = t_env.to_data_stream(t).flat_map(
        lambda r: [Row(r.k, r.id * 10 + i) for i in range(3)],
        output_type=Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.LONG()]))
    last = t_env.from_data_stream(fanned).group_by(col("k")).select(col("k"), col("v").last_value.alias("v"))
    with last.execute().collect() as rows:
        changes = [(str(r.get_row_kind()), tuple(r)) for r in rows]
    after = [values for kind, values in changes if kind in ("+I", "+U")]
    assert [v for k, v in after if k == "a"] == [10, 11, 12, 20, 21, 22]
    assert [v for k, v in after if k == "b"] == [30, 31, 32]


def test_from_data_stream_fails_on_a_row_that_is_not_an_insert(spark):
    env, t_env = _envs(spark)
    ds = env.from_collection([Row.of_kind(RowKind.INSERT, "a", 1), Row.of_kind(RowKind.DELETE, "a", 1)],
                             Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    with pytest.raises(Exception, match="Conversion expects insert-only records but DataStream API record "
                                        "contains: DELETE"):
        t_env.from_data_stream(ds).execute().collect()


def test_batch_changelog_round_trip_declared_insert_only(spark):
    """In batch mode a table's changelog is its final rows (+I); read back as an insert-only changelog."""
    from changeflow.table import ChangelogMode

    env, t_env = _envs(spark, "batch")
    t = t_env.from_elements([("a", 1), ("b", 2), ("a", 3)], ["k", "v"])
    changes = t_env.to_changelog_stream(t.group_by(col("k")).select(col("k"), col("v").sum.alias("s")))
    back = t_env.from_changelog_stream(changes, None, ChangelogMode.insert_only())
    with back.select(col("s").sum.alias("total"), col("s").count.alias("groups")).execute().collect() as rows:
        assert [(str(r.get_row_kind()), tuple(r)) for r in rows] == [("+I", (6, 2))]


def test_batch_retract_stream_is_all_additions(spark):
    env, t_env = _envs(spark, "batch")
    t = t_env.from_elements([("a", 1), ("b", 2), ("a", 3)], ["k", "v"])
    agg = t.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    got = t_env.to_retract_stream(agg, Types.ROW([Types.STRING(), Types.LONG()])).execute_and_collect()
    assert sorted((flag, str(r.get_row_kind()), tuple(r)) for flag, r in got) == [
        (True, "+I", ("a", 4)), (True, "+I", ("b", 2))]


@pytest.mark.parametrize("options", [{"table.exec.mini-batch.enabled": "true",
                                      "table.exec.mini-batch.allow-latency": "1 s",
                                      "table.exec.mini-batch.size": "3"},
                                     {"table.exec.state.ttl": "1 h"}])
def test_an_upsert_changelog_stream_under_mini_batch_and_state_ttl(spark, options):
    """ChangelogNormalize on Spark folding micro-batches per key (mini-batch) or passing repeats on
    (a state TTL): the materialized table is the stream's last row per key either way."""
    from changeflow.testing import materialize

    env, t_env = _envs(spark)
    for key, value in options.items():
        t_env.get_config().set(key, value)
    changes = [("+I", "a", 1), ("+I", "b", 2), ("+U", "a", 1), ("-D", "c", None), ("+U", "a", 3),
               ("-D", "b", None), ("+I", "c", 4), ("+I", "b", 5), ("+U", "c", 4), ("-D", "a", None),
               ("+I", "a", 6)]
    kinds = {"+I": RowKind.INSERT, "+U": RowKind.UPDATE_AFTER, "-D": RowKind.DELETE}
    ds = env.from_collection([Row.of_kind(kinds[k], n, v) for k, n, v in changes],
                             type_info=Types.ROW_NAMED(["name", "score"], [Types.STRING(), Types.INT()]))
    schema = Schema.new_builder().column("name", DataTypes.STRING().not_null()).column(
        "score", DataTypes.INT()).primary_key("name").build()
    table = t_env.from_changelog_stream(ds, schema, ChangelogMode.upsert())
    with table.execute().collect() as rows:
        got = [tuple(r) for r in materialize(list(rows))]
    assert got == [("a", 6), ("b", 5), ("c", 4)]
