"""The ``jdbc`` sink: appends, or upserts and deletes by the declared primary key, exactly once across restarts.

Without a primary key the sink appends (``INSERT``) and takes insert-only input
only: an updating query fails at planning, as Flink's JDBC sink requires a
primary key for one. With ``PRIMARY KEY (k) NOT ENFORCED`` it writes as Flink's
upsert JDBC sink does: ``+I``/``+U`` become ``INSERT ... ON CONFLICT (k) DO UPDATE``
(Flink's PostgreSQL dialect), ``-D`` a ``DELETE ... WHERE k = ?``, and ``-U`` is
skipped (Flink's planner never sends it to this sink). Rows are folded per key in
a buffer of ``sink.buffer-flush.max-rows`` changes, the last change of a key
winning, as Flink's reducing buffer does; the table needs a unique index on the
key columns (checked when the job opens the table).

Exactly once: each micro-batch of a streaming job is ONE database transaction
that also records ``(query id, batch id)`` in the table ``changeflow_batches``
of the target database (created when missing). The query id is the job's writer
id (kept in its checkpoint, :class:`~changeflow.connectors.sink_job.SinkJob`) and
the table's name; a micro-batch that a restarted job runs again finds its batch
id recorded and writes nothing. A transaction failing for a lost connection is
retried ``sink.max-retries`` times (a new connection each time, after 1 s, 2 s,
...), which is safe for the same reason. A batch job's result is one transaction.

The sink writes from the process that receives the committed micro-batch (the
driver, in ``foreachBatch``), over the network: nothing assumes a shared disk.
``sink.buffer-flush.interval`` and ``sink.parallelism`` are accepted: a
micro-batch is flushed when it commits, through one connection, since one
transaction per micro-batch is what makes the writes exactly once.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from changeflow.catalog import CatalogTable
from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.connectors.jdbc import Connection, JdbcError, check_options, positive
from changeflow.connectors.options import duration_ms
from changeflow.connectors.sink_job import SinkJob

BATCHES_TABLE = "changeflow_batches"
_CREATE_BATCHES = (f"CREATE TABLE IF NOT EXISTS {BATCHES_TABLE} (query_id TEXT PRIMARY KEY, "
                   f"batch_id BIGINT NOT NULL, committed_at TIMESTAMPTZ NOT NULL DEFAULT now())")
_UPSERTS = (RowKind.INSERT, RowKind.UPDATE_AFTER)
# From this many rows a flush goes through COPY (appended rows straight into the table; upserted rows into a
# temporary staging table, then one INSERT ... SELECT ... ON CONFLICT): several times faster than one
# INSERT per row, with the same result. Fewer rows take executemany, which costs no extra statements.
COPY_ROWS = 1000
_STAGE = "changeflow_stage"
# The (query id, url) of the sinks open in this process: two sinks of one job writing one database table would
# share a batch record, so the second's writes would be skipped as replays; such a job is refused.
_OPEN: set[tuple[str, str]] = set()
_BATCHES_READY: set[str] = set()  # the databases (urls) whose changeflow_batches this process made sure of


def ensure_batches_table(conn: Any) -> None:
    """Create the table of committed micro-batches when missing (committed on its own)."""
    import psycopg

    try:
        with conn.cursor() as cur:
            cur.execute(_CREATE_BATCHES)
        conn.commit()
    except psycopg.errors.UniqueViolation:  # another job created it at the same moment
        conn.rollback()


def commit_batch(conn: Any, url: str, query_id: str | None, batch_id: int | None, write: Callable[[Any], None]) -> None:
    """Run ``write(cursor)`` as one transaction and commit it; with a ``batch_id``, only if ``query_id`` did not
    commit that micro-batch before (a restarted job runs it again), recording it in the same transaction."""
    if batch_id is not None and url not in _BATCHES_READY:
        ensure_batches_table(conn)
        _BATCHES_READY.add(url)
    with conn.cursor() as cur:
        if batch_id is not None and committed_before(cur, query_id, batch_id):
            conn.rollback()  # its writes committed before the restart
            return
        write(cur)
        if batch_id is not None:
            record_batch(cur, query_id, batch_id)
    conn.commit()


def committed_before(cur: Any, query_id: str | None, batch_id: int) -> bool:
    """Whether ``query_id`` committed micro-batch ``batch_id`` (or a later one) before: a restarted job runs
    it again. Locks the query's record until the transaction ends."""
    cur.execute(f"SELECT batch_id FROM {BATCHES_TABLE} WHERE query_id = %s FOR UPDATE", (query_id,))
    row = cur.fetchone()
    return row is not None and row[0] >= batch_id


