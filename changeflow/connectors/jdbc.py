"""The ``jdbc`` connector's options and its connection to PostgreSQL (shared by the source and the sink).

A table declares Flink's JDBC options::

    CREATE TABLE t (...) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://host:5432/db',
                               'table-name' = 'public.t', 'username' = 'u', 'password' = 'p')

changeflow talks to PostgreSQL with psycopg (libpq): the url is parsed into a
libpq connection (:mod:`.jdbc_url`); ``driver`` may only name PostgreSQL's
driver. Options are checked when the table is read or written, as Flink's
factory does; connecting, and checking that the table exists and has the
declared columns with types Flink's mapping accepts (:mod:`.jdbc_types`), happen
when the job opens the table. A failure names the connector, the table and the
option at fault (``url``, ``username``/``password``, ``table-name``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from changeflow.catalog import CatalogTable
from changeflow.common.types import DataType
from changeflow.connectors.jdbc_types import compatible, flink_type_name
from changeflow.connectors.jdbc_url import conninfo, shown
from changeflow.connectors.options import check_keys, duration_ms, failure, integer

CONNECTION_OPTIONS = {"connector", "url", "table-name", "driver", "username", "password",
                      "connection.max-retry-timeout", "property-version"}
# The lookup join's cache and retries (jdbc_lookup.py).
LOOKUP_OPTIONS = {"lookup.cache", "lookup.cache.max-rows", "lookup.cache.ttl", "lookup.cache.caching-missing-key",
                  "lookup.partial-cache.max-rows", "lookup.partial-cache.expire-after-write",
                  "lookup.partial-cache.expire-after-access", "lookup.partial-cache.cache-missing-key",
                  "lookup.max-retries"}
SCAN_OPTIONS = {"scan.partition.column", "scan.partition.num", "scan.partition.lower-bound",
                "scan.partition.upper-bound", "scan.fetch-size", "scan.auto-commit"}
SINK_OPTIONS = {"sink.buffer-flush.max-rows", "sink.buffer-flush.interval", "sink.max-retries", "sink.parallelism"}
OPTIONS = CONNECTION_OPTIONS | LOOKUP_OPTIONS | SCAN_OPTIONS | SINK_OPTIONS
_DRIVERS = ("org.postgresql.Driver",)
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


class JdbcError(RuntimeError):
    """A ``jdbc`` table that cannot be reached, read or written: the message names the option at fault."""


def check_options(table: CatalogTable, as_sink: bool) -> None:
    """Flink's factory checks: known keys, ``url`` and ``table-name`` present, a PostgreSQL url and driver."""
    check_keys(table, as_sink, "jdbc", OPTIONS, required=("url", "table-name"))
    try:
        conninfo(table.options["url"])
    except ValueError as e:
        raise failure(table, as_sink, f"Option 'url' of connector 'jdbc': {e}.") from None
    driver = table.options.get("driver")
    if driver is not None and driver not in _DRIVERS:
        raise failure(table, as_sink, f"Option 'driver' = '{driver}' is not supported: changeflow's 'jdbc' connector "
                                      f"reaches PostgreSQL only ('{_DRIVERS[0]}'), through psycopg.")
    if ("username" in table.options) != ("password" in table.options):
        raise failure(table, as_sink, "Either all or none of the following options should be provided:\nusername\n"
                                      "password")
    for key in ("table-name",):
        if not all(_PLAIN.match(p) or p.startswith('"') for p in table.options[key].split(".")):
            raise failure(table, as_sink, f"Option '{key}' = '{table.options[key]}' is not a (schema-qualified) "
                                          f"table name.")


