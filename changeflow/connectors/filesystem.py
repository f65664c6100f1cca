"""The ``filesystem`` connector: a directory (or one file) of ``json``, ``csv``, ``parquet`` or ``avro`` files.

As a source it is bounded (the files present when the job starts, read in path
order), or, with ``source.monitor-interval``, an unbounded streaming source that
keeps picking up new files. As a sink it appends: every micro-batch (streaming)
or the final result (batch) becomes one new file, written under a hidden name
and renamed, so a reader never sees half a file. A file is named
``part-<sequence>-<writer>-<batch>``: the sequence (20 digits, so that name order
is write order) is one more than the directory's highest, whichever job wrote
it; the writer is the job's id, kept in its checkpoint, and the batch its
micro-batch id. A micro-batch that a restarted job runs again (it was written
but not committed when the job stopped) replaces its own earlier file, keeping
its sequence: nothing is written twice, nothing reordered. It takes
insert-only input only, as Flink's: an updating query fails at planning,
unless the table declares a ``PRIMARY KEY`` and ``'sink.changelog-mode' =
'upsert'`` (changeflow's own option; Flink's filesystem sink takes no updates):
the sink then writes the upsert changelog by that key. Every record of such a
file starts with an ``op`` column, the change
kind as Flink prints it (``+I``, ``+U``, ``-D``; ``-U`` when the query's changes
reach the sink unmaterialized), followed by the table's columns; replaying the
files in sequence order, upserting ``+I``/``+U`` and deleting ``-U``/``-D`` by primary
key, gives the table. Read them back with a table declaring ``op STRING`` first.
With a changelog format (``debezium-json``, ``canal-json``, ``maxwell-json``) the sink
takes any query, as Flink's: every change is one record of the format
(:mod:`.changelog_encoding`), and reading the files back with the same format gives the
changes again (an update as a delete and an insert).
Hidden files (names starting with ``.`` or ``_``) are not read, as in Flink.
A table declared ``PARTITIONED BY`` keeps its rows in Hive-style partition
directories, with Flink's partition commit (:mod:`.partitions`, :mod:`.partitioned_sink`);
the part files of a directory are :mod:`.part_files`'.
"""

from __future__ import annotations

import re

from changeflow.catalog import CatalogTable
from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataTypes
from changeflow.connectors import filestore
from changeflow.connectors.avro_format import AvroFormat, avro_format
from changeflow.connectors.changelog_encoding import ChangelogEncoder
from changeflow.connectors.changelog_formats import CHANGELOG_FORMATS, ChangelogJsonFormat, changelog_format
from changeflow.connectors.formats import FORMATS, CsvFormat, JsonFormat, ParquetFormat
from changeflow.connectors.options import (ConnectorError, batch_only_inserts, boolean, check_keys, duration_ms,
                                          failure, report_skipped)
from changeflow.connectors.part_files import PART, PartDirectory
from changeflow.connectors.partitioned_sink import PartitionedWriter
from changeflow.connectors.partitions import (DEFAULT_NAME, PARTITION_OPTIONS, check_partition_types,
                                              parse_partition, restore)
from changeflow.connectors.sink_job import SinkJob
from changeflow.common.change import Change

_OPTIONS = {"connector", "path", "format", "source.monitor-interval", "source.path.regex-pattern",
            "sink.changelog-mode", "sink.parallelism", "sink.rolling-policy.file-size",
            "sink.rolling-policy.rollover-interval",
            "sink.rolling-policy.check-interval", "sink.rolling-policy.inactivity-interval", "partition.default-name",
            "auto-compaction", "compaction.file-size", "property-version"} | PARTITION_OPTIONS


OP_COLUMN = "op"  # the change kind column of an upsert changelog file


def name_of(table: CatalogTable) -> str:
    return table.options.get("format", "")


def _format(table: CatalogTable, as_sink: bool):
    name = table.options.get("format")
    fmt = FORMATS.get(name or "") or CHANGELOG_FORMATS.get(name or "") or (AvroFormat if name == "avro" else None)
    check_keys(table, as_sink, "filesystem", _OPTIONS | (fmt.options if fmt is not None else set()),
               required=("path", "format"))
    if fmt is None:
        raise failure(table, as_sink, f"Could not find any format factory for identifier '{name}'. "
                                      f"Available formats: {', '.join(sorted([*FORMATS, *CHANGELOG_FORMATS, 'avro']))}")
    if name in CHANGELOG_FORMATS:
        return changelog_format(table, as_sink, name)
    if fmt is AvroFormat:
        return avro_format(table, as_sink)
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


