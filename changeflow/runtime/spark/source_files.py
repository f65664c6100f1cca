"""Bounded input read as a stream: Parquet files read one per micro-batch, the end of input after the last rows.

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
  be prefixes of the input) and reads them one per micro-batch.

:func:`staged_stream` does all three for a source, of a Table query (:mod:`.sources`)
or of a DataStream job (:mod:`.record_sources`).

``directory`` is a local path or a Hadoop URI (:mod:`changeflow.connectors.filestore`).
"""

from __future__ import annotations

from typing import Callable

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from changeflow.connectors import filestore
from changeflow.runtime.spark.job_directory import already_written, require_shared
from changeflow.runtime.spark.shipping import master_url

END_MARKER = "part-zzzzzzzz-end-of-input.parquet"


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
            write_table_files(directory, data, rows_per_batch, end_rows() if end_rows is not None else None)
        else:
            write_frame_files(data, directory, rows_per_batch)
            if end_rows is not None:
                write_end_marker(directory, end_rows())
    return file_stream(spark, directory, schema)


def write_table_files(directory: str, table: pa.Table, rows_per_batch: int, end_rows: pa.Table | None = None) -> None:
    """``table``'s rows as files of ``rows_per_batch`` rows (at least one file, maybe empty), named in order.

    ``end_rows`` (end-of-input control rows, null in every column they lack) go
    at the end of the last file, beyond its ``rows_per_batch`` rows: they are no
    input rows, and a file of their own would cost a micro-batch.
    """
    filestore.store_for(directory).makedirs(directory)
    starts = range(0, max(table.num_rows, 1), rows_per_batch)
    for i, start in enumerate(starts):
        rows = table.slice(start, rows_per_batch)
        if end_rows is not None and i == len(starts) - 1:
            rows = with_end_rows(rows, end_rows)
        # Zero-padded names: the file source orders files of one listing by name.
        filestore.write_parquet(filestore.join(directory, f"part-{i:08d}.parquet"), rows)


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
    """The files under ``directory`` as a stream, one file per micro-batch, in name order."""
    order_by_name(directory)
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(directory)


def order_by_name(directory: str) -> None:
    """Give the files increasing modification times in name order (see the module docstring)."""
    store = filestore.store_for(directory)
    names = sorted(n for n, _ in store.entries(directory) if n.endswith(".parquet"))
    for i, name in enumerate(names):
        store.set_modified_ms(filestore.join(directory, name), (1_000_000_000 + i) * 1000)
