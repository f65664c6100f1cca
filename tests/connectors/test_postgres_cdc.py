"""The ``postgres-cdc`` connector without Spark: its options, its checks against a real PostgreSQL, and
the snapshot and change stream read directly (the functions a Spark job's driver and executors call).

Exactness: a snapshot taken while other transactions run, plus the stream's changes from the
slot's start, applied to an empty table, give the table's final rows (none lost, none twice).
"""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest

from changeflow.connectors import ConnectorError, create_source
from changeflow.connectors.jdbc import JdbcError
from changeflow.connectors.postgres_cdc import CdcError
from changeflow.connectors.postgres_cdc_stream import (advance, export_snapshot, next_end, prepare, read_changes,
                                                       settings_of, snapshot_rows)
from changeflow.kernels.changelog import DELETE, INSERT, UPDATE_AFTER
from changeflow.sql.ddl import parse_create_table
from tests.postgres_server import PASSWORD, USER


def _table(port: int, table: str = "t", columns: str = "id INT, v STRING", **extra: str):
    options = {"connector": "postgres-cdc", "hostname": "127.0.0.1", "port": str(port), "username": USER,
               "password": PASSWORD, "database-name": "postgres", "schema-name": "public", "table-name": table,
               "slot.name": "s", "decoding.plugin.name": "pgoutput", **extra}
    listed = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return parse_create_table(f"CREATE TABLE {table} ({columns}) WITH ({listed})")[0]


def _source(port: int, **kw):
    return create_source(_table(port, **kw), True)


def test_options_are_checked_by_name():
    with pytest.raises(ConnectorError, match=r"(?s)Unsupported options found for 'postgres-cdc'.*\n\nbogus\n"):
        _source(5432, bogus="1")
    with pytest.raises(ConnectorError, match=r"(?s)Missing required options are:\n\nslot.name"):
        create_source(parse_create_table("CREATE TABLE t (id INT) WITH ('connector' = 'postgres-cdc', 'hostname' = "
                                         "'h', 'username' = 'u', 'password' = 'p', 'database-name' = 'd', "
                                         "'schema-name' = 's', 'table-name' = 't')")[0], True)
    with pytest.raises(ConnectorError, match="does not support 'latest-offset' startup mode when "
                                             "'scan.incremental.snapshot.enabled' is disabled"):
        _source(5432, **{"scan.startup.mode": "latest-offset"})
    with pytest.raises(ConnectorError, match="Supported values are \\[initial, snapshot, latest-offset\\], but was: "
                                             "earliest"):
        _source(5432, **{"scan.startup.mode": "earliest"})
    with pytest.raises(ConnectorError, match="'decoding.plugin.name' = 'decoderbufs' is not supported by changeflow"):
        _source(5432, **{"decoding.plugin.name": "decoderbufs"})
    with pytest.raises(ConnectorError, match="heartbeat.interval.ms of 'postgres-cdc' are not supported"):
        _source(5432, **{"heartbeat.interval.ms": "30s"})
    with pytest.raises(ConnectorError, match="Debezium properties debezium.snapshot.mode are not supported"):
        _source(5432, **{"debezium.snapshot.mode": "never"})
    with pytest.raises(ConnectorError, match="'slot.name' = 'Bad-Slot' is not a replication slot name"):
        _source(5432, **{"slot.name": "Bad-Slot"})
    with pytest.raises(ConnectorError, match="in batch mode is not allowed"):
        create_source(_table(5432), False)
    assert _source(5432, **{"scan.startup.mode": "latest-offset", "scan.incremental.snapshot.enabled": "true"})


@pytest.fixture
def fresh(postgres):
    """A new table name; its slot and publication are dropped after the test."""
    name = f"cdc_{uuid.uuid4().hex[:8]}"
    yield name
    postgres.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
                     (f"{name}_slot",))
    postgres.execute(f"DROP PUBLICATION IF EXISTS {name}_pub")


