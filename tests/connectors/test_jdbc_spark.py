"""The ``jdbc`` connector in Spark jobs, against a real PostgreSQL (tests/postgres_server.py).

Few queries (each costs seconds): one streaming and one batch INSERT of a two-level count over a partitioned
jdbc scan into an upsert sink, a two-run append job whose second run replays a micro-batch the database
already has, a job failing at its start, and a lookup join.
"""

from __future__ import annotations

import os
import random

import pytest

from tests.connectors.test_job_resume import committed_batches, wait_until
from tests.connectors.test_unbounded_sources import put
from tests.postgres_server import PASSWORD, USER


def jdbc(server, name: str) -> str:
    return (f"'connector' = 'jdbc', 'url' = '{server.url}', 'table-name' = '{name}', 'username' = '{USER}', "
            f"'password' = '{PASSWORD}'")


def test_streaming_upserts_and_deletes_equal_the_batch_result(postgres, stream_env, batch_env):
    postgres.execute("DROP TABLE IF EXISTS clicks, by_count_s, by_count_b")
    postgres.execute("CREATE TABLE clicks (id INT, usr TEXT, amount BIGINT)")
    rng = random.Random(7)
    rows = [(i, f"u{rng.randrange(8)}", rng.randrange(-5, 20)) for i in range(120)]
    with postgres.connect() as conn, conn.cursor() as cur:
        cur.executemany("INSERT INTO clicks VALUES (%s, %s, %s)", rows)
    for mode in ("s", "b"):
        postgres.execute(f"CREATE TABLE by_count_{mode} (n BIGINT PRIMARY KEY, users BIGINT)")
    # Small micro-batches: users' counts move between micro-batches, so the second level deletes rows.
    stream_env.get_config().set("changeflow.source.rows-per-batch", "40")
    for env, mode in ((stream_env, "s"), (batch_env, "b")):
        env.execute_sql(f"CREATE TABLE clicks (id INT, usr STRING, amount BIGINT) WITH ({jdbc(postgres, 'clicks')}, "
                        f"'scan.partition.column' = 'id', 'scan.partition.num' = '3', "
                        f"'scan.partition.lower-bound' = '0', 'scan.partition.upper-bound' = '119')")
        env.execute_sql(f"CREATE TABLE by_count (n BIGINT, users BIGINT, PRIMARY KEY (n) NOT ENFORCED) "
                        f"WITH ({jdbc(postgres, f'by_count_{mode}')}, 'sink.buffer-flush.max-rows' = '3')")
        # One query: the two-level count upserts and deletes (a count's row goes when no user has it any more).
        env.execute_sql("INSERT INTO by_count SELECT n, COUNT(*) FROM "
                        "(SELECT usr, COUNT(*) AS n FROM clicks GROUP BY usr) GROUP BY n").wait()

    per_user: dict = {}
    for _, usr, _ in rows:
        per_user[usr] = per_user.get(usr, 0) + 1
    counts: dict = {}
    for n in per_user.values():
        counts[n] = counts.get(n, 0) + 1
    for mode in ("s", "b"):
        assert sorted(postgres.execute(f"SELECT n, users FROM by_count_{mode}")) == sorted(counts.items())
    # Every streaming micro-batch committed with its batch id (120 rows, 40 a micro-batch).
    assert postgres.execute("SELECT batch_id >= 2 FROM changeflow_batches WHERE query_id LIKE '%:by_count_s'") == [
        (True,)]


