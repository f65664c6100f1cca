"""A user's DML statement run once per record, exactly once per micro-batch: the DataStream ``JdbcSink``.

Flink's ``JdbcSink.sink(sql, ...)`` runs ``sql`` (any DML: an ``INSERT``, an
``UPDATE``, an ``INSERT ... ON CONFLICT`` upsert) with each record's fields bound
to its ``?`` parameters in order, in batches of ``batch_size``, retrying a failed
batch ``max_retries`` times. changeflow runs each micro-batch's records as ONE
PostgreSQL transaction that also records ``(query id, batch id)`` in
``changeflow_batches`` (as the ``jdbc`` table sink, :mod:`.jdbc_sink`): a
micro-batch run again after a restart writes nothing, so the statements of a
restarted job run once (Flink's ``JdbcSink.sink`` is at least once: it would run
them again). A statement that fails fails the job naming the record; a lost
connection is retried with a new one (1 s, 2 s, ... apart, as Flink's output
format waits), which the transaction makes safe.

>>> to_psycopg("INSERT INTO t (a, b) VALUES (?, ?)")
'INSERT INTO t (a, b) VALUES (%s, %s)'
>>> to_psycopg("UPDATE t SET s = '?%' WHERE k = ? AND \\"a?\\" = 1")
'UPDATE t SET s = \\'?%%\\' WHERE k = %s AND "a?" = 1'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from changeflow.connectors.jdbc import Connection
from changeflow.connectors.jdbc_sink import commit_batch, write_with_retries
from changeflow.connectors.jdbc_url import shown

__all__ = ["StatementSink", "to_psycopg"]


def to_psycopg(sql: str) -> str:
    """JDBC's ``?`` parameters as psycopg's ``%s`` (a ``%`` doubled); inside quotes nothing changes but ``%``."""
    out, quote = [], ""
    for c in sql:
        if c == "%":
            out.append("%%")
        elif quote:
            out.append(c)
            if c == quote:
                quote = ""  # a doubled quote closes and reopens: the same text either way
        elif c in "'\"":
            quote = c
            out.append(c)
        else:
            out.append("%s" if c == "?" else c)
    return "".join(out)


@dataclass(frozen=True)
class _StatementConnection(Connection):
    """A connection named by the sink's statement in messages (it has no table of its own)."""

    sql: str = ""

    def where(self) -> str:
        return f"JdbcSink ('url' = '{shown(self.url)}', sql = {self.sql!r})"


class StatementSink:
    """Runs ``sql`` once per record (see the module docstring). ``open(query_id)`` names the job's record in
    ``changeflow_batches``; ``write(rows, batch_id)`` writes one micro-batch (``batch_id`` None: no record,
    a batch job's one transaction)."""

    def __init__(self, url: str, username: str | None, password: str | None, sql: str,
                 batch_size: int, max_retries: int) -> None:
        self.connection = _StatementConnection("JdbcSink", url, "", (), username, password, 60, sql=sql)
        self.statement = to_psycopg(sql)
        self.batch_size = batch_size
        self.max_retries = max_retries
        self._query_id: str | None = None
        self._conn: Any = None

    def open(self, query_id: str) -> None:
        self._query_id = query_id

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def write(self, rows: list[tuple], batch_id: int | None) -> None:
        self._conn = write_with_retries(self.connection, self._conn,
                                        lambda conn: self._write_once(conn, rows, batch_id),
                                        self.max_retries, "max_retries = ",
                                        lambda conn: self._failing_record(conn, rows))

    def _write_once(self, conn: Any, rows: list[tuple], batch_id: int | None) -> None:
        def run(cur: Any) -> None:
            for start in range(0, len(rows), self.batch_size):  # Flink's batches of batch_size records
                cur.executemany(self.statement, rows[start:start + self.batch_size])
        commit_batch(conn, self.connection.url, self._query_id, batch_id, run)

    def _failing_record(self, conn: Any, rows: list[tuple]) -> str:
        """`` on record <r>``: the first record whose statement fails on its own (each tried and rolled back),
        or nothing when none fails alone (the batch failed as a whole)."""
        import psycopg

        for row in rows:
            try:
                with conn.cursor() as cur:
                    cur.execute(self.statement, row)
            except psycopg.Error:
                conn.rollback()
                return f" on record {row!r}"
            conn.rollback()
        return ""