def _in_files(table: CatalogTable) -> tuple:
    """The columns a data file holds: the physical ones but the partition columns (they are in the path)."""
    return tuple((n, t) for n, t in _physical(table) if n not in table.partition_keys)


_DIGITS = re.compile(r"(\d+)")


def _natural(name: str) -> tuple:
    """``file-2`` before ``file-10``: digit runs compare as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _DIGITS.split(name) if p)


def _file_order(name: str) -> tuple:
    """Sink files by their sequence, after any other file (in natural name order)."""
    part = PART.match(name)
    return (1, int(part.group(1)), ()) if part else (0, 0, _natural(name))


def data_files(path: str) -> list[str]:
    """The files of ``path`` without hidden ones: directory by directory, the sink's files in sequence order.

    A directory a changeflow sink wrote reads back in the order it was written,
    across restarts and jobs; other files come first, in natural order
    (``2.csv`` before ``10.csv``).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> for name in ["part-00000000000000000010-ab12-3", "part-00000000000000000002-cd34-0", "b10.csv", "b9.csv"]:
    ...     open(os.path.join(d, name), "w").close()
    >>> [os.path.basename(f) for f in data_files(d)]
    ['b9.csv', 'b10.csv', 'part-00000000000000000002-cd34-0', 'part-00000000000000000010-ab12-3']
    """
    store = filestore.store_for(path)  # a local path or a Hadoop URI (hdfs://, file://, ...)
    if not store.is_dir(path):
        return [path] if store.exists(path) else []
    return list(filestore.walk_files(path, lambda name: not name.startswith((".", "_")), _file_order, _natural))


class FileSystemSource:
    """Reads a table's files; ``monitor_interval_ms`` is set for an unbounded (monitored) source."""

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        self.format = _format(table, False)
        self.path = table.options["path"]
        self.schema = _physical(table)
        self._partition_types = check_partition_types(table, False) if table.partition_keys else {}
        if table.partition_keys and self.changelog:
            raise failure(table, False, f"A partitioned table cannot use the changelog format '{name_of(table)}'.")
        interval = duration_ms(table, False, "source.monitor-interval")
        # Flink monitors only in streaming mode; a batch job reads what is there.
        self.monitor_interval_ms = interval if streaming and interval else None
        self.table = table
        if self.changelog and not streaming:
            raise ConnectorError(batch_only_inserts(table))

    @property
    def changelog(self) -> bool:
        """Whether the rows are changes (a changelog format): each row is ``(*values, kind)``."""
        return getattr(self.format, "changelog", False)

    @property
    def bounded(self) -> bool:
        return self.monitor_interval_ms is None

    def decode(self, data: bytes, path: str) -> list[tuple]:
        """The rows of one file's content.

        The format reads the bytes itself, so an invalid UTF-8 byte is reported with
        the file, line and byte offset (or skips only its record with ``ignore-parse-errors``).
        """
        fmt = self.format
        assert not isinstance(fmt, ChangelogEncoder)  # a source's changelog format reads (_format as_sink=False)
        keys = self.table.partition_keys
        rows = fmt.decode_bytes(data, path, _in_files(self.table) if keys else self.schema)
        if keys:
            rows = self._with_partition(rows, path)
        if self.monitor_interval_ms is not None:  # in a Spark worker: a warning in the Spark log
            report_skipped(self.format, self.table)
        return rows

    def _with_partition(self, rows: list[tuple], path: str) -> list[tuple]:
        """``rows`` of a partition's file with the partition columns (from the file's directories) in place."""
        default = self.table.options.get("partition.default-name", DEFAULT_NAME)
        texts = parse_partition(self.table.partition_keys, path, default)
        values = {k: restore(v, self._partition_types[k]) for k, v in zip(self.table.partition_keys, texts,
                                                                          strict=True)}
        names = [n for n, _ in self.schema]
        data_positions = {n: i for i, n in enumerate(n for n in names if n not in values)}
        return [tuple(values[n] if n in values else row[data_positions[n]] for n in names) for row in rows]

    def rows(self) -> list[tuple]:
        """Every row of the files present now (the bounded read)."""
        store = filestore.store_for(self.path)
        if not store.exists(self.path):
            raise FileNotFoundError(f"File {self.path} of table '{self.table.name}' does not exist")
        rows: list[tuple] = []
        for file in data_files(self.path):
            rows.extend(self.decode(store.read_bytes(file), file))
        report_skipped(self.format, self.table)
        return rows


    def arrow_rows(self):
        """Every row of the files present now as one Arrow table, or None where :meth:`rows` must read them.

        A Parquet table whose columns need no conversion (``ParquetFormat.decode_arrow``)
        and JSON lines Arrow's reader reads as the record reader does (``JsonFormat.decode_arrow``)
        are read column by column, without a Python object per value. A partitioned table's
        rows take their partition columns from the files' directories: :meth:`rows` reads them.
        """
        if not isinstance(self.format, (ParquetFormat, JsonFormat)) or self.table.partition_keys:
            return None
        import pyarrow as pa

        store = filestore.store_for(self.path)
        if not store.exists(self.path):
            raise FileNotFoundError(f"File {self.path} of table '{self.table.name}' does not exist")
        tables = []
        for file in data_files(self.path):
            table = self.format.decode_arrow(store.read_bytes(file), file, self.schema)
            if table is None:
                return None
            tables.append(table)
        return pa.concat_tables(tables) if tables else None


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
        if mode == "upsert" and self.changelog:
            raise failure(table, True, f"Option 'sink.changelog-mode' = 'upsert' cannot be combined with the "
                                       f"changelog format '{self.format.name}', whose records carry the change "
                                       f"kinds themselves.")
        if mode == "upsert" and not table.schema.primary_key:
            raise failure(table, True, "Option 'sink.changelog-mode' = 'upsert' needs a PRIMARY KEY on the table: "
                                       "an upsert changelog is keyed by it.")
        self.primary_key = tuple(table.schema.primary_key) if mode == "upsert" else ()
        if table.partition_keys and (self.primary_key or self.changelog):
            raise failure(table, True, "A partitioned filesystem table takes insert-only rows: 'sink.changelog-mode' "
                                       "= 'upsert' and changelog formats are not supported with PARTITIONED BY.")
        # PARTITIONED BY: rows go to Hive-style directories, with partition commit (partitioned_sink.py).
        self.partitions = PartitionedWriter(table, self) if table.partition_keys else None
        self._job: SinkJob | None = None
        self._directory = PartDirectory(self.path)

    @property
    def changelog(self) -> bool:
        """Whether the format writes changes (a changelog format: ``debezium-json``, ...)."""
        return getattr(self.format, "changelog", False)

    @property
    def accepts_updates(self) -> bool:
        """An upsert-changelog table (``sink.changelog-mode`` = ``upsert``) or a changelog format takes updates."""
        return bool(self.primary_key) or self.changelog

    def open(self, job: SinkJob) -> None:
        """Start writing for ``job``: its earlier files (a resumed job's) are found by its writer id."""
        self._job = job
        self._directory.forget()
        if self.partitions is not None:
            self.partitions.open(job)

    def write(self, changes: list[Change], batch_id: int | None = None) -> None:
        """Write one batch's changes as one file; a batch id this writer wrote before replaces that file.

        Without a batch id (a batch job's single write, a direct call) the write is always a new file.
        A partitioned table writes one file per partition the batch has rows for.
        """
        if self.partitions is not None:
            self.partitions.write(changes, batch_id)
            return
        data = self._encode(changes)
        job = self._job or SinkJob.fresh()
        self._job = job
        self._directory.write(data, job.writer, batch_id)

    def _encode(self, changes: list[Change]) -> bytes | None:
        if not changes:
            return None
        fmt = self.format
        if isinstance(fmt, ChangelogEncoder):
            return fmt.encode_changes([(c.kind, c.values) for c in changes], self.schema)
        assert not isinstance(fmt, ChangelogJsonFormat)  # a sink's changelog format is its encoder
        if self.primary_key:
            return fmt.encode([(str(c.kind),) + tuple(c.values) for c in changes],
                                      ((OP_COLUMN, DataTypes.STRING()),) + self.schema)
        for c in changes:
            if c.kind is not RowKind.INSERT:
                raise ValueError(f"filesystem sink {self.path} received a {c.kind} change {c.values}; "
                                 "it appends insert-only input")
        return fmt.encode([c.values for c in changes], self.schema)

    def advance_watermark(self, watermark: int) -> None:
        """The query's watermark after a micro-batch (ms): the partition-time commit trigger reads it."""
        if self.partitions is not None:
            self.partitions.watermark = max(self.partitions.watermark or watermark, watermark)

    @property
    def wants_watermark(self) -> bool:
        """Whether the runtime should pass the query's watermark (a partition-time commit trigger)."""
        return self.partitions is not None and self.partitions.options.trigger == "partition-time"

    def finish(self) -> None:
        """The input ended (bounded input, a batch job's result written): every pending partition commits."""
        if self.partitions is not None:
            self.partitions.commit_all()

    def close(self) -> None:
        pass
