"""The ``jdbc`` connector against a real PostgreSQL (tests/postgres_server.py), without Spark.

The sink and the source are driven as the runtime drives them (``open``, ``write(changes, batch_id)``,
``close``; ``rows()``); the Spark tests (test_jdbc_spark.py) run them inside queries.
"""

from __future__ import annotations

import datetime
import decimal

import pytest

from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.connectors import ConnectorError, create_sink, create_source
from changeflow.connectors.jdbc import JdbcError
from changeflow.connectors.sink_job import SinkJob
from changeflow.sql.ddl import parse_create_table
from tests.postgres_server import PASSWORD, USER

I, UB, UA, D = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE


def table(server, columns: str, name: str, **options):
    opts = {"connector": "jdbc", "url": server.url, "table-name": name, "username": USER, "password": PASSWORD,
            **options}
    listed = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items())
    return parse_create_table(f"CREATE TABLE t ({columns}) WITH ({listed})")[0]


def recreate(server, name: str, ddl: str) -> None:
    server.execute(f"DROP TABLE IF EXISTS {name}")
    server.execute(f"CREATE TABLE {name} ({ddl})")


def test_upsert_sink_applies_a_changelog_by_key_and_a_replayed_batch_writes_nothing(postgres):
    recreate(postgres, "totals", "k TEXT PRIMARY KEY, n BIGINT")
    sink = create_sink(table(postgres, "k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED", "totals",
                             **{"sink.buffer-flush.max-rows": "2"}), True)
    job = SinkJob.fresh()
    sink.open(job)
    sink.write([Change(I, ("a", 1)), Change(I, ("b", 1)), Change(UB, ("a", 1)), Change(UA, ("a", 2))], 0)
    sink.write([Change(D, ("b", 1)), Change(I, ("c", 5)), Change(UB, ("a", 2)), Change(UA, ("a", 3))], 1)
    sink.close()
    assert sorted(postgres.execute("SELECT k, n FROM totals")) == [("a", 3), ("c", 5)]

    # A restarted job (same writer, from its checkpoint) runs batch 1 again, then batch 2: 1 is skipped.
    again = create_sink(table(postgres, "k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED", "totals"), True)
    again.open(SinkJob(job.writer, resumed=True))
    again.write([Change(D, ("a", 3))], 1)  # different content on purpose: only a skip leaves a in place
    again.write([Change(I, ("d", 7))], 2)
    again.close()
    assert sorted(postgres.execute("SELECT k, n FROM totals")) == [("a", 3), ("c", 5), ("d", 7)]
    assert postgres.execute("SELECT batch_id FROM changeflow_batches WHERE query_id = %s",
                            (f"{job.writer}:totals",)) == [(2,)]


def test_append_sink_inserts_once_per_batch_and_refuses_updates_at_planning(postgres):
    recreate(postgres, "events", "id INT, name VARCHAR(20), amount NUMERIC(10, 2), at TIMESTAMP")
    columns = "id INT, name STRING, amount DECIMAL(10, 2), at TIMESTAMP(3)"
    sink = create_sink(table(postgres, columns, "events"), True)
    assert sink.accepts_updates is False  # no primary key: an updating query fails at planning (Flink's rule)
    job = SinkJob.fresh()
    sink.open(job)
    at = datetime.datetime(2024, 1, 2, 3, 4, 5)
    rows = [(1, "x", decimal.Decimal("1.50"), at), (2, None, None, None)]
    sink.write([Change(I, r) for r in rows], 0)
    sink.write([Change(I, r) for r in rows], 0)  # the same batch again (a replay): nothing more
    sink.write([Change(I, (3, "y", decimal.Decimal("2"), at))], None)  # a batch job's result: no batch record
    sink.close()
    assert sorted(postgres.execute("SELECT id, name, amount, at FROM events")) == [
        *rows, (3, "y", decimal.Decimal("2.00"), at)]