def record_batch(cur: Any, query_id: str | None, batch_id: int) -> None:
    """Record, in the writing transaction, that ``query_id`` committed micro-batch ``batch_id``."""
    cur.execute(f"INSERT INTO {BATCHES_TABLE} (query_id, batch_id) VALUES (%s, %s) ON CONFLICT "
                f"(query_id) DO UPDATE SET batch_id = EXCLUDED.batch_id, committed_at = now()",
                (query_id, batch_id))


def write_with_retries(connection: Connection, conn: Any, write_once: Callable[[Any], None], max_retries: int,
                       retries_named: str, failing: Callable[[Any], str] = lambda conn: "") -> Any:
    """Run ``write_once(conn)`` (one transaction) on ``conn`` or a new connection when it is None or closed, and
    return the connection kept. A lost connection (the transaction did not commit) is retried ``max_retries``
    times on a new one, 1 s, 2 s, ... apart as Flink's JdbcOutputFormat waits; any other database error rolls
    back and fails naming ``connection`` (and what ``failing(conn)`` says, e.g. the record at fault)."""
    import psycopg

    attempt = 0
    while True:
        try:
            if conn is None or conn.closed:
                conn = connection.connect()
            write_once(conn)
            return conn
        except psycopg.OperationalError as e:
            _close(conn)
            conn = None
            if attempt >= max_retries:
                raise JdbcError(f"{connection.where()}: writing failed after {retries_named}{max_retries} retries: "
                                f"{str(e).strip()}") from None
            attempt += 1
            time.sleep(attempt)
        except psycopg.Error as e:
            assert conn is not None  # connected above: only a statement fails this way
            try:
                conn.rollback()
                note = failing(conn)
            except Exception:  # noqa: BLE001 - the connection may be broken already; the error raised says why
                _close(conn)
                conn, note = None, ""
            raise JdbcError(f"{connection.where()}: writing failed{note}: {str(e).strip()}") from None


def _close(conn: Any) -> None:
    if conn is not None:
        conn.close()


