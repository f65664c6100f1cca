"""The ``jdbc`` scan source: a bounded read of a PostgreSQL table, in batch and streaming mode.

The table is read once, when the job starts (a bounded source: in streaming mode
the query ends when it has been read, as Flink's JDBC scan source does). Each
column is read as the declared type, which must be the one Flink's JDBC
connector maps the database's column type to (:mod:`.jdbc_types`).

``scan.partition.column``/``num``/``lower-bound``/``upper-bound`` split the read
into ``num`` queries ``WHERE column BETWEEN lo AND hi`` over ranges computed as
Flink's ``JdbcNumericBetweenParametersProvider`` computes them (so, as in Flink,
rows outside the bounds are not read); the four go together. ``scan.fetch-size``
reads through a server-side cursor, that many rows a round trip. The read runs
on the executors on Spark, one Spark partition per query (``runtime/spark/connectors/jdbc_source.py``),
after the driver has checked the table.

>>> partitions(1, 10, 3)
[(1, 4), (5, 7), (8, 10)]
>>> partitions(0, 1, 5)
[(0, 0), (1, 1)]
"""

from __future__ import annotations

from changeflow.catalog import CatalogTable
from changeflow.connectors.jdbc import Connection, JdbcError, check_options, positive
from changeflow.connectors.jdbc_lookup import JdbcLookupFunction, LookupCache
from changeflow.connectors.jdbc_types import read_value
from changeflow.connectors.options import boolean, failure, integer

_PARTITION = ("scan.partition.column", "scan.partition.num", "scan.partition.lower-bound",
              "scan.partition.upper-bound")


def partitions(lower: int, upper: int, num: int) -> list[tuple[int, int]]:
    """Flink's ``JdbcNumericBetweenParametersProvider``: ``num`` ranges covering ``[lower, upper]``."""
    count = upper - lower + 1
    batches = min(num, count)
    size = -(-count // batches)  # ceil
    big = count - (size - 1) * batches  # the first `big` ranges hold `size` values, the rest one less
    ranges, start = [], lower
    for i in range(batches):
        end = start + size - 1 - (1 if i >= big else 0)
        ranges.append((start, end))
        start = end + 1
    return ranges


class JdbcSource:
    """Reads a PostgreSQL table (bounded)."""

    bounded = True

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        check_options(table, False)
        self.table = table
        self.connection = Connection.of(table, False)
        self.fetch_size = positive(table, False, "scan.fetch-size", 0)
        self.lookup_cache = LookupCache.of(table)
        self.lookup_retries = positive(table, False, "lookup.max-retries", 3)
        boolean(table, False, "scan.auto-commit", True)
        given = [k for k in _PARTITION if k in table.options]
        if given and len(given) != len(_PARTITION):
            raise failure(table, False, "Either all or none of the following options should be provided:\n"
                                        + "\n".join(_PARTITION))
        self.ranges: list[tuple[int, int]] | None = None
        self.partition_column: str | None = None
        if given:
            column = table.options["scan.partition.column"]
            names = [n for n, _ in self.connection.columns]
            if column not in names:
                raise failure(table, False, f"Option 'scan.partition.column' = '{column}' is not a column of the "
                                            f"table (columns: {', '.join(names)}).")
            lower = integer(table, False, "scan.partition.lower-bound")
            upper = integer(table, False, "scan.partition.upper-bound")
            num = positive(table, False, "scan.partition.num", 1, minimum=1)
            assert lower is not None and upper is not None
            if lower > upper:
                raise failure(table, False, f"'scan.partition.lower-bound'='{lower}' must not be larger than "
                                            f"'scan.partition.upper-bound'='{upper}'.")
            self.partition_column, self.ranges = column, partitions(lower, upper, num)

    def queries(self) -> list[tuple[str, tuple]]:
        """The statements reading the table: one, or one per partition."""
        columns = ", ".join(Connection.column(n) for n, _ in self.connection.columns)
        select = f"SELECT {columns} FROM {self.connection.quoted_table()}"  # noqa: S608
        if self.ranges is None or self.partition_column is None:
            return [(select, ())]
        where = f" WHERE {Connection.column(self.partition_column)} BETWEEN %s AND %s"
        return [(select + where, r) for r in self.ranges]

    def lookup_function(self, keys: tuple[str, ...]) -> JdbcLookupFunction:
        """The function a lookup join calls per probe row with the values of ``keys`` (columns of this table)."""
        return JdbcLookupFunction(self.connection, keys, self.lookup_cache, self.lookup_retries)

    def check(self) -> None:
        """Connect and check the table now (the driver does, before executors read it): errors name the option."""
        conn = self.connection.connect()
        try:
            self.connection.check_table(conn)
        finally:
            conn.close()

    def read_query(self, number: int) -> list[tuple]:
        """The rows of query ``number`` of :meth:`queries` (an executor reads one partition with it)."""
        return read_rows(self.connection, self.queries()[number], self.fetch_size, number)

    def rows(self) -> list[tuple]:
        """Every row of the table now, read in this process."""
        self.check()
        return [row for i in range(len(self.queries())) for row in self.read_query(i)]


def read_rows(connection: Connection, query: tuple[str, tuple], fetch_size: int, number: int = 0) -> list[tuple]:
    """The rows of one query, each value as its declared type; a :class:`JdbcError` naming the table if it fails."""
    import psycopg

    statement, params = query
    types = [t for _, t in connection.columns]
    conn = connection.connect()
    try:
        if fetch_size:  # a server-side cursor: fetch-size rows a round trip
            cursor = conn.cursor(name=f"changeflow_scan_{number}")
            cursor.itersize = fetch_size
        else:
            cursor = conn.cursor()
        with cursor as cur:
            cur.execute(statement, params)
            rows = [tuple(read_value(v, t) for v, t in zip(raw, types, strict=True)) for raw in cur]
        conn.rollback()  # the read changes nothing
        return rows
    except psycopg.Error as e:
        raise JdbcError(f"{connection.where()}: reading failed: {str(e).strip()}") from None
    finally:
        conn.close()
