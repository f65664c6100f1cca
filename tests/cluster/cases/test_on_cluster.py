"""changeflow end to end on a standalone cluster whose executors do not have it (see conftest.py).

Paths are ``file://`` URIs throughout (checkpoint-dir, filesystem tables): the
cluster runs on this machine, so a ``file://`` URI is storage every executor reads.
"""

from __future__ import annotations

import os
import uuid

import pytest

from changeflow.common import Configuration, Row
from changeflow.connectors import filestore
from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.runtime.spark.connectors.hadoop_store import HadoopFileStore
from changeflow.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.cluster


def uri(cluster, name: str) -> str:
    """A new ``file://`` URI below the suite's directory."""
    return "file://" + os.path.join(cluster.root, f"{name}-{uuid.uuid4().hex[:8]}")


def table_env(cluster, streaming: bool = True, checkpoint: bool = True) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=cluster.spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    if checkpoint:
        t_env.get_config().set("changeflow.checkpoint-dir", uri(cluster, "checkpoints"))
    return t_env


def materialize(rows) -> list[tuple]:
    """A changelog applied to an empty multiset."""
    result: list[tuple] = []
    for row in rows:
        values = tuple(row)
        if str(row.get_row_kind()) in ("+I", "+U"):
            result.append(values)
        else:
            result.remove(values)
    return sorted(result)


ORDERS = [("a", "x", 3), ("b", "x", 4), ("a", "y", 5), ("c", "y", 1), ("a", "x", 2), ("b", "y", 7)]


def test_executors_run_the_shipped_package(cluster):
    assert not cluster.executors_had_changeflow_before_shipping  # the fixture's premise
    table_env(cluster, streaming=False).from_elements([(1,)], ["n"]).execute().collect()  # ships on first use
    assert cluster.executors_import_changeflow()


def test_streaming_two_level_aggregation_over_a_file_uri_source(cluster):
    source = uri(cluster, "orders")
    store = filestore.store_for(source)
    store.makedirs(source)
    store.write_bytes(filestore.join(source, "1.csv"), "".join(f"{u},{s},{v}\n" for u, s, v in ORDERS).encode())
    t_env = table_env(cluster)
    t_env.execute_sql(f"CREATE TABLE orders (u STRING, shop STRING, v INT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{source}', 'format' = 'csv')")
    query = ("SELECT total, COUNT(*) AS users FROM (SELECT u, SUM(v) AS total FROM orders GROUP BY u) "
             "GROUP BY total")
    with t_env.sql_query(query).execute().collect() as rows:
        streamed = materialize(rows)
    # The fundamental invariant: the changelog applied to an empty table is the batch result.
    assert streamed == [(1, 1), (10, 1), (11, 1)]


def test_insert_into_an_upsert_file_sink_under_a_file_uri_checkpoint_dir(cluster):
    sink = uri(cluster, "totals")
    t_env = table_env(cluster)
    t_env.create_temporary_view("orders", t_env.from_elements(ORDERS, ["u", "shop", "v"]))
    t_env.execute_sql(f"CREATE TABLE totals (u STRING, total BIGINT, PRIMARY KEY (u) NOT ENFORCED) WITH ("
                      f"'connector' = 'filesystem', 'path' = '{sink}', 'format' = 'csv', "
                      f"'sink.changelog-mode' = 'upsert')")
    t_env.execute_sql("INSERT INTO totals SELECT u, SUM(v) FROM orders GROUP BY u").wait()
    checkpoint_dir = t_env.get_config().get("changeflow.checkpoint-dir")
    local = filestore.local_path(checkpoint_dir)
    # A directory per job below the URI's path (not one literally named 'file:').
    assert os.listdir(local) == ["insert-into_default_catalog.default_database.totals"]
    assert not os.path.exists(os.path.join(os.getcwd(), "file:"))

    reader = table_env(cluster, streaming=False, checkpoint=False)
    reader.execute_sql(f"CREATE TABLE changes (op STRING, u STRING, total BIGINT) WITH ("
                       f"'connector' = 'filesystem', 'path' = '{sink}', 'format' = 'csv')")
    with reader.sql_query("SELECT op, u, total FROM changes").execute().collect() as rows:
        table: dict[str, int] = {}
        for op, user, total in (tuple(r) for r in rows):  # replayed in the sink's write order
            if op in ("+I", "+U"):
                table[user] = total
            else:
                table.pop(user, None)
    assert table == {"a": 10, "b": 11, "c": 1}