@dataclass(frozen=True)
class Connection:
    """How to reach a ``jdbc`` table: picklable, so an executor can connect with it too."""

    table: str  # changeflow's table name, for messages
    url: str
    table_name: str
    columns: tuple[tuple[str, DataType], ...]
    username: str | None
    password: str | None
    timeout_s: int

    @staticmethod
    def of(table: CatalogTable, as_sink: bool) -> "Connection":
        timeout = duration_ms(table, as_sink, "connection.max-retry-timeout")
        columns = tuple((c.name, c.data_type) for c in table.schema.physical_columns())
        return Connection(table.identifier, table.options["url"], table.options["table-name"], columns,
                          table.options.get("username"), table.options.get("password"),
                          max(1, (timeout or 60_000) // 1000))

    def where(self) -> str:
        return f"Connector 'jdbc' of table '{self.table}' ('url' = '{shown(self.url)}', 'table-name' = " \
               f"'{self.table_name}')"

    def connect(self) -> Any:
        """A psycopg connection (autocommit off), or a :class:`JdbcError` naming the option at fault."""
        try:
            import psycopg
        except ImportError:
            raise JdbcError(f"{self.where()}: the 'jdbc' connector needs psycopg (pip install 'psycopg[binary]', "
                            f"or changeflow's 'jdbc' extra)") from None
        info: dict[str, Any] = dict(conninfo(self.url))
        if self.username is not None:
            info["user"], info["password"] = self.username, self.password
        info.setdefault("connect_timeout", str(self.timeout_s))
        try:
            return psycopg.connect(**info)
        except psycopg.OperationalError as e:
            text = str(e).strip()
            if "password authentication failed" in text or "no password supplied" in text:
                raise JdbcError(f"{self.where()}: cannot log in as 'username' = '{info.get('user')}': wrong "
                                f"'password' or 'username' ({text})") from None
            if "database" in text and "does not exist" in text:
                raise JdbcError(f"{self.where()}: the database of option 'url' does not exist ({text})") from None
            raise JdbcError(f"{self.where()}: cannot connect to the server of option 'url' ({text})") from None

    def quoted_table(self) -> str:
        """``table-name`` as written (Flink's PostgreSQL dialect does not quote it: PostgreSQL folds its case)."""
        return self.table_name

    @staticmethod
    def column(name: str) -> str:
        """A column name in SQL: unquoted when plain, as Flink's PostgreSQL dialect writes it, else quoted."""
        return name if _PLAIN.match(name) else '"' + name.replace('"', '""') + '"'

    def check_table(self, conn: Any) -> None:
        """Fail, naming the option or column, unless the table exists with the declared columns and types."""
        import psycopg

        try:
            with conn.cursor() as cur:
                cur.execute(f"SELECT {', '.join(self.column(n) for n, _ in self.columns)} "  # noqa: S608
                            f"FROM {self.quoted_table()} WHERE false")
                description = cur.description or []
            conn.rollback()
        except psycopg.errors.UndefinedTable as e:
            conn.rollback()
            raise JdbcError(f"{self.where()}: the table of option 'table-name' does not exist "
                            f"({str(e).strip().splitlines()[0]})") from None
        except psycopg.errors.UndefinedColumn as e:
            conn.rollback()
            raise JdbcError(f"{self.where()}: the table lacks a declared column "
                            f"({str(e).strip().splitlines()[0]})") from None
        for (name, declared), column in zip(self.columns, description, strict=True):
            info = conn.adapters.types.get(column.type_code)
            pg_type = info.name if info is not None else str(column.type_code)
            if not compatible(pg_type, declared):
                mapped = flink_type_name(pg_type)
                raise JdbcError(f"{self.where()}: column '{name}' is declared {declared} but the database's column is "
                                f"{pg_type}, which Flink's JDBC connector reads as "
                                f"{mapped if mapped else 'no Flink type (unsupported)'}")


def positive(table: CatalogTable, as_sink: bool, key: str, default: int, minimum: int = 0) -> int:
    value = integer(table, as_sink, key, default)
    if value < minimum:
        raise failure(table, as_sink, f"The value of '{key}' option should not be less than {minimum}, but is "
                                      f"{value}.")
    return value