def _cdc(postgres, name: str, **extra: str):
    return _source(postgres.port, table=name, **{"slot.name": f"{name}_slot", "debezium.publication.name":
                                                 f"{name}_pub", "debezium.publication.autocreate.mode": "filtered",
                                                 **extra})


def test_a_wrong_password_names_the_options(postgres, fresh):
    source = _cdc(postgres, fresh, password="wrong")
    with pytest.raises(CdcError, match=r"Connector 'postgres-cdc' of table '.*' \('hostname' = '127.0.0.1'.*cannot "
                                       r"log in as 'username' = 'changeflow': wrong 'password' or 'username'"):
        prepare(source)


def test_a_missing_table_names_the_option(postgres, fresh):
    with pytest.raises(JdbcError, match=rf"'schema-name' = 'public', 'table-name' = '{fresh}'\): the table of "
                                        rf"option 'table-name' does not exist"):
        prepare(_cdc(postgres, fresh))


def test_a_user_without_rights_is_told_what_to_create(postgres, fresh):
    postgres.execute(f"CREATE TABLE {fresh} (id INT, v TEXT)")
    role = f"{fresh}_user"
    postgres.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    try:
        postgres.execute(f"GRANT SELECT ON {fresh} TO {role}")
        source = _cdc(postgres, fresh, username=role, password="pw")
        with pytest.raises(CdcError, match=rf"the publication '{fresh}_pub' \(option 'debezium.publication.name'\) "
                                           rf"does not exist and 'username' = '{role}' cannot create it: .*CREATE "
                                           rf"PUBLICATION {fresh}_pub FOR TABLE public.{fresh}"):
            prepare(source)
        postgres.execute(f"CREATE PUBLICATION {fresh}_pub FOR TABLE {fresh}")
        with pytest.raises(CdcError, match=rf"cannot create the replication slot of option 'slot.name' = "
                                           rf"'{fresh}_slot' as 'username' = '{role}' \(it needs the REPLICATION "
                                           rf"attribute\)"):
            prepare(source)
    finally:
        postgres.execute(f"DROP OWNED BY {role}")
        postgres.execute(f"DROP ROLE {role}")


def test_a_publication_without_the_table_is_named(postgres, fresh):
    postgres.execute(f"CREATE TABLE {fresh} (id INT, v TEXT)")
    postgres.execute(f"CREATE TABLE {fresh}_x (id INT)")
    postgres.execute(f"CREATE PUBLICATION {fresh}_pub FOR TABLE {fresh}_x")
    with pytest.raises(CdcError, match=rf"the publication '{fresh}_pub' .* does not publish the table \(ALTER "
                                       rf"PUBLICATION {fresh}_pub ADD TABLE public.{fresh}\)"):
        prepare(_cdc(postgres, fresh))


def test_wal_level_not_logical_is_named():
    from tests import postgres_server

    server = postgres_server.start(wal_level="replica")
    try:
        server.execute("CREATE TABLE t (id INT, v TEXT)")
        with pytest.raises(CdcError, match="the server's wal_level is 'replica', but reading changes needs wal_level "
                                           "= logical"):
            prepare(_source(server.port))
    finally:
        server.stop()


def _apply(rows: dict, kind: int, values: tuple) -> None:
    key = values[0]
    if kind in (INSERT, UPDATE_AFTER):
        assert key not in rows, f"{values} inserted twice"
        rows[key] = values
    else:
        assert rows.pop(key) == values, f"{values} retracted but not there as it is"