def test_a_replayed_micro_batch_after_a_restart_is_written_once(postgres, stream_env, tmp_path):
    """The job stops after the database committed a micro-batch but before Spark did: the resumed job runs
    that micro-batch again, and the sink's record of its batch id makes the replay write nothing."""
    postgres.execute("DROP TABLE IF EXISTS events")
    postgres.execute("CREATE TABLE events (id INT, v TEXT)")
    incoming, checkpoints = tmp_path / "in", tmp_path / "checkpoints"
    incoming.mkdir()
    stream_env.get_config().set("changeflow.checkpoint-dir", str(checkpoints))
    stream_env.execute_sql(f"CREATE TABLE src (id INT, v STRING) WITH ('connector' = 'filesystem', "
                           f"'path' = '{incoming}', 'format' = 'csv', 'source.monitor-interval' = '200 ms')")
    stream_env.execute_sql(f"CREATE TABLE events (id INT, v STRING) WITH ({jdbc(postgres, 'events')})")
    insert = "INSERT INTO events SELECT id, UPPER(v) FROM src WHERE id > 0"
    count = lambda: postgres.execute("SELECT count(*) FROM events")[0][0]  # noqa: E731

    put(incoming, "1.csv", "1,a\n2,b\n0,skipped\n")
    job = stream_env.execute_sql(insert).get_job_client()
    directory = checkpoints / "insert-into_default_catalog.default_database.events"
    try:
        wait_until(lambda: count() == 2 and committed_batches(directory), job)
        put(incoming, "2.csv", "3,c\n")
        wait_until(lambda: count() == 3 and len(committed_batches(directory)) >= 2, job)
    finally:
        job.cancel()
    # Undo Spark's commit of the last micro-batch and changeflow's record of delivering it: as if the job had
    # been killed right after the database transaction committed.
    last = max(int(n) for n in committed_batches(directory))
    for name in (str(last), f".{last}.crc"):  # the commit and its checksum file
        if (directory / "checkpoint" / "commits" / name).exists():
            os.remove(directory / "checkpoint" / "commits" / name)
    (directory / "sink-delivered").write_text(str(last - 1))

    put(incoming, "3.csv", "4,d\n5,e\n")
    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(lambda: count() >= 5, job)
    finally:
        job.cancel()
    assert sorted(postgres.execute("SELECT id, v FROM events")) == [(1, "A"), (2, "B"), (3, "C"), (4, "D"),
                                                                     (5, "E")]
    assert postgres.execute("SELECT batch_id FROM changeflow_batches WHERE query_id LIKE '%:events'")[0][0] > last


def test_a_wrong_password_fails_the_insert_job_naming_the_option(postgres, stream_env):
    postgres.execute("CREATE TABLE IF NOT EXISTS sink_pw (k INT)")
    stream_env.execute_sql("CREATE TABLE numbers (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3')")
    stream_env.execute_sql(f"CREATE TABLE sink_pw (k INT) WITH ({jdbc(postgres, 'sink_pw')})".replace(
        f"'password' = '{PASSWORD}'", "'password' = 'nope'"))
    with pytest.raises(Exception, match="Connector 'jdbc' of table .*sink_pw.*wrong 'password' or 'username'"):
        stream_env.execute_sql("INSERT INTO sink_pw SELECT k FROM numbers").wait()


def test_a_lookup_join_reads_the_dimension_table_per_probe_row(postgres, stream_env, tmp_path):
    postgres.execute("DROP TABLE IF EXISTS customers")
    postgres.execute("CREATE TABLE customers (cid INT PRIMARY KEY, name TEXT, tier SMALLINT)")
    postgres.execute("INSERT INTO customers VALUES (1, 'ann', 1), (2, 'bob', 2)")
    (tmp_path / "orders.csv").write_text("10,1\n11,2\n12,3\n13,1\n14,\n")
    stream_env.execute_sql(f"CREATE TABLE orders (id INT, cid INT, pt AS PROCTIME()) WITH ('connector' = "
                           f"'filesystem', 'path' = '{tmp_path / 'orders.csv'}', 'format' = 'csv')")
    stream_env.execute_sql(f"CREATE TABLE customers (cid INT, name STRING, tier SMALLINT, PRIMARY KEY (cid) NOT "
                           f"ENFORCED) WITH ({jdbc(postgres, 'customers')}, 'lookup.cache.max-rows' = '10', "
                           f"'lookup.cache.ttl' = '1 min')")
    result = stream_env.execute_sql(
        "SELECT o.id, c.name, c.tier FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c "
        "ON o.cid = c.cid")
    with result.collect() as rows:
        got = sorted((tuple(r), str(r.get_row_kind())) for r in rows)
    assert got == [((10, "ann", 1), "+I"), ((11, "bob", 2), "+I"), ((12, None, None), "+I"),
                   ((13, "ann", 1), "+I"), ((14, None, None), "+I")]
