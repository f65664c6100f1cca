"""Reading a ``postgres-cdc`` table's changes: the replication slot, the snapshot, and positions (LSNs).

Why SQL-level decoding. The machine's psycopg is psycopg 3, which has no client for
PostgreSQL's streaming replication protocol; psycopg2 has one, but it pushes changes
down one long-lived connection and wants feedback messages to move the slot. A Spark
source is pulled instead: the driver asks how far the input reaches, executors read a
range, and the range is committed after the micro-batch. SQL-level logical decoding
fits that exactly: ``pg_logical_slot_peek_binary_changes`` decodes the slot's pending
changes without consuming them (any range can be read again after a failure), and
``pg_replication_slot_advance`` moves the slot only when Spark commits a micro-batch,
so the checkpoint, not the slot, owns the position.

Positions. A transaction is read with the micro-batch whose range ``[start, end)``
holds its commit record's LSN; a range ends at the end LSN of its last transaction, so
the next transaction's commit lies after it. PostgreSQL skips, when decoding, the
transactions whose commit record precedes the slot's confirmed position, the same
rule, so advancing the slot to a committed range's end never hides a transaction a
later range needs, and one whose micro-batch is re-run after a failure is read again.
A restarted query resumes from its checkpointed offset: the slot has not passed it
(it is advanced only to ends Spark committed), so nothing is lost, and the transactions
before the offset are skipped, so nothing is repeated.

Snapshot and stream, exactly once. The slot exists (created when missing) before the
snapshot is taken, so every transaction committed after the stream's start is in the
stream. The snapshot is one REPEATABLE READ transaction: its ``pg_export_snapshot()``
is imported by the executor that reads the rows, and its ``pg_current_snapshot()``
(``xmin:xmax:xip``) says which transactions it sees. A transaction of the stream whose
xid the snapshot sees is already in the snapshot's rows and is dropped
(:class:`SnapshotFilter`); every other one is applied after them. Only transactions
whose commit precedes ``pg_current_wal_insert_lsn()`` read with the snapshot can be
visible to it, which bounds the filter. (A transaction that wrote its commit record
before a newly created slot's start but was not yet visible when the snapshot was
taken, possible only while a synchronous standby holds its commit, would be missed.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from changeflow.connectors.jdbc_types import read_value
from changeflow.connectors.pgoutput import Change, Transaction, lsn_int, lsn_text, transactions
from changeflow.connectors.postgres_cdc import CdcConnection, CdcError, PostgresCdcSource
from changeflow.kernels.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE

_WRAP = 1 << 32


@dataclass(frozen=True)
class SnapshotFilter:
    """The transactions a snapshot sees (``pg_current_snapshot()``), for those committed before ``bound``.

    >>> f = SnapshotFilter.parse("100:105:101,103", bound=500)
    >>> [f.drops(x, 400) for x in (99, 101, 102, 103, 105)], f.drops(102, 500)
    ([True, False, True, False, False], False)
    """

    xmin: int
    xmax: int
    xip: frozenset[int]
    bound: int

    @staticmethod
    def parse(text: str, bound: int) -> "SnapshotFilter":
        xmin, xmax, xip = text.split(":")
        return SnapshotFilter(int(xmin), int(xmax), frozenset(int(x) for x in xip.split(",") if x), bound)

    def drops(self, xid: int, commit_lsn: int) -> bool:
        """Whether the transaction's rows are already in the snapshot (xid is pgoutput's 32-bit one)."""
        if commit_lsn >= self.bound:
            return False
        full = (self.xmax & ~(_WRAP - 1)) | xid  # the 64-bit xid nearest xmax
        if full > self.xmax + _WRAP // 2:
            full -= _WRAP
        return full < self.xmax and full not in self.xip


@dataclass(frozen=True)
class StreamSettings:
    """What an executor needs to read a range of changes (picklable)."""

    connection: CdcConnection
    slot: str
    publication: str
    schema_name: str
    table_name: str
    columns: tuple  # (name, DataType) of the connector's columns
    snapshot: SnapshotFilter | None


def settings_of(source: PostgresCdcSource, snapshot: SnapshotFilter | None) -> StreamSettings:
    return StreamSettings(source.connection, source.slot, source.publication, source.schema_name, source.table_name,
                          source.connection.columns, snapshot)


def prepare(source: PostgresCdcSource) -> int:
    """Check the server, table and publication, create what is missing; where the stream starts (an LSN).

    That is the slot's position; with ``latest-offset`` the server's current one if later (a slot
    that already held changes: they are older than the job). Runs on the driver when the job
    first starts: every error names the option or object at fault."""
    c = source.connection
    conn = c.connect(autocommit=True)
    try:
        position = _prepare(source, conn)
        if source.startup_mode == "latest-offset":
            now = conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()[0]
            position = max(position, lsn_int(now))
        return position
    finally:
        conn.close()


def _prepare(source: PostgresCdcSource, conn: Any) -> int:
    import psycopg

    c = source.connection
    wal_level = conn.execute("SHOW wal_level").fetchone()[0]
    if wal_level != "logical":
        raise CdcError(f"{c.where()}: the server's wal_level is '{wal_level}', but reading changes needs "
                       f"wal_level = logical (set it in postgresql.conf and restart the server)")
    c.check_table(conn)
    _publication(source, conn)
    row = conn.execute("SELECT plugin, database, confirmed_flush_lsn::text FROM pg_replication_slots "
                       "WHERE slot_name = %s", (source.slot,)).fetchone()
    if row is None:
        try:
            created = conn.execute("SELECT lsn::text FROM pg_create_logical_replication_slot(%s, 'pgoutput')",
                                   (source.slot,)).fetchone()[0]
        except psycopg.Error as e:
            raise CdcError(f"{c.where()}: cannot create the replication slot of option 'slot.name' = "
                           f"'{source.slot}' as 'username' = '{c.username}' (it needs the REPLICATION attribute): "
                           f"{_first_line(e)}") from None
        return lsn_int(created)
    plugin, database, confirmed = row
    if plugin != "pgoutput" or database != c.database:
        raise CdcError(f"{c.where()}: the replication slot of option 'slot.name' = '{source.slot}' exists for "
                       f"plugin '{plugin}' in database '{database}', not 'pgoutput' in '{c.database}'")
    return lsn_int(confirmed)


def _publication(source: PostgresCdcSource, conn: Any) -> None:
    import psycopg
    from psycopg import sql

    c, name = source.connection, source.publication
    row = conn.execute("SELECT puballtables, pubinsert AND pubupdate AND pubdelete FROM pg_publication "
                       "WHERE pubname = %s", (name,)).fetchone()
    if row is None:
        if source.autocreate == "disabled":
            raise CdcError(f"{c.where()}: the publication '{name}' (option 'debezium.publication.name') does not exist "
                           f"and 'debezium.publication.autocreate.mode' is 'disabled'")
        target = (sql.SQL("FOR ALL TABLES") if source.autocreate == "all_tables"
                  else sql.SQL("FOR TABLE {}").format(sql.Identifier(source.schema_name, source.table_name)))
        try:
            conn.execute(sql.SQL("CREATE PUBLICATION {} ").format(sql.Identifier(name)) + target)
        except psycopg.Error as e:
            raise CdcError(f"{c.where()}: the publication '{name}' (option 'debezium.publication.name') does not "
                           f"exist and 'username' = '{c.username}' cannot create it: {_first_line(e)}. Create it as "
                           f"an owner: CREATE PUBLICATION {name} FOR TABLE {c.table_name}") from None
        return
    if not row[1]:
        raise CdcError(f"{c.where()}: the publication '{name}' does not publish every insert, update and delete "
                       f"(ALTER PUBLICATION {name} SET (publish = 'insert, update, delete'))")
    published = conn.execute("SELECT 1 FROM pg_publication_tables WHERE pubname = %s AND schemaname = %s AND "
                             "tablename = %s", (name, source.schema_name, source.table_name)).fetchone()
    if published is None:
        raise CdcError(f"{c.where()}: the publication '{name}' (option 'debezium.publication.name') does not publish "
                       f"the table (ALTER PUBLICATION {name} ADD TABLE {c.table_name})")


def _check_slot(conn: Any, settings: StreamSettings, position: int) -> None:
    """Fail naming the slot if it was dropped, or moved past ``position``, while the job was stopped."""
    row = conn.execute("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s",
                       (settings.slot,)).fetchone()
    if row is None or lsn_int(row[0]) > position:
        what = ("no longer exists" if row is None
                else f"was moved to {row[0]}, past the checkpoint's {lsn_text(position)}")
        raise CdcError(f"{settings.connection.where()}: the replication slot of option 'slot.name' = "
                       f"'{settings.slot}' {what}: the changes since the checkpoint are lost. Start the job afresh "
                       f"(delete its checkpoint).")


def export_snapshot(connection: CdcConnection) -> tuple[Any, str, SnapshotFilter]:
    """An open REPEATABLE READ transaction: (its connection, its exported snapshot's id, what it sees).

    Keep the connection open until the executor reading the snapshot has imported it."""
    import psycopg

    conn = connection.connect()
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    conn.read_only = True
    snapshot_id, visible, bound = conn.execute(
        "SELECT pg_export_snapshot(), pg_current_snapshot()::text, pg_current_wal_insert_lsn()::text").fetchone()
    return conn, snapshot_id, SnapshotFilter.parse(visible, lsn_int(bound))


def snapshot_rows(settings: StreamSettings, snapshot_id: str, fetch_size: int) -> Iterator[list[tuple]]:
    """The table's rows in the exported snapshot, ``fetch_size`` a list (runs on an executor)."""
    import psycopg
    from psycopg import sql

    c = settings.connection
    conn = c.connect()
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    conn.read_only = True
    types = [t for _, t in c.columns]
    try:
        conn.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot_id)))
        with conn.cursor(name="changeflow_cdc_snapshot") as cur:
            cur.itersize = fetch_size
            cur.execute(f"SELECT {', '.join(CdcConnection.column(n) for n, _ in c.columns)} "  # noqa: S608
                        f"FROM {c.table_name}")
            while rows := cur.fetchmany(fetch_size):
                yield [tuple(read_value(v, t) for v, t in zip(row, types, strict=True)) for row in rows]
    except psycopg.Error as e:
        raise CdcError(f"{c.where()}: reading the snapshot failed: {_first_line(e)}") from None
    finally:
        conn.close()


