"""How often a query over unbounded input runs its micro-batches under a flush interval (plan/rules/buffering.py)."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from changeflow.plan.flush_policy import FlushPolicy
from changeflow.runtime.spark.jobs import micro_batch_interval

pytestmark = pytest.mark.spark

FIVE_S = FlushPolicy(interval_ms=5000)


@pytest.fixture
def env(stream_env, tmp_path):
    # An endless datagen source reads what it generated since the last micro-batch, each
    # second; a monitored directory reads a file per micro-batch.
    stream_env.execute_sql("CREATE TABLE fast (k STRING, v BIGINT) WITH ('connector' = 'datagen', "
                           "'rows-per-second' = '10')")
    for name, interval in (("files", "1 s"), ("slow", "10 s")):
        stream_env.execute_sql(f"CREATE TABLE {name} (k STRING, v BIGINT) WITH ('connector' = 'filesystem', "
                               f"'path' = '{tmp_path}', 'format' = 'json', 'source.monitor-interval' = '{interval}')")
    stream_env.execute_sql("CREATE TABLE dim (k STRING, v BIGINT) WITH ('connector' = 'datagen', "
                           "'number-of-rows' = '3')")
    stream_env.execute_sql("CREATE TABLE upserts (k STRING, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) "
                           "WITH ('connector' = 'print')")
    return stream_env


def interval(env, sql: str, flush: FlushPolicy | None = FIVE_S) -> int | None:
    settings = dataclasses.replace(env._engine().streaming_settings(), flush=flush)
    if sql.startswith("INSERT"):
        sink, query = sql.split(" ", 3)[2:]
        plan = env._insert_plan(sink, env.sql_query(query)._plan)  # noqa: SLF001
    else:
        plan = env.sql_query(sql)._plan  # noqa: SLF001
    return micro_batch_interval(plan, settings)


@pytest.mark.parametrize("sql", [
    "SELECT k, SUM(v) AS s FROM fast GROUP BY k",
    "SELECT s % 2 AS p, COUNT(*) AS n FROM (SELECT k, SUM(v) AS s FROM fast GROUP BY k) GROUP BY s % 2",
    "SELECT k, s * 2 AS d FROM (SELECT k, SUM(v) AS s FROM fast GROUP BY k) WHERE s > 3",
    "SELECT a.k, a.s, b.n FROM (SELECT k, SUM(v) AS s FROM fast GROUP BY k) a "
    "JOIN (SELECT k, COUNT(*) AS n FROM fast GROUP BY k) b ON a.k = b.k",
    "INSERT INTO upserts SELECT k, SUM(v) FROM fast GROUP BY k",
])
def test_every_row_to_the_sink_buffered_runs_once_per_flush_interval(env, sql):
    assert interval(env, sql) == 5000


@pytest.mark.parametrize("sql", [
    "SELECT k, v FROM fast WHERE v > 1",
    "SELECT k, SUM(v) AS v FROM fast GROUP BY k UNION ALL SELECT k, v FROM fast",
])
def test_rows_reaching_the_sink_unbuffered_keep_the_sources_pace(env, sql):
    assert interval(env, sql) == 1000


def test_a_monitored_directory_or_memory_only_buffering_or_no_interval_keep_the_sources_pace(env):
    per_key = "SELECT k, SUM(v) AS s FROM {} GROUP BY k"
    # A file per micro-batch keeps the directory's rows in order: a micro-batch per
    # interval would fall behind a file a second.
    assert interval(env, per_key.format("files")) == 1000
    assert interval(env, per_key.format("slow")) == 10_000
    assert interval(env, per_key.format("fast"), FlushPolicy(interval_ms=5000, memory_only=True)) == 1000
    assert interval(env, per_key.format("fast"), None) == 1000
    assert interval(env, per_key.format("dim")) is None  # bounded: availableNow


def test_a_live_query_runs_on_the_flush_interval_and_flushes_at_its_boundaries(stream_env):
    stream_env.execute_sql("CREATE TABLE clicks (k INT, v INT) WITH ('connector' = 'datagen', "
                           "'rows-per-second' = '20', 'fields.k.min' = '1', 'fields.k.max' = '1', "
                           "'fields.v.min' = '1', 'fields.v.max' = '1')")
    stream_env.get_config().set("execution.max-flush-interval", "2 s")
    result = stream_env.sql_query("SELECT k, SUM(v) AS s FROM clicks GROUP BY k").execute()
    rows = result.collect()
    # A guard against a flush that never comes (next() would wait forever), not a timing assertion.
    guard = threading.Timer(180, rows.close)
    guard.start()
    try:
        trigger = result._live.query._jsq.streamingQuery().trigger()  # noqa: SLF001
        assert trigger.toString() == "ProcessingTimeTrigger(2000)"
        # Each flush emits the key once: +I of its count so far, then a -U/+U pair a flush.
        changes = [(str(r.get_row_kind()), tuple(r)) for r in (next(rows), next(rows), next(rows))]
    finally:
        guard.cancel()
        rows.close()
    (insert, first), (before, emitted), (after, second) = changes
    assert (insert, before, after) == ("+I", "-U", "+U")
    assert emitted == first and first[0] == second[0] == 1 and second[1] > first[1]
