"""The ``jdbc`` lookup function: a lookup join's per-row query of the dimension table, with Flink's cache.

``probe JOIN dim FOR SYSTEM_TIME AS OF probe.proc_time ON probe.k = dim.k`` looks each
probe row's key up in the database when the row is processed (Flink's lookup join),
``SELECT <columns> FROM <table-name> WHERE k = ?``; a NULL key matches nothing. The
function runs in Spark's Python workers (the planner makes the join a correlate,
:mod:`changeflow.plan.correlate`), a connection and a cache per Spark task.

The cache, as Flink's options configure it (none by default):

- ``lookup.cache.max-rows`` with ``lookup.cache.ttl`` (Flink's legacy options; both, or no
  cache) and ``lookup.cache.caching-missing-key`` (default true);
- ``'lookup.cache' = 'PARTIAL'`` with ``lookup.partial-cache.max-rows``,
  ``.expire-after-write``, ``.expire-after-access`` and ``.cache-missing-key``.

Keys beyond ``max-rows`` evict the least recently used; an entry older than its expiry is
queried again. A failing query is retried ``lookup.max-retries`` times (default 3).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from changeflow.catalog import CatalogTable
from changeflow.connectors.jdbc import Connection, JdbcError
from changeflow.connectors.jdbc_types import read_value
from changeflow.connectors.options import boolean, duration_ms, failure, integer
from changeflow.functions import TableFunction


@dataclass(frozen=True)
class LookupCache:
    """The cache's settings: None ``max_rows`` means no cache."""

    max_rows: int | None = None
    expire_after_write_ms: int | None = None
    expire_after_access_ms: int | None = None
    cache_missing: bool = True

    @staticmethod
    def of(table: CatalogTable) -> "LookupCache":
        mode = table.options.get("lookup.cache", "NONE").upper()
        if mode not in ("NONE", "PARTIAL"):
            raise failure(table, False, f"Option 'lookup.cache' = '{table.options['lookup.cache']}': the jdbc "
                                        f"connector supports NONE and PARTIAL.")
        if mode == "PARTIAL":
            write = duration_ms(table, False, "lookup.partial-cache.expire-after-write")
            access = duration_ms(table, False, "lookup.partial-cache.expire-after-access")
            rows = integer(table, False, "lookup.partial-cache.max-rows")
            if write is None and access is None and rows is None:
                raise failure(table, False, "'lookup.cache' = 'PARTIAL' needs at least one of "
                                            "lookup.partial-cache.max-rows, .expire-after-write, .expire-after-access.")
            return LookupCache(rows if rows is not None else 2**62, write, access,
                               boolean(table, False, "lookup.partial-cache.cache-missing-key", True))
        rows = integer(table, False, "lookup.cache.max-rows")
        ttl = duration_ms(table, False, "lookup.cache.ttl")
        if rows is None or ttl is None or rows <= 0 or ttl <= 0:  # Flink's legacy cache needs both
            return LookupCache()
        return LookupCache(rows, ttl, None, boolean(table, False, "lookup.cache.caching-missing-key", True))


class JdbcLookupFunction(TableFunction):
    """Yields the dimension rows whose ``keys`` columns equal the arguments (see the module's docstring)."""

    def __init__(self, connection: Connection, keys: tuple[str, ...], cache: LookupCache, max_retries: int) -> None:
        self.connection = connection
        self.keys = keys
        self.cache_settings = cache
        self.max_retries = max_retries
        columns = ", ".join(Connection.column(n) for n, _ in connection.columns)
        where = " AND ".join(f"{Connection.column(k)} = %s" for k in keys)
        self.statement = f"SELECT {columns} FROM {connection.quoted_table()} WHERE {where}"  # noqa: S608
        self._conn: Any = None
        self._cache: OrderedDict = OrderedDict()
        self.queries = 0  # database round trips (the tests read it to see the cache work)

    def open(self, function_context) -> None:
        self._conn, self._cache, self.queries = None, OrderedDict(), 0

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def eval(self, *key):
        if any(k is None for k in key):
            return  # SQL equality: a NULL key matches no row
        settings = self.cache_settings
        now = time.monotonic() * 1000
        if settings.max_rows is not None:
            entry = self._cache.get(key)
            if entry is not None:
                written, accessed, rows = entry
                fresh = (settings.expire_after_write_ms is None or now - written < settings.expire_after_write_ms) \
                    and (settings.expire_after_access_ms is None or now - accessed < settings.expire_after_access_ms)
                if fresh:
                    self._cache[key] = (written, now, rows)
                    self._cache.move_to_end(key)
                    yield from rows
                    return
                del self._cache[key]
        rows = self._query(key)
        if settings.max_rows is not None and (rows or settings.cache_missing):
            self._cache[key] = (now, now, rows)
            while len(self._cache) > settings.max_rows:
                self._cache.popitem(last=False)
        yield from rows

    def _query(self, key: tuple) -> list[tuple]:
        import psycopg

        types = [t for _, t in self.connection.columns]
        attempt = 0
        while True:
            try:
                if self._conn is None:
                    self._conn = self.connection.connect()
                    self._conn.autocommit = True  # each lookup sees the table as it is now
                with self._conn.cursor() as cur:
                    cur.execute(self.statement, key)
                    self.queries += 1
                    return [tuple(read_value(v, t) for v, t in zip(raw, types, strict=True)) for raw in cur]
            except psycopg.OperationalError as e:
                self.close()
                if attempt >= self.max_retries:
                    raise JdbcError(f"{self.connection.where()}: a lookup failed after 'lookup.max-retries' = "
                                    f"{self.max_retries} retries: {str(e).strip()}") from None
                attempt += 1
                time.sleep(attempt)
            except psycopg.Error as e:
                raise JdbcError(f"{self.connection.where()}: a lookup failed: {str(e).strip()}") from None