def _peek(conn: Any, settings: StreamSettings, upto_lsn: int | None, upto_changes: int | None) -> list[bytes]:
    import psycopg

    try:
        rows = conn.execute("SELECT data FROM pg_logical_slot_peek_binary_changes(%s, %s::pg_lsn, %s, "
                            "'proto_version', '1', 'publication_names', %s)",
                            (settings.slot, None if upto_lsn is None else lsn_text(upto_lsn), upto_changes,
                             settings.publication)).fetchall()
    except psycopg.Error as e:
        raise CdcError(f"{settings.connection.where()}: reading the replication slot of option 'slot.name' = "
                       f"'{settings.slot}' failed: {_first_line(e)}") from None
    return [r[0] for r in rows]


def _ours(settings: StreamSettings, t: Transaction, start: int) -> list[Change] | None:
    """The transaction's changes of this table, None if it is outside the range or already in the snapshot."""
    if t.commit_lsn < start:
        return None
    if settings.snapshot is not None and settings.snapshot.drops(t.xid, t.commit_lsn):
        return None
    for r in t.truncated:
        if (r.namespace, r.name) == (settings.schema_name, settings.table_name):
            raise CdcError(f"{settings.connection.where()}: the table was truncated (transaction {t.xid}): a "
                           f"TRUNCATE has no rows to retract; start the job afresh after it")
    return [c for c in t.changes if (c.relation.namespace, c.relation.name) == (settings.schema_name,
                                                                                 settings.table_name)]