def test_scan_source_reads_declared_types_and_partitions_as_flink(postgres):
    recreate(postgres, "dim", "id BIGINT, name TEXT, price NUMERIC(8, 3), ok BOOLEAN, day DATE, raw BYTEA, "
                              "ts TIMESTAMPTZ")
    ts = datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)
    for i in range(1, 11):
        postgres.execute("INSERT INTO dim VALUES (%s, %s, %s, %s, %s, %s, %s)",
                         (i, f"n{i}", decimal.Decimal("1.2345") * i, i % 2 == 0, datetime.date(2024, 1, i),
                          bytes([i]), ts))
    columns = "id BIGINT, name STRING, price DECIMAL(8, 3), ok BOOLEAN, day DATE, raw BYTES, ts TIMESTAMP_LTZ(3)"
    source = create_source(table(postgres, columns, "dim"), False)
    rows = sorted(source.rows())
    # changeflow's DDL reads TIMESTAMP_LTZ as TIMESTAMP: the instant comes as its UTC time.
    assert rows[0] == (1, "n1", decimal.Decimal("1.235"), False, datetime.date(2024, 1, 1), b"\x01",
                       ts.replace(tzinfo=None))
    assert len(rows) == 10
    # Flink's partitions: [2, 4], [5, 7], [8, 9]; rows outside the bounds are not read, as in Flink.
    parted = create_source(table(postgres, columns, "dim", **{
        "scan.partition.column": "id", "scan.partition.num": "3", "scan.partition.lower-bound": "2",
        "scan.partition.upper-bound": "9", "scan.fetch-size": "2"}), False)
    assert [p for _, p in parted.queries()] == [(2, 4), (5, 7), (8, 9)]
    assert sorted(r[0] for r in parted.rows()) == list(range(2, 10))


def test_errors_name_the_connector_and_the_option(postgres):
    recreate(postgres, "small", "k INT PRIMARY KEY, v BIGINT")
    cases = [
        ({"password": "wrong"}, "k INT, v BIGINT", "small", "wrong 'password' or 'username'"),
        ({"url": "jdbc:postgresql://127.0.0.1:1/postgres"}, "k INT, v BIGINT", "small", "server of option 'url'"),
        ({"url": postgres.url.replace("/postgres", "/nodb")}, "k INT, v BIGINT", "small",
         "the database of option 'url' does not exist"),
        ({}, "k INT, v BIGINT", "missing", "the table of option 'table-name' does not exist"),
        ({}, "k INT, v INT", "small", "column 'v' is declared INT but the database's column is int8, which "
                                      "Flink's JDBC connector reads as BIGINT"),
        ({}, "k INT, w BIGINT", "small", "lacks a declared column"),
    ]
    for options, columns, name, message in cases:
        sink = create_sink(table(postgres, columns, name, **options), True)
        with pytest.raises(JdbcError, match="Connector 'jdbc' of table") as e:
            sink.open(SinkJob.fresh())
        assert message in str(e.value)
        sink.close()
    # Refused when the table is first used, as Flink's factory does: unknown keys, a url of another database.
    with pytest.raises(ConnectorError, match="(?s)'password'='\\*{6}'.*Unsupported options found for 'jdbc'.*"
                                             "sink.buffer-flush.max-row\n"):
        create_sink(table(postgres, "k INT", "small", **{"sink.buffer-flush.max-row": "5"}), True)
    with pytest.raises(ConnectorError, match="Option 'url' of connector 'jdbc': only PostgreSQL urls"):
        create_source(table(postgres, "k INT", "small", url="jdbc:mysql://h/db"), False)
    with pytest.raises(ConnectorError, match="(?s)Either all or none of the following options.*scan.partition.column"):
        create_source(table(postgres, "k INT", "small", **{"scan.partition.column": "k"}), False)
    # An upsert needs a unique index on the declared key.
    recreate(postgres, "nokey", "k INT, v BIGINT")
    sink = create_sink(table(postgres, "k INT, v BIGINT, PRIMARY KEY (k) NOT ENFORCED", "nokey"), True)
    with pytest.raises(JdbcError, match=r"PRIMARY KEY \(k\) has no unique index"):
        sink.open(SinkJob.fresh())
    sink.close()


def test_large_flushes_go_through_copy_with_the_same_result(postgres):
    from changeflow.connectors.jdbc_sink import COPY_ROWS

    n = COPY_ROWS + 500
    recreate(postgres, "big_up", "k BIGINT PRIMARY KEY, v TEXT, d NUMERIC(6, 2)")
    recreate(postgres, "big_app", "k BIGINT, v TEXT, d NUMERIC(6, 2)")
    up = create_sink(table(postgres, "k BIGINT, v STRING, d DECIMAL(6, 2), PRIMARY KEY (k) NOT ENFORCED",
                           "big_up", **{"sink.buffer-flush.max-rows": str(3 * n)}), True)
    app = create_sink(table(postgres, "k BIGINT, v STRING, d DECIMAL(6, 2)", "big_app",
                            **{"sink.buffer-flush.max-rows": "0"}), True)  # 0: no limit (Flink: no buffering)
    for sink in (up, app):
        sink.open(SinkJob.fresh())
    first = [Change(I, (k, f"v{k}", decimal.Decimal(k % 100) / 4)) for k in range(n)]
    up.write(first, 0)
    # Batch 1: every key updated, then a third of them deleted, and a NULL: folded per key, staged, copied.
    second = [c for k in range(n) for c in (Change(UB, first[k].values), Change(UA, (k, "new", None)))]
    second += [Change(D, (k, "new", None)) for k in range(0, n, 3)]
    up.write(second, 1)
    up.write(second, 1)  # replayed: skipped
    app.write(first + first, 0)
    for sink in (up, app):
        sink.close()
    assert sorted(postgres.execute("SELECT k, v, d FROM big_up")) == [(k, "new", None) for k in range(n) if k % 3]
    assert postgres.execute("SELECT count(*), count(DISTINCT k), sum(d) FROM big_app") == [
        (2 * n, n, 2 * sum(decimal.Decimal(k % 100) / 4 for k in range(n)))]