class JdbcSink:
    """Writes a table's committed changes to PostgreSQL (see the module's docstring)."""

    def __init__(self, table: CatalogTable) -> None:
        check_options(table, True)
        self.connection = Connection.of(table, True)
        self.key = tuple(table.schema.primary_key)
        self.accepts_updates = bool(self.key)  # Flink: an updating query needs the sink's primary key
        self.takes_upserts = bool(self.key)  # [I,UA,D] by the key, no -U (plan/rules/normalize_consumers.py)
        self.max_rows = positive(table, True, "sink.buffer-flush.max-rows", 100)
        self.max_retries = positive(table, True, "sink.max-retries", 3)
        duration_ms(table, True, "sink.buffer-flush.interval")  # checked; see the module's docstring
        if "sink.parallelism" in table.options:
            positive(table, True, "sink.parallelism", 1, minimum=1)  # checked; one writer (the module's docstring)
        names = [n for n, _ in self.connection.columns]
        self._key_index = [names.index(k) for k in self.key]
        self._conn: Any = None
        self._query_id: str | None = None
        self._staged_on: Any = None
        self._statements = _statements(self.connection, names, self.key)

    # --- the job's life ---------------------------------------------------------------
    def open(self, job: SinkJob) -> None:
        """Connect and check the table (its columns, types and the key's unique index)."""
        query_id = f"{job.writer}:{self.connection.table_name}"
        if (query_id, self.connection.url) in _OPEN:
            raise JdbcError(f"{self.connection.where()}: two sinks of one job write this database table; its "
                            f"exactly-once record (query id, batch id) would be shared. Write it from one INSERT.")
        self._conn = self.connection.connect()
        try:
            self.connection.check_table(self._conn)
            if self.key:
                self._check_unique_key()
        except BaseException:
            self.close()  # a failed open leaves nothing open (a statement set closes only the sinks it opened)
            raise
        self._query_id = query_id
        _OPEN.add((query_id, self.connection.url))

    def close(self) -> None:
        if self._query_id is not None:
            _OPEN.discard((self._query_id, self.connection.url))
            self._query_id = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # --- writing ----------------------------------------------------------------------
    def write(self, changes: list[Change], batch_id: int | None = None) -> None:
        """Write ``changes`` in one transaction; with a ``batch_id``, once only for this job and table."""
        self._conn = write_with_retries(self.connection, self._conn,
                                        lambda conn: self._write_once(conn, changes, batch_id),
                                        self.max_retries, "'sink.max-retries' = ")

    def _write_once(self, conn: Any, changes: list[Change], batch_id: int | None) -> None:
        self._conn = conn  # the stage (_ensure_stage) is per connection
        commit_batch(conn, self.connection.url, self._query_id, batch_id,
                     lambda cur: self._upsert(cur, changes) if self.key else self._append(cur, changes))

    def _append(self, cur: Any, changes: list[Change]) -> None:
        rows = []
        for change in changes:
            if change.kind != RowKind.INSERT:
                raise JdbcError(f"{self.connection.where()}: the table has no PRIMARY KEY, so it only appends, but "
                                f"received a {change.kind} change")
            rows.append(change.values)
            if self.max_rows and len(rows) >= self.max_rows:
                self._insert(cur, rows)
                rows = []
        if rows:
            self._insert(cur, rows)

    def _insert(self, cur: Any, rows: list) -> None:
        if len(rows) < COPY_ROWS:
            cur.executemany(self._statements["insert"], rows)
            return
        with cur.copy(self._statements["copy"]) as copy:
            for row in rows:
                copy.write_row(row)

    def _upsert(self, cur: Any, changes: list[Change]) -> None:
        # Flink's TableBufferReducedStatementExecutor: the last change of a key in the buffer wins.
        buffer: dict[tuple, tuple[bool, tuple]] = {}
        count = 0
        for change in changes:
            if change.kind == RowKind.UPDATE_BEFORE:
                continue
            values = tuple(change.values)
            buffer[tuple(values[i] for i in self._key_index)] = (change.kind in _UPSERTS, values)
            count += 1
            if self.max_rows and count >= self.max_rows:
                self._flush(cur, buffer)
                buffer, count = {}, 0
        self._flush(cur, buffer)

    def _flush(self, cur: Any, buffer: dict[tuple, tuple[bool, tuple]]) -> None:
        upserts = [values for upsert, values in buffer.values() if upsert]
        deletes = [key for key, (upsert, _) in buffer.items() if not upsert]
        if len(upserts) >= COPY_ROWS:  # the keys are distinct (folded above), as one INSERT ... ON CONFLICT needs
            self._ensure_stage(cur)
            with cur.copy(f"COPY {_STAGE} FROM STDIN") as copy:
                for row in upserts:
                    copy.write_row(row)
            cur.execute(self._statements["upsert_staged"])
            cur.execute(f"TRUNCATE {_STAGE}")
        elif upserts:
            cur.executemany(self._statements["upsert"], upserts)
        if deletes:
            cur.executemany(self._statements["delete"], deletes)

    # --- helpers ----------------------------------------------------------------------
    def _ensure_stage(self, cur: Any) -> None:
        """The connection's temporary staging table: the sink's columns, with the table's types."""
        if self._staged_on is self._conn:
            return
        columns = ", ".join(Connection.column(n) for n, _ in self.connection.columns)
        cur.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {_STAGE} ON COMMIT DELETE ROWS AS "  # noqa: S608
                    f"SELECT {columns} FROM {self.connection.quoted_table()} WITH NO DATA")
        self._staged_on = self._conn  # per connection: a new one (after a lost connection) has none

    def _check_unique_key(self) -> None:
        """ON CONFLICT (key) needs a unique index on exactly the key's columns."""
        wanted = sorted(k.lower() if Connection.column(k) == k else k for k in self.key)
        with self._conn.cursor() as cur:
            cur.execute("SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_index i "
                        "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                        "WHERE i.indrelid = to_regclass(%s) AND i.indisunique GROUP BY i.indexrelid",
                        (self.connection.table_name,))
            indexes = [row[0] for row in cur.fetchall()]
        self._conn.rollback()
        if wanted not in indexes:
            raise JdbcError(f"{self.connection.where()}: the table's PRIMARY KEY ({', '.join(self.key)}) has no "
                            f"unique index or primary key in the database, which an upsert (INSERT ... ON CONFLICT) "
                            f"needs")


def _statements(connection: Connection, names: list[str], key: tuple[str, ...]) -> dict[str, str]:
    """Flink's PostgreSQL dialect's statements, with psycopg's placeholders."""
    table, column = connection.quoted_table(), Connection.column
    columns = ", ".join(column(n) for n in names)
    placeholders = ", ".join(["%s"] * len(names))
    insert = f"INSERT INTO {table} ({columns}) VALUES ({placeholders})"
    statements = {"insert": insert, "copy": f"COPY {table} ({columns}) FROM STDIN"}
    if key:
        rest = [n for n in names if n not in key]
        conflict = ", ".join(column(k) for k in key)
        action = ("DO UPDATE SET " + ", ".join(f"{column(n)} = EXCLUDED.{column(n)}" for n in rest)) if rest \
            else "DO NOTHING"
        statements["upsert"] = f"{insert} ON CONFLICT ({conflict}) {action}"
        statements["upsert_staged"] = (f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {_STAGE} "
                                       f"ON CONFLICT ({conflict}) {action}")
        statements["delete"] = f"DELETE FROM {table} WHERE " + " AND ".join(f"{column(k)} = %s" for k in key)
    return statements
