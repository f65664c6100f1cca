"""The ``postgres-cdc`` source in Spark jobs, against a real PostgreSQL with wal_level = logical.

A job's snapshot and changes (inserts, updates that move rows between groups, deletes) feed
a GROUP BY upserted into PostgreSQL by the ``jdbc`` sink: its table must equal the same
query run by PostgreSQL over the source table, after the first run and after a restart from
the checkpoint with changes made while the job was down (a repeat would double a sum, a loss
would miss one). Then the errors a user meets first, each naming what is wrong.
Every test drops the replication slots and publications it made (a slot keeps WAL).
"""

from __future__ import annotations

import random
import time
import uuid

import pytest

from tests.connectors.test_job_resume import wait_until
from tests.postgres_server import PASSWORD, USER


def cdc(server, table: str, slot: str, publication: str, **extra: str) -> str:
    options = {"connector": "postgres-cdc", "hostname": "127.0.0.1", "port": str(server.port), "username": USER,
               "password": PASSWORD, "database-name": "postgres", "schema-name": "public", "table-name": table,
               "slot.name": slot, "decoding.plugin.name": "pgoutput", "debezium.publication.name": publication,
               "debezium.publication.autocreate.mode": "filtered", **extra}
    return ", ".join(f"'{k}' = '{v}'" for k, v in options.items())


@pytest.fixture
def names(postgres):
    """A fresh slot and publication name; both dropped after the test."""
    suffix = uuid.uuid4().hex[:8]
    slot, publication = f"cf_slot_{suffix}", f"cf_pub_{suffix}"
    yield slot, publication
    # A reader's connection closes when its micro-batch ends, but the server process that held the slot
    # exits a moment later: until then the slot is active and cannot be dropped.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and postgres.execute(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = %s AND active", (slot,)):
        time.sleep(0.1)
    postgres.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
                     (slot,))
    postgres.execute(f"DROP PUBLICATION IF EXISTS {publication}")


def _batch(postgres, table: str) -> list[tuple]:
    return sorted(postgres.execute(f"SELECT usr, SUM(amount)::bigint, COUNT(*) FROM {table} GROUP BY usr"))


def _changes(postgres, table: str, rng: random.Random, first_id: int, count: int) -> None:
    """Inserts, updates (some moving a row to another user) and deletes, a few to a transaction."""
    with postgres.connect() as conn:
        for i in range(count):
            with conn.transaction(), conn.cursor() as cur:
                cur.execute(f"INSERT INTO {table} VALUES (%s, %s, %s)",
                            (first_id + i, f"u{rng.randrange(5)}", rng.randrange(1, 50)))
                cur.execute(f"UPDATE {table} SET amount = amount + 1, usr = %s WHERE id = %s",
                            (f"u{rng.randrange(5)}", rng.randrange(first_id + i + 1)))
                if i % 3 == 0:
                    cur.execute(f"DELETE FROM {table} WHERE id = %s", (rng.randrange(first_id + i + 1),))


def test_snapshot_and_changes_into_a_group_by_equal_the_batch_result_across_a_restart(
        postgres, stream_env, names, tmp_path):
    slot, publication = names
    table, sink = f"orders_{slot[-8:]}", f"totals_{slot[-8:]}"
    postgres.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, usr TEXT, amount BIGINT)")
    postgres.execute(f"ALTER TABLE {table} REPLICA IDENTITY FULL")
    postgres.execute(f"CREATE TABLE {sink} (usr TEXT PRIMARY KEY, total BIGINT, n BIGINT)")
    rng = random.Random(11)
    with postgres.connect() as conn, conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {table} VALUES (%s, %s, %s)",
                        [(i, f"u{rng.randrange(5)}", rng.randrange(1, 50)) for i in range(25)])
    stream_env.get_config().set("changeflow.checkpoint-dir", str(tmp_path / "checkpoints"))
    stream_env.get_config().set("changeflow.source.rows-per-batch", "20")  # two snapshot files, then ranges
    stream_env.execute_sql(f"CREATE TABLE orders (id INT, usr STRING, amount BIGINT) "
                           f"WITH ({cdc(postgres, table, slot, publication)})")
    stream_env.execute_sql(f"CREATE TABLE totals (usr STRING, total BIGINT, n BIGINT, PRIMARY KEY (usr) NOT ENFORCED) "
                           f"WITH ('connector' = 'jdbc', 'url' = '{postgres.url}', 'table-name' = '{sink}', "
                           f"'username' = '{USER}', 'password' = '{PASSWORD}')")
    insert = "INSERT INTO totals SELECT usr, SUM(amount), COUNT(*) FROM orders GROUP BY usr"

    def done():
        return sorted(postgres.execute(f"SELECT usr, total, n FROM {sink}")) == _batch(postgres, table)

    job = stream_env.execute_sql(insert).get_job_client()
    try:
        _changes(postgres, table, rng, 100, 10)  # while the snapshot is staged: in it, or in the stream
        wait_until(done, job, 600)
        _changes(postgres, table, rng, 150, 10)  # from the replication slot
        wait_until(done, job, 600)
    finally:
        job.cancel()

    _changes(postgres, table, rng, 200, 15)  # while the job is down: the slot keeps them
    job = stream_env.execute_sql(insert).get_job_client()
    try:
        wait_until(done, job, 600)
    finally:
        job.cancel()
    assert sorted(postgres.execute(f"SELECT usr, total, n FROM {sink}")) == _batch(postgres, table)
