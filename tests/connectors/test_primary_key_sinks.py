"""Sinks of tables with a primary key take the upsert stream of the sink materializer (no Spark)."""

from __future__ import annotations

import pytest

from changeflow.common.row_kind import RowKind
from changeflow.connectors import create_sink
from changeflow.runtime.changes import Change
from changeflow.table import EnvironmentSettings, TableEnvironment

UPSERTS = [Change(RowKind.INSERT, (1, "a")), Change(RowKind.INSERT, (2, "b")), Change(RowKind.UPDATE_AFTER, (1, "c")),
           Change(RowKind.DELETE, (2, "b"))]


@pytest.fixture
def t_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


def sink_of(t_env, name):
    return create_sink(t_env._catalog.get(name), streaming=True)


def test_materialized_table_reads_back_by_primary_key(t_env):
    t_env.execute_sql("CREATE TABLE m (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
                      "WITH ('connector' = 'materialized')")
    sink_of(t_env, "m").write(UPSERTS + [Change(RowKind.INSERT, (None, "n"))])
    assert t_env._resolve("m").payload.rows() == [(None, "n"), (1, "c")]


def test_materialized_table_without_primary_key_applies_retractions(t_env):
    t_env.execute_sql("CREATE TABLE m (id BIGINT, v STRING) WITH ('connector' = 'materialized')")
    sink = sink_of(t_env, "m")
    sink.write([Change(RowKind.INSERT, (1, "a")), Change(RowKind.INSERT, (1, "a")),
                Change(RowKind.UPDATE_BEFORE, (1, "a"))])
    assert t_env._resolve("m").payload.rows() == [(1, "a")]
    with pytest.raises(ValueError, match=r"-D\[2, 'x'\] retracts a row the table does not hold"):
        sink.write([Change(RowKind.DELETE, (2, "x"))])


def test_a_new_table_of_the_same_name_starts_empty(t_env):
    ddl = "CREATE TABLE m (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'materialized')"
    t_env.execute_sql(ddl)
    sink_of(t_env, "m").write(UPSERTS)
    t_env.execute_sql("DROP TABLE m")
    t_env.execute_sql(ddl)
    assert t_env._resolve("m").payload.rows() == []


def test_filesystem_sink_in_upsert_mode_writes_the_upsert_changelog(t_env, tmp_path):
    t_env.execute_sql(f"CREATE TABLE f (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv', "
                      f"'sink.changelog-mode' = 'upsert')")
    sink = sink_of(t_env, "f")
    assert sink.accepts_updates
    sink.write(UPSERTS)
    [written] = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    # "+" is below the csv writer's safe character: quoted, as Flink's writer quotes such text.
    assert written.read_text().splitlines() == ['"+I",1,a', '"+I",2,b', '"+U",1,c', "-D,2,b"]


def test_filesystem_sink_appends_by_default_as_flink_even_with_a_primary_key(t_env, tmp_path):
    t_env.execute_sql(f"CREATE TABLE f (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')")
    assert not sink_of(t_env, "f").accepts_updates


def test_filesystem_upsert_mode_needs_a_primary_key(t_env, tmp_path):
    t_env.execute_sql(f"CREATE TABLE f (id BIGINT, v STRING) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}', 'format' = 'csv', 'sink.changelog-mode' = 'upsert')")
    with pytest.raises(Exception, match="'sink.changelog-mode' = 'upsert' needs a PRIMARY KEY"):
        sink_of(t_env, "f")


def test_print_sink_prints_the_upsert_stream_as_flink(t_env, capsys):
    t_env.execute_sql("CREATE TABLE p (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
                      "WITH ('connector' = 'print')")
    sink_of(t_env, "p").write(UPSERTS)
    assert capsys.readouterr().out.splitlines() == ["+I[1, a]", "+I[2, b]", "+U[1, c]", "-D[2, b]"]