def test_snapshot_then_stream_is_exact_with_transactions_running_across_the_snapshot(postgres, fresh):
    postgres.execute(f"CREATE TABLE {fresh} (id INT PRIMARY KEY, v TEXT, n NUMERIC(10, 2))")
    postgres.execute(f"ALTER TABLE {fresh} REPLICA IDENTITY FULL")
    postgres.execute(f"INSERT INTO {fresh} SELECT i, 'v' || i, i / 4.0 FROM generate_series(1, 50) i")
    source = _cdc(postgres, fresh, columns="id INT, v STRING, n DECIMAL(10, 2)")
    start = prepare(source)
    settings = settings_of(source, None)
    stop = threading.Event()

    def writer():  # small transactions, committing while the snapshot is taken and read
        i = 100
        with postgres.connect() as conn:
            while not stop.is_set():
                with conn.transaction():
                    conn.execute(f"INSERT INTO {fresh} VALUES (%s, 'w', 1.5)", (i,))
                    conn.execute(f"UPDATE {fresh} SET v = v || '+', n = n + 1 WHERE id = %s", (i % 50 + 1,))
                    conn.execute(f"DELETE FROM {fresh} WHERE id = %s", (i - 3,))
                i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        open_tx = psycopg.connect(host="127.0.0.1", port=postgres.port, dbname="postgres", user=USER,
                                  password=PASSWORD)  # a transaction spanning the snapshot
        open_tx.execute(f"INSERT INTO {fresh} VALUES (99, 'open', 0)")
        conn, snapshot_id, seen = export_snapshot(source.connection)
        rows: dict = {}
        try:
            for chunk in snapshot_rows(settings, snapshot_id, 7):
                for values in chunk:
                    _apply(rows, INSERT, values)
        finally:
            conn.close()
        open_tx.commit()
        open_tx.close()
    finally:
        stop.set()
        thread.join()

    time.sleep(1)  # commits are asynchronous on the test server: decoding reads flushed WAL
    settings = settings_of(source, seen)
    position, total = start, 0
    while True:
        end, count = next_end(settings, position, 20)
        if end == position:
            break
        changes = list(read_changes(settings, position, end))
        assert len(changes) == count
        for kind, values in changes:
            _apply(rows, kind, values)
        advance(settings, end)
        position, total = end, total + count
    assert total > 0
    assert sorted(rows.values()) == sorted(postgres.execute(f"SELECT id, v, n FROM {fresh}"))


def test_an_update_without_a_full_before_image_names_the_table(postgres, fresh):
    postgres.execute(f"CREATE TABLE {fresh} (id INT PRIMARY KEY, v TEXT)")
    source = _cdc(postgres, fresh)
    start = prepare(source)
    postgres.execute(f"INSERT INTO {fresh} VALUES (1, 'a')")
    postgres.execute(f"UPDATE {fresh} SET v = 'b' WHERE id = 1")

    time.sleep(1)
    settings = settings_of(source, None)
    end, _ = next_end(settings, start, 100)
    with pytest.raises(CdcError, match=rf"an update of table public.{fresh} carries no full before-image \(its "
                                       rf"REPLICA IDENTITY is not FULL\).*ALTER TABLE public.{fresh} REPLICA "
                                       rf"IDENTITY FULL"):
        list(read_changes(settings, start, end))


def test_latest_offset_reads_only_changes_after_the_first_start(postgres, fresh):
    postgres.execute(f"CREATE TABLE {fresh} (id INT PRIMARY KEY, v TEXT)")
    postgres.execute(f"ALTER TABLE {fresh} REPLICA IDENTITY FULL")
    prepare(_cdc(postgres, fresh))  # the slot exists and keeps what follows
    postgres.execute(f"INSERT INTO {fresh} VALUES (1, 'before the job')")
    source = _cdc(postgres, fresh, **{"scan.startup.mode": "latest-offset",
                                      "scan.incremental.snapshot.enabled": "true"})
    start = prepare(source)
    postgres.execute(f"INSERT INTO {fresh} VALUES (2, 'after')")
    postgres.execute(f"DELETE FROM {fresh} WHERE id = 1")
    time.sleep(1)
    settings = settings_of(source, None)
    end, count = next_end(settings, start, 100)
    assert count == 2
    assert list(read_changes(settings, start, end)) == [(INSERT, (2, "after")), (DELETE, (1, "before the job"))]