def test_lookup_joins_plan_as_a_correlate_and_refuse_what_they_cannot_do():
    from changeflow.plan.correlate import Correlate
    from changeflow.sql.errors import SqlError
    from changeflow.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TABLE orders (id INT, cid INT, pt AS PROCTIME()) WITH ('connector' = 'datagen')")
    t_env.execute_sql("CREATE TABLE customers (cid INT, name STRING, PRIMARY KEY (cid) NOT ENFORCED) WITH ("
                      "'connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:5432/db', 'table-name' = 'c', "
                      "'lookup.cache.max-rows' = '100', 'lookup.cache.ttl' = '10 s')")
    t_env.execute_sql("CREATE TABLE other (cid INT, name STRING) WITH ('connector' = 'datagen')")
    lookup = "SELECT o.id, c.name FROM orders AS o {} customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.cid = c.cid{}"
    plan = t_env.sql_query(lookup.format("JOIN", " AND c.name <> 'x'"))._plan
    nodes = []
    while plan is not None:
        nodes.append(plan)
        plan = plan.inputs[0] if plan.inputs else None
    function = next(n for n in nodes if isinstance(n, Correlate)).call.function.instance
    assert function.keys == ("cid",) and function.cache_settings.max_rows == 100
    assert function.cache_settings.expire_after_write_ms == 10_000
    with pytest.raises(SqlError, match="a LEFT lookup join with a condition other than equalities"):
        t_env.sql_query(lookup.format("LEFT JOIN", " AND c.name <> 'x'"))
    with pytest.raises(SqlError, match="into table other, whose connector cannot look rows up"):
        t_env.sql_query("SELECT o.id FROM orders AS o JOIN other FOR SYSTEM_TIME AS OF o.pt AS c ON o.cid = c.cid")


def test_the_lookup_function_queries_by_key_and_caches_as_flink(postgres):
    import time

    from changeflow.connectors.jdbc_lookup import LookupCache

    recreate(postgres, "dim", "cid INT, name TEXT")
    postgres.execute("INSERT INTO dim VALUES (1, 'a'), (2, 'b'), (2, 'b2')")
    source = create_source(table(postgres, "cid INT, name STRING", "dim", **{
        "lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "2",
        "lookup.partial-cache.expire-after-write": "300 ms"}), True)
    assert source.lookup_cache == LookupCache(2, 300, None, True)
    f = source.lookup_function(("cid",))
    f.open(None)
    assert sorted(f.eval(2)) == [(2, "b"), (2, "b2")] and list(f.eval(None)) == []
    postgres.execute("UPDATE dim SET name = 'new' WHERE cid = 1")
    assert list(f.eval(1)) == [(1, "new")]
    postgres.execute("UPDATE dim SET name = 'newer' WHERE cid = 1")
    assert list(f.eval(1)) == [(1, "new")] and list(f.eval(3)) == []  # cached; a missing key is cached too
    assert f.queries == 3
    assert list(f.eval(2)) != [] and f.queries == 4  # 2 was evicted (max-rows 2: keys 1 and 3 were newer)
    time.sleep(0.35)
    assert list(f.eval(1)) == [(1, "newer")]  # expired after write
    f.close()
    # Without cache options: every call queries.
    plain = create_source(table(postgres, "cid INT, name STRING", "dim"), True).lookup_function(("cid",))
    plain.open(None)
    for _ in range(3):
        list(plain.eval(1))
    assert plain.queries == 3
    plain.close()


def test_two_sinks_of_one_job_into_one_database_table_are_refused(postgres):
    recreate(postgres, "shared", "k INT")
    job = SinkJob.fresh()
    first, second = (create_sink(table(postgres, "k INT", "shared"), True) for _ in range(2))
    first.open(job)
    with pytest.raises(JdbcError, match="two sinks of one job write this database table"):
        second.open(job)
    first.close()
    second.open(job)  # the first one closed: no longer shared
    second.close()