def test_hadoop_file_store_serves_a_file_uri_sink_end_to_end(cluster, monkeypatch):
    """The JVM's Hadoop FileSystem (not os) writes the sink, the job's files and the staged source."""
    hadoop = HadoopFileStore(cluster.spark)
    monkeypatch.setitem(filestore._stores, "file", lambda path: hadoop)
    sink = uri(cluster, "counts")
    t_env = table_env(cluster)
    t_env.create_temporary_view("orders", t_env.from_elements(ORDERS, ["u", "shop", "v"]))
    t_env.execute_sql(f"CREATE TABLE counts (shop STRING, n BIGINT, PRIMARY KEY (shop) NOT ENFORCED) WITH ("
                      f"'connector' = 'filesystem', 'path' = '{sink}', 'format' = 'json', "
                      f"'sink.changelog-mode' = 'upsert')")
    t_env.execute_sql("INSERT INTO counts SELECT shop, COUNT(*) FROM orders WHERE v > 2 GROUP BY shop").wait()
    names = [n for n, _ in hadoop.entries(sink)]
    assert names and all(n.startswith("part-") for n in names)  # Hadoop's .crc files are hidden from listings
    job = filestore.join(t_env.get_config().get("changeflow.checkpoint-dir"),
                         "insert-into_default_catalog.default_database.counts")
    assert {"checkpoint", "sink-writer", "sink-delivered"} <= {n for n, _ in hadoop.entries(job)}
    reader = table_env(cluster, streaming=False, checkpoint=False)
    reader.execute_sql(f"CREATE TABLE counts_in (op STRING, shop STRING, n BIGINT) WITH ("
                       f"'connector' = 'filesystem', 'path' = '{sink}', 'format' = 'json')")
    with reader.sql_query("SELECT op, shop, n FROM counts_in").execute().collect() as rows:
        final = {shop: n for op, shop, n in (tuple(r) for r in rows) if op in ("+I", "+U")}
    assert final == {"x": 2, "y": 2}


def test_datastream_keyed_reduce_in_streaming_mode(cluster):
    conf = Configuration()
    conf.set_string("changeflow.checkpoint-dir", uri(cluster, "ds-checkpoints"))
    conf.set_string("changeflow.state.buckets", "2")
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=cluster.spark)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    sums = env.from_collection([(u, v) for u, _, v in ORDERS]).key_by(lambda r: r[0]).reduce(
        lambda a, b: (a[0], a[1] + b[1]))
    out = list(sums.execute_and_collect())
    # One running sum per input record, in input order per key.
    assert [r for r in out if r[0] == "a"] == [("a", 3), ("a", 8), ("a", 10)]
    assert sorted(out) == sorted([("a", 3), ("b", 4), ("a", 8), ("c", 1), ("a", 10), ("b", 11)])


def test_batch_query(cluster):
    t_env = table_env(cluster, streaming=False, checkpoint=False)
    t_env.create_temporary_view("orders", t_env.from_elements(ORDERS, ["u", "shop", "v"]))
    with t_env.sql_query("SELECT shop, SUM(v) AS total, MAX(u) AS top FROM orders GROUP BY shop").execute().collect() \
            as rows:
        assert sorted(tuple(r) for r in rows) == [("x", 9, "b"), ("y", 13, "c")]


def test_from_elements_in_streaming_mode_under_the_checkpoint_dir(cluster):
    t_env = table_env(cluster)
    t_env.create_temporary_view("elements", t_env.from_elements([Row(k, v) for k, _, v in ORDERS], ["k", "v"]))
    with t_env.sql_query("SELECT k, COUNT(*) AS n FROM elements GROUP BY k").execute().collect() as rows:
        assert materialize(rows) == [("a", 3), ("b", 2), ("c", 1)]


def test_from_elements_in_streaming_mode_without_checkpoint_dir_is_refused(cluster):
    t_env = table_env(cluster, checkpoint=False)
    table = t_env.from_elements([(1, 2)], ["k", "v"])
    with pytest.raises(ValueError, match=r"executors read.*Set changeflow\.checkpoint-dir"), \
            table.execute().collect() as rows:
        list(rows)