def rows_of(change: Change) -> int:
    return 2 if change.op == "U" else 1


def next_end(settings: StreamSettings, start: int, max_rows: int) -> tuple[int, int]:
    """Where the next range from ``start`` ends (whole transactions, about ``max_rows`` change rows): (end, rows).

    ``(start, 0)`` when no transaction has committed since ``start``."""
    conn = settings.connection.connect(autocommit=True)
    try:
        _check_slot(conn, settings, start)
        want = max_rows + 64
        while True:
            messages = _peek(conn, settings, None, want)
            end, rows = start, 0
            for t in transactions(messages, values=False):
                changes = _ours(settings, t, start)
                if changes is None:
                    continue
                end, rows = t.end_lsn, rows + sum(rows_of(c) for c in changes)
                if rows >= max_rows:
                    return end, rows
            if len(messages) < want:  # everything decodable now was read
                return end, rows
            want *= 4
    finally:
        conn.close()


def read_changes(settings: StreamSettings, start: int, end: int) -> Iterator[tuple[int, tuple]]:
    """The change rows of range ``[start, end)`` in order: (row kind, values of the connector's columns)."""
    conn = settings.connection.connect(autocommit=True)
    try:
        decode = _Decoder(settings, conn)
        for t in transactions(_peek(conn, settings, end, None)):
            changes = _ours(settings, t, start)
            if changes is None or t.commit_lsn >= end:
                continue
            for change in changes:
                yield from decode.rows(change)
    finally:
        conn.close()


