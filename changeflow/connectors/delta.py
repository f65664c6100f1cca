"""The ``delta`` connector: Delta Lake tables through delta-rs (the ``deltalake`` package, the ``delta`` extra).

A table declares the option names of Delta's Flink connector::

    CREATE TABLE t (...) WITH ('connector' = 'delta', 'table-path' = 's3://bucket/t')

As a source (:class:`DeltaSource`) it is, with Flink's ``mode``:

- ``'mode' = 'batch'`` (the default, as in Flink): a bounded snapshot, of the latest
  version or of ``versionAsOf`` / ``timestampAsOf``; in a streaming job the query ends
  when the snapshot has been read.
- ``'mode' = 'streaming'``: an unbounded changelog read from the table's change data
  feed (the table property ``delta.enableChangeDataFeed``): ``insert`` is ``+I``,
  ``update_preimage`` ``-U``, ``update_postimage`` ``+U``, ``delete`` ``-D``. Without
  ``startingVersion`` the first micro-batch is the snapshot of the latest version, as
  ``+I`` rows, then each later version's changes (as Delta's Spark stream reads a change
  feed); with ``startingVersion`` the changes of that version and every later one. Table
  versions are the stream's offsets, kept in the job's checkpoint, so a resumed job goes
  on from the last version it committed. A streaming read in a batch job is refused, as
  Flink refuses a changelog source in batch mode.

As a sink (:mod:`.delta_sink`) it appends, or with a ``PRIMARY KEY`` merges each
micro-batch by the key. A sink creates a missing table with the declared columns and the
``delta.*`` options as table properties (Flink's Delta catalog does the same).

``storage-options.<key>`` passes ``<key>`` to delta-rs's object store (for instance
``storage-options.AWS_ENDPOINT_URL``): a changeflow option, since Flink's connector takes
Hadoop's configuration instead. Flink's options that changeflow does not implement
(``startingTimestamp``, ``ignoreChanges``, ``ignoreDeletes``, ``updateCheckDelayMillis``,
``parquetBatchSize``) are refused naming the option, as is any unknown option.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from changeflow.catalog import CatalogTable
from changeflow.common.types import DataType
from changeflow.connectors.options import ConnectorError, check_keys, failure, integer

SOURCE_OPTIONS = {"mode", "versionAsOf", "timestampAsOf", "startingVersion", "updateCheckIntervalMillis"}
_NOT_SUPPORTED = {"startingTimestamp": "a change feed read from a timestamp (use 'startingVersion')",
                  "ignoreChanges": "Flink's continuous append read (changeflow reads the change data feed)",
                  "ignoreDeletes": "Flink's continuous append read (changeflow reads the change data feed)",
                  "updateCheckDelayMillis": "a delayed first check for new versions",
                  "parquetBatchSize": "Flink's Parquet reader's batch size"}
STORAGE_PREFIX = "storage-options."
TABLE_PROPERTY_PREFIX = "delta."
# The kinds of the change data feed's _change_type, in the order changes of one key apply within a version.
CHANGE_KINDS = {"delete": 3, "update_preimage": 1, "update_postimage": 2, "insert": 0}


class DeltaError(RuntimeError):
    """A ``delta`` table that cannot be read or written: the message names the table and the option at fault."""


def check_options(table: CatalogTable, as_sink: bool) -> None:
    """Known keys (Flink's Delta options, ``delta.*`` table properties, ``storage-options.*``), ``table-path`` set."""
    refused = sorted(k for k in table.options if k in _NOT_SUPPORTED)
    if refused:
        raise failure(table, as_sink, "Unsupported options found for 'delta' (changeflow does not implement them):"
                                      "\n\n" + "\n".join(f"{k}: {_NOT_SUPPORTED[k]}" for k in refused))
    known = {"connector", "table-path"} | (set() if as_sink else SOURCE_OPTIONS)
    extra = {k for k in table.options if k.startswith((STORAGE_PREFIX, TABLE_PROPERTY_PREFIX))}
    check_keys(table, as_sink, "delta", known | extra, required=("table-path",))


@dataclass(frozen=True)
class Location:
    """Where a ``delta`` table lives: picklable, so an executor can open the table with it too."""

    table: str  # changeflow's table name, for messages
    path: str
    storage: tuple[tuple[str, str], ...]
    columns: tuple[tuple[str, DataType], ...]

    @staticmethod
    def of(table: CatalogTable) -> "Location":
        storage = tuple(sorted((k[len(STORAGE_PREFIX):], v) for k, v in table.options.items()
                               if k.startswith(STORAGE_PREFIX)))
        columns = tuple((c.name, c.data_type) for c in table.schema.physical_columns())
        return Location(table.identifier, table.options["table-path"], storage, columns)

    def where(self) -> str:
        return f"Connector 'delta' of table '{self.table}' ('table-path' = '{self.path}')"

    def storage_options(self) -> dict[str, str] | None:
        return dict(self.storage) or None

    def exists(self) -> bool:
        from deltalake import DeltaTable

        return DeltaTable.is_deltatable(self.path, storage_options=self.storage_options())

    def open(self, version: int | str | None = None) -> Any:
        """The table (at ``version``, a number or a timestamp), or a :class:`DeltaError` naming ``table-path``."""
        try:
            from deltalake import DeltaTable
        except ImportError:
            raise DeltaError(f"{self.where()}: the 'delta' connector needs the deltalake package (pip install "
                             f"deltalake, or changeflow's 'delta' extra)") from None
        if not self.exists():
            raise DeltaError(f"{self.where()}: no Delta table at option 'table-path' (no _delta_log there)")
        try:
            table = DeltaTable(self.path, storage_options=self.storage_options())
            if version is not None:
                table.load_as_version(version)
            return table
        except Exception as e:  # noqa: BLE001 - delta-rs raises several types; the message says which
            what = f"version {version!r} of " if version is not None else ""
            raise DeltaError(f"{self.where()}: cannot open {what}the table: {e}") from None

    def check_schema(self, delta_table: Any) -> None:
        """Fail naming the column unless the Delta table has exactly the declared columns, with matching types."""
        import pyarrow as pa

        from changeflow.common.type_values import arrow_type

        actual = pa.schema(delta_table.schema().to_arrow())
        names = [n for n, _ in self.columns]
        if actual.names != names:
            raise DeltaError(f"{self.where()}: the declared columns ({', '.join(names)}) are not the Delta table's "
                             f"columns ({', '.join(actual.names)})")
        for name, declared in self.columns:
            have, want = actual.field(name).type, arrow_type(declared)
            if not _same_type(have, want):
                raise DeltaError(f"{self.where()}: column '{name}' is declared {declared} but the Delta table's "
                                 f"column is {have}")


def _same_type(have: Any, want: Any) -> bool:
    """Delta's type and the declared one's Arrow type: equal up to string/binary views and timestamp units."""
    import pyarrow as pa

    def plain(t: Any) -> Any:
        if pa.types.is_large_string(t) or pa.types.is_string_view(t):
            return pa.string()
        if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
            return pa.binary()
        if pa.types.is_timestamp(t):
            return pa.timestamp("us", tz="UTC" if t.tz else None)
        return t

    return plain(have) == plain(want)


class DeltaSource:
    """Reads a ``delta`` table: a bounded snapshot, or the change data feed (see the module's docstring)."""

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        check_options(table, False)
        self.table = table
        self.location = Location.of(table)
        mode = table.options.get("mode", "batch").lower()
        if mode not in ("batch", "streaming"):
            raise failure(table, False, f"Could not parse value '{table.options['mode']}' for key 'mode': expected "
                                        f"batch or streaming.")
        self.bounded = mode == "batch"
        self.changelog = not self.bounded
        self.version_as_of = integer(table, False, "versionAsOf")
        self.timestamp_as_of = table.options.get("timestampAsOf")
        self.starting_version = integer(table, False, "startingVersion")
        interval = integer(table, False, "updateCheckIntervalMillis", 5000)
        if self.version_as_of is not None and self.timestamp_as_of is not None:
            raise failure(table, False, "Options 'versionAsOf' and 'timestampAsOf' shouldn't be set together.")
        if self.bounded and self.starting_version is not None:
            raise failure(table, False, "Option 'startingVersion' is for 'mode' = 'streaming' (a read of the change "
                                        "data feed); a bounded read takes 'versionAsOf' or 'timestampAsOf'.")
        if not self.bounded and (self.version_as_of is not None or self.timestamp_as_of is not None):
            raise failure(table, False, "Options 'versionAsOf' and 'timestampAsOf' are for 'mode' = 'batch' (a "
                                        "snapshot); a streaming read takes 'startingVersion'.")
        for key, value in (("versionAsOf", self.version_as_of), ("startingVersion", self.starting_version),
                           ("updateCheckIntervalMillis", interval)):
            if value is not None and value < 0:
                raise failure(table, False, f"The value of '{key}' option should not be less than 0, but is {value}.")
        self.monitor_interval_ms = max(1, interval)
        if self.changelog and not streaming:
            raise ConnectorError(f"Querying a table in batch mode is currently only possible for INSERT-only table "
                                 f"sources. But the source for table '{table.name}' produces other changelog messages "
                                 f"than just INSERT ('mode' = 'streaming' reads the change data feed).")

    def snapshot(self) -> Any:
        """The bounded read's rows as an Arrow table of the declared columns (read in this process)."""
        version: int | str | None = self.version_as_of if self.version_as_of is not None else self.timestamp_as_of
        delta_table = self.location.open(version)
        self.location.check_schema(delta_table)
        return cast_to_declared(_arrow(delta_table.to_pyarrow_table()), self.location)

    def rows(self) -> list[tuple]:
        """The snapshot's rows as tuples."""
        table = self.snapshot()
        return list(zip(*[c.to_pylist() for c in table.columns], strict=True)) if table.num_rows else []


def _arrow(table: Any) -> Any:
    import pyarrow as pa

    return table if isinstance(table, pa.Table) else pa.table(table)


def cast_to_declared(table: Any, location: Location) -> Any:
    """``table``'s declared columns cast to their declared Arrow types (strings and timestamps normalised)."""
    import pyarrow as pa

    from changeflow.common.type_values import arrow_type

    arrays = [table.column(n).cast(arrow_type(t)) for n, t in location.columns]
    return pa.Table.from_arrays(arrays, names=[n for n, _ in location.columns])
