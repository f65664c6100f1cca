"""Bounded input read as a stream: Parquet files, a micro-batch's at a time, the end of input after the last rows.

One mechanism for every bounded input of a streaming query (a Table source,
a DataStream source, the output of a DataStream end-of-input operator):

- the rows are written once, in input order, as Parquet files of at most
  ``rows_per_batch`` rows (:func:`write_table_files` for local rows,
  :func:`write_frame_files` for a Spark DataFrame), so micro-batch boundaries
  (the mini-batch bundles) are fixed and a resumed job reads the same files;
- with control rows flowing (:mod:`.control_rows`), the input's end-of-input
  rows follow its last rows: in its last file when changeflow writes the files
  itself (:func:`write_table_files` with ``end_rows``), so the last micro-batch
  carries its rows and the end of input together (each processor runs its kernel
  on the rows, then ``end_of_input``: the same results as a micro-batch later, one
  micro-batch fewer); else in one more file (:func:`write_end_marker`), whose
  name sorts after every data file's (``part-0…`` and Spark's ``part-00000-…``);
- :func:`file_stream` gives the files increasing modification times in name
  order (the file source takes files oldest first; files written within one
  second would otherwise come in any order, and micro-batches would no longer
  be prefixes of the input) and reads them one micro-batch's files at a time;
- a large micro-batch of local rows is written as several files of consecutive
  rows (:func:`split_count`), which Spark reads in a task each: the stages before
  the first shuffle (the packing stage, a window aggregation's local phase, its
  watermarks) then use every core instead of one. Each file is a partition with
  its own range of positions, as the event-time operators require of a source
  read in several partitions (``event_time.partition_local_positions``); a
  watermark assigner emits its latest watermark at the end of each file, as at
  the end of a micro-batch (where Flink's periodic timer may emit it).

:func:`staged_stream` does all this for a source, of a Table query (:mod:`.sources`)
or of a DataStream job (:mod:`.record_sources`).

``directory`` is a local path or a Hadoop URI (:mod:`changeflow.connectors.filestore`).
"""

from __future__ import annotations

import re
from typing import Callable, cast

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from changeflow.connectors import filestore
from changeflow.runtime.spark.job_directory import already_written, require_shared
from changeflow.runtime.spark.shipping import master_url

END_MARKER = "part-zzzzzzzz-end-of-input.parquet"
# The fewest rows a micro-batch's file gets when a micro-batch is split (:func:`split_count`): a task
# and its Python worker cost a few tens of ms, a 250k-row micro-batch's packing stage about a second.
MIN_ROWS_PER_SPLIT = 65_536
_SPLIT_NAME = re.compile(r"part-\d{8}-(\d{3})\.parquet")


def staged_stream(spark: SparkSession, directory: str, schema: T.StructType, rows: Callable[[], DataFrame | pa.Table],
                  rows_per_batch: int, what: str, end_rows: Callable[[], pa.Table] | None = None) -> DataFrame:
    """A bounded source's ``rows()`` as a stream of ``schema``, read from files under ``directory``.

    Written once: a resumed job reads the files its first run wrote (:func:`~.job_directory.already_written`).
    ``end_rows()`` (when given) are its end-of-input control rows, read last: in the
    last data file for local rows, in a marker file of their own after Spark's files; ``what`` names the
    source in the error about a directory the executors cannot read.
    """
    require_shared(master_url(spark.sparkContext), directory, what)
    if not already_written(directory):
        data = rows()
        if isinstance(data, pa.Table):
            # The end-of-input rows ride in the last file: no micro-batch of their own.
            total = cast(pa.Table, data).num_rows   # pyarrow is untyped: isinstance leaves the DataFrame in
            splits = split_count(min(total, rows_per_batch), spark.sparkContext.defaultParallelism)
            write_table_files(directory, data, rows_per_batch, end_rows() if end_rows is not None else None, splits)
        else:
            write_frame_files(data, directory, rows_per_batch)
            if end_rows is not None:
                write_end_marker(directory, end_rows())
    return file_stream(spark, directory, schema)