def advance(settings: StreamSettings, position: int) -> None:
    """Move the slot to ``position`` (a committed range's end), never backwards: PostgreSQL may free the WAL before."""
    conn = settings.connection.connect(autocommit=True)
    try:
        conn.execute("SELECT pg_replication_slot_advance(slot_name, %s::pg_lsn) FROM pg_replication_slots WHERE "
                     "slot_name = %s AND confirmed_flush_lsn < %s::pg_lsn",
                     (lsn_text(position), settings.slot, lsn_text(position)))
    finally:
        conn.close()


class _Decoder:
    """Change messages of the table as rows of the connector's columns, values read as in a SELECT."""

    def __init__(self, settings: StreamSettings, conn: Any) -> None:
        self.settings, self.conn = settings, conn
        self.layouts: dict[int, list] = {}

    def _layout(self, change: Change) -> list:
        from psycopg.pq import Format

        relation = change.relation
        layout = self.layouts.get(relation.oid)
        if layout is None:
            positions = {name: (i, oid) for i, (name, oid) in enumerate(relation.columns)}
            layout = []
            for name, declared in self.settings.columns:
                if name not in positions:
                    raise CdcError(f"{self.settings.connection.where()}: the table has no column '{name}' any more")
                i, oid = positions[name]
                loader = self.conn.adapters.get_loader(oid, Format.TEXT)
                layout.append((i, loader(oid, self.conn) if loader is not None else None, declared))
            self.layouts[relation.oid] = layout
        return layout

    def _values(self, change: Change, raw: list, fallback: list | None) -> tuple:
        from changeflow.connectors.pgoutput import UNCHANGED

        out = []
        for i, loader, declared in self._layout(change):
            value = raw[i]
            if value is UNCHANGED:  # a TOASTed value the update kept: the before-image has it
                value = fallback[i] if fallback is not None else None
            if isinstance(value, bytes):
                value = loader.load(value) if loader is not None else value.decode()
            out.append(read_value(value, declared))
        return tuple(out)

    def rows(self, change: Change) -> Iterator[tuple[int, tuple]]:
        if change.op == "I":
            yield INSERT, self._values(change, change.new or [], None)
            return
        if change.old is None or change.old_is_key:
            what = "an update" if change.op == "U" else "a delete"
            raise CdcError(f"{self.settings.connection.where()}: {what} of table {self.settings.connection.table_name} "
                           f"carries no full before-image (its REPLICA IDENTITY is not FULL), so no -U/-D can be "
                           f"built. Run: ALTER TABLE {self.settings.connection.table_name} REPLICA IDENTITY FULL")
        before = self._values(change, change.old, None)
        if change.op == "D":
            yield DELETE, before
            return
        yield UPDATE_BEFORE, before
        yield UPDATE_AFTER, self._values(change, change.new or [], change.old)


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0]
