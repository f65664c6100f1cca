"""DataStream sources on Spark: each source's values as records (``_value``, ``_ord``).

A record is a pickled value and its order stamp
(:mod:`changeflow.kernels.keyed.records`): the stamp holds the record's
position in its source and the source's number in the job, so Spark's
shuffles never lose Flink's order. Sources:

- ``collection``: the values, pickled on the driver;
- ``text``: a text file's lines, in file order (Spark's ``read.text``);
- ``dataframe``: a Spark DataFrame's rows as named :class:`~changeflow.common.row.Row`
  values; a streaming DataFrame is unbounded (its rows of one micro-batch
  have no order: position 0, ties keep arrival order).

In streaming mode a bounded source is written once as Parquet files read one
per micro-batch, ending with an end-of-input marker file when control records
flow (:mod:`.source_files`, the same files as a Table source's). An unbounded
stream read up to what is available gets a flush-signal stream beside it when
operators buffer (:mod:`.flush_signals`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.kernels.keyed.records import KEY, ORD, VALUE, dumps, source_stamp
from changeflow.kernels.source_records import LineEncoder, RowEncoder
from changeflow.plan.streams.nodes import SourceNode
from changeflow.runtime.spark.control_rows import end_of_input_records
from changeflow.plan.flush_policy import flushes_from_timers
from changeflow.runtime.spark.flush_signals import signal_rows
from changeflow.runtime.spark.job_directory import already_written, require_shared
from changeflow.runtime.spark.shipping import master_url
from changeflow.runtime.spark.source_files import file_stream, write_end_marker, write_frame_files, write_table_files

if TYPE_CHECKING:
    from changeflow.runtime.spark.datastream import DataStreamJob

RECORDS = T.StructType([T.StructField(VALUE, T.BinaryType(), False), T.StructField(ORD, T.BinaryType(), False)])
KEYED = T.StructType([T.StructField(KEY, T.BinaryType(), False)] + RECORDS.fields)


def source_records(job: "DataStreamJob", node: SourceNode) -> DataFrame:
    """The records of ``node`` in ``job``: a batch DataFrame, or in streaming mode a stream."""
    number = job._source_numbers[node.id]
    if node.kind == "collection":
        table = pa.table({VALUE: pa.array([dumps(v) for v in node.payload], pa.binary()),
                          ORD: pa.array([source_stamp(i, number) for i in range(len(node.payload))], pa.binary())})
        return _bounded(job, table, node)
    if node.kind == "text":
        df = job.spark.read.text(node.payload)
        return _bounded_spark(job, df.select(F.col("value").alias("line")), node, LineEncoder(number))
    if node.kind == "dataframe":
        df = node.payload
        if df.isStreaming:
            return _unbounded(job, df, node, number)
        return _bounded_spark(job, df, node, RowEncoder(df.columns, number, ordered=True))
    if node.kind == "table":  # a Table converted to a DataStream: its plan runs inside this query
        from changeflow.runtime.spark.bridge import table_records
        return table_records(job, node)  # type: ignore[arg-type]
    raise TypeError(f"unknown source kind {node.kind}")


def _unbounded(job: "DataStreamJob", df: DataFrame, node: SourceNode, number: int) -> DataFrame:
    if not job.settings.streaming:
        raise ValueError(f"source {node.name} is an unbounded (streaming) DataFrame: it needs "
                         "RuntimeExecutionMode.STREAMING")
    records = df.mapInPandas(RowEncoder(df.columns, number, ordered=False), RECORDS)
    if job.control and flushes_from_timers(job.settings.flush):
        # Read up to what is available, it would end with the last records buffered.
        signals = os.path.join(job.workdir, f"flush-signals-{number}")
        records = records.unionByName(signal_rows(job.spark, signals, None))
        job.flush_signal_dirs.append(signals)
    return records


def _bounded_spark(job: "DataStreamJob", df: DataFrame, node: SourceNode, encoder: Any) -> DataFrame:
    """A bounded Spark DataFrame as records, positioned in the DataFrame's order."""
    # monotonically_increasing_id grows with the partition index and within a partition:
    # the DataFrame's (and a text file's line) order.
    records = df.withColumn("__position", F.monotonically_increasing_id()).mapInPandas(encoder, RECORDS)
    if not job.settings.streaming:
        return records
    directory = _directory(job, node)
    if not already_written(directory):  # a resumed job reads the files its first run wrote
        write_frame_files(records.orderBy(ORD), directory, job.settings.rows_per_batch)
        _end_of_input(job, directory, node)
    return file_stream(job.spark, directory, RECORDS)


def _bounded(job: "DataStreamJob", table: pa.Table, node: SourceNode) -> DataFrame:
    if not job.settings.streaming:
        if table.num_rows == 0:
            return job.spark.createDataFrame([], RECORDS)
        return job.spark.createDataFrame(table.to_pandas(), schema=RECORDS)
    directory = _directory(job, node)
    if not already_written(directory):
        write_table_files(directory, table, job.settings.rows_per_batch)
        _end_of_input(job, directory, node)
    return file_stream(job.spark, directory, RECORDS)


def _directory(job: "DataStreamJob", node: SourceNode) -> str:
    # Named by the source's position in the job, not its node id: a resumed job is the same
    # program built again, whose nodes may have other ids.
    directory = os.path.join(job.workdir, f"source-{job._source_numbers[node.id]}")
    require_shared(master_url(job.spark.sparkContext), directory, f"source {node.name}")
    return directory


def _end_of_input(job: "DataStreamJob", directory: str, node: SourceNode) -> None:
    """With control records, a bounded source ends with a file (a micro-batch) holding its end-of-input record."""
    if job.control:
        write_end_marker(directory, end_of_input_records([job._source_numbers[node.id]]))