def split_count(rows: int, cores: int) -> int:
    """How many files a micro-batch of ``rows`` rows is written as: one per core, each of
    at least :data:`MIN_ROWS_PER_SPLIT` rows (one file for a smaller micro-batch).

    >>> split_count(250_000, 2), split_count(100_000, 2), split_count(1_000_000, 8)
    (2, 1, 8)
    """
    return max(1, min(cores, rows // MIN_ROWS_PER_SPLIT))


def write_table_files(directory: str, table: pa.Table, rows_per_batch: int, end_rows: pa.Table | None = None,
                      splits: int = 1) -> None:
    """``table``'s rows as micro-batches of ``rows_per_batch`` rows (at least one, maybe empty), named in order.

    A micro-batch is one file, or with ``splits`` above 1 that many files of
    consecutive rows (the last maybe empty), read together (:func:`file_stream`).
    ``end_rows`` (end-of-input control rows, null in every column they lack) go
    at the end of the last file, beyond its ``rows_per_batch`` rows: they are no
    input rows, and a file of their own would cost a micro-batch.
    """
    filestore.store_for(directory).makedirs(directory)
    starts = range(0, max(table.num_rows, 1), rows_per_batch)
    for i, start in enumerate(starts):
        batch = table.slice(start, rows_per_batch)
        size = -(-batch.num_rows // splits)   # rows per file, rounded up
        for j in range(splits):
            rows = batch.slice(j * size, size)
            if end_rows is not None and i == len(starts) - 1 and j == splits - 1:
                rows = with_end_rows(rows, end_rows)
            # Zero-padded names: the file source orders files of one listing by name.
            name = f"part-{i:08d}.parquet" if splits == 1 else f"part-{i:08d}-{j:03d}.parquet"
            filestore.write_parquet(filestore.join(directory, name), rows)


def with_end_rows(rows: pa.Table, end_rows: pa.Table) -> pa.Table:
    """``rows`` then ``end_rows`` in ``rows``' column types, every column nullable (control rows hold nulls)."""
    schema = pa.schema([f.with_nullable(True) for f in rows.schema], metadata=rows.schema.metadata)
    n = end_rows.num_rows

    def column(f: pa.Field) -> pa.Array | pa.ChunkedArray:
        if f.name not in end_rows.column_names or end_rows.column(f.name).null_count == n:
            return pa.nulls(n, f.type)
        return end_rows.column(f.name).cast(f.type)

    return pa.concat_tables([rows.cast(schema), pa.table([column(f) for f in schema], schema=schema)])


def write_frame_files(frame: DataFrame, directory: str, rows_per_batch: int) -> None:
    """A Spark DataFrame's rows as files of at most ``rows_per_batch`` rows, in its partitions' order."""
    frame.write.mode("overwrite").option("maxRecordsPerFile", rows_per_batch).parquet(directory)


def write_end_marker(directory: str, rows: pa.Table) -> None:
    """The file read after the input's last: its end-of-input control rows (:mod:`.control_rows`).

    For files Spark wrote (:func:`write_frame_files`): rewriting Spark's last file
    with the rows appended would go through Arrow's types, not Spark's (INT96 and
    nanosecond timestamps).
    """
    filestore.write_parquet(filestore.join(directory, END_MARKER), rows)


def file_stream(spark: SparkSession, directory: str, schema: T.StructType | str) -> DataFrame:
    """The files under ``directory`` as a stream, one micro-batch's files at a time, in name order."""
    names = order_by_name(directory)
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", files_per_batch(names)).parquet(directory)


def files_per_batch(names: list[str]) -> int:
    """How many of the files ``names`` make one micro-batch: the split files of the first, else one.

    Read from the names, so a resumed job reads the files its first run wrote as they were split.

    >>> files_per_batch(["part-00000000-000.parquet", "part-00000000-001.parquet", "part-00000001-000.parquet"])
    2
    >>> files_per_batch(["part-00000000.parquet", "part-00000-0a1b-c000.snappy.parquet"])
    1
    """
    return max(1, sum(1 for n in names if n.startswith("part-00000000-") and _SPLIT_NAME.fullmatch(n)))


def order_by_name(directory: str) -> list[str]:
    """Give the files increasing modification times in name order (see the module docstring); their names."""
    store = filestore.store_for(directory)
    names = sorted(n for n, _ in store.entries(directory) if n.endswith(".parquet"))
    for i, name in enumerate(names):
        store.set_modified_ms(filestore.join(directory, name), (1_000_000_000 + i) * 1000)
    return names
