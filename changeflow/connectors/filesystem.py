"""The ``filesystem`` connector: a directory (or one file) of ``json``, ``csv`` or ``parquet`` files.

As a source it is bounded (the files present when the job starts, read in path
order), or, with ``source.monitor-interval``, an unbounded streaming source that
keeps picking up new files. As a sink it appends: every micro-batch (streaming)
or the final result (batch) becomes one new file ``part-<uuid>-0-<n>``, written
under a hidden name and renamed, so a reader never sees half a file. It takes
insert-only input only, as Flink's: an updating query fails at planning,
unless the table declares a ``PRIMARY KEY`` and ``'sink.changelog-mode' =
'upsert'`` (changeflow's own option; Flink's filesystem sink takes no updates):
the sink then writes the upsert changelog by that key. Every record of such a
file starts with an ``op`` column, the change
kind as Flink prints it (``+I``, ``+U``, ``-D``; ``-U`` when the query's changes
reach the sink unmaterialized), followed by the table's columns; replaying the
files in name order, upserting ``+I``/``+U`` and deleting ``-U``/``-D`` by primary
key, gives the table. Read them back with a table declaring ``op STRING`` first.
Hidden files (names starting with ``.`` or ``_``) are not read, as in Flink.
"""

from __future__ import annotations

import os
import uuid

from changeflow.catalog import CatalogTable
from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataTypes
from changeflow.connectors.formats import FORMATS, CsvFormat, JsonFormat, ParquetFormat
from changeflow.connectors.options import boolean, check_keys, duration_ms, failure
from changeflow.runtime.changes import Change

_OPTIONS = {"connector", "path", "format", "source.monitor-interval", "source.path.regex-pattern",
            "sink.changelog-mode", "sink.parallelism", "sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval",
            "sink.rolling-policy.check-interval", "sink.rolling-policy.inactivity-interval", "partition.default-name",
            "auto-compaction", "compaction.file-size", "property-version"}


OP_COLUMN = "op"  # the change kind column of an upsert changelog file


def _format(table: CatalogTable, as_sink: bool):
    name = table.options.get("format")
    fmt = FORMATS.get(name or "")
    check_keys(table, as_sink, "filesystem", _OPTIONS | (fmt.options if fmt is not None else set()),
               required=("path", "format"))
    if fmt is None:
        raise failure(table, as_sink, f"Could not find any format factory for identifier '{name}'. "
                                      f"Available formats: {', '.join(sorted(FORMATS))}")
    if fmt is JsonFormat:
        return JsonFormat(boolean(table, as_sink, "json.ignore-parse-errors"),
                          boolean(table, as_sink, "json.fail-on-missing-field"))
    if fmt is CsvFormat:
        delimiter = table.options.get("csv.field-delimiter", ",")
        if len(delimiter) != 1 and delimiter != "\\t":
            raise failure(table, as_sink, f"Option 'csv.field-delimiter' must be a single character, got "
                                          f"'{delimiter}'.")
        return CsvFormat(boolean(table, as_sink, "csv.ignore-parse-errors"), "\t" if delimiter == "\\t" else delimiter,
                         table.options.get("csv.quote-character", '"'), table.options.get("csv.null-literal"),
                         boolean(table, as_sink, "csv.allow-comments"))
    return ParquetFormat()


def _physical(table: CatalogTable) -> tuple:
    return tuple((c.name, c.data_type) for c in table.schema.physical_columns())


def data_files(path: str) -> list[str]:
    """The files of ``path`` in path order, without hidden ones."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        return []
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        found.extend(os.path.join(root, f) for f in files if not f.startswith((".", "_")))
    return sorted(found)


class FileSystemSource:
    """Reads a table's files; ``monitor_interval_ms`` is set for an unbounded (monitored) source."""

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        self.format = _format(table, False)
        self.path = table.options["path"]
        self.schema = _physical(table)
        interval = duration_ms(table, False, "source.monitor-interval")
        # Flink monitors only in streaming mode; a batch job reads what is there.
        self.monitor_interval_ms = interval if streaming and interval else None
        self.table = table

    @property
    def bounded(self) -> bool:
        return self.monitor_interval_ms is None

    def decode(self, data: bytes, path: str) -> list[tuple]:
        """The rows of one file's content."""
        if isinstance(self.format, ParquetFormat):
            return self.format.decode_bytes(data, path, self.schema)
        return self.format.decode(data.decode("utf-8"), path, self.schema)

    def rows(self) -> list[tuple]:
        """Every row of the files present now (the bounded read)."""
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"File {self.path} of table '{self.table.name}' does not exist")
        rows: list[tuple] = []
        for file in data_files(self.path):
            with open(file, "rb") as f:
                rows.extend(self.decode(f.read(), file))
        return rows


class FileSystemSink:
    """Appends rows to a table's directory, one file per write; with a primary key, the upsert changelog."""

    def __init__(self, table: CatalogTable) -> None:
        self.format = _format(table, True)
        self.path = table.options["path"]
        self.schema = _physical(table)
        mode = table.options.get("sink.changelog-mode", "insert-only")
        if mode not in ("insert-only", "upsert"):
            raise failure(table, True, f"Could not parse value '{mode}' for key 'sink.changelog-mode': expected "
                                       f"insert-only or upsert.")
        if mode == "upsert" and not table.schema.primary_key:
            raise failure(table, True, "Option 'sink.changelog-mode' = 'upsert' needs a PRIMARY KEY on the table: "
                                       "an upsert changelog is keyed by it.")
        self.primary_key = tuple(table.schema.primary_key) if mode == "upsert" else ()
        self._prefix = f"part-{uuid.uuid4()}-0"
        self._count = 0

    @property
    def accepts_updates(self) -> bool:
        """Only an upsert-changelog table (``sink.changelog-mode`` = ``upsert``) takes updates."""
        return bool(self.primary_key)

    def write(self, changes: list[Change]) -> None:
        if not changes:
            return
        if self.primary_key:
            data = self.format.encode([(str(c.kind),) + tuple(c.values) for c in changes],
                                      ((OP_COLUMN, DataTypes.STRING()),) + self.schema)
        else:
            for c in changes:
                if c.kind is not RowKind.INSERT:
                    raise ValueError(f"filesystem sink {self.path} received a {c.kind} change {c.values}; "
                                     "it appends insert-only input")
            data = self.format.encode([c.values for c in changes], self.schema)
        os.makedirs(self.path, exist_ok=True)
        name = f"{self._prefix}-{self._count}"
        self._count += 1
        hidden = os.path.join(self.path, f".{name}.inprogress")
        with open(hidden, "wb") as f:
            f.write(data)
        os.replace(hidden, os.path.join(self.path, name))

    def close(self) -> None:
        pass
