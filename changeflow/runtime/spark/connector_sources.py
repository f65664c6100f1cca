"""DDL tables' sources on Spark: connector rows as batch frames and streams.

A bounded connector (datagen with a row count, the files of a filesystem
table) gives its rows once; they take the path of any bounded source
(:mod:`.sources`): a batch frame, or in streaming mode Parquet files of
``rows_per_batch`` rows, one per micro-batch. Processing-time columns
(``pt AS PROCTIME()``) are stamped by Spark when each micro-batch runs.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.nodes import Source
from changeflow.runtime.spark.spark_types import to_spark


def _physical(node: Source) -> tuple[Source, list[str]]:
    """The source of the connector's own columns, and the names of the processing-time columns."""
    connector = node.payload
    proctime = [c.name for c in connector.table.schema.columns if c.proctime]
    physical = tuple((n, t) for n, t in node.schema if n not in proctime)
    if not connector.bounded:
        raise NotImplementedError(f"table {connector.table.name}: unbounded connector sources are not supported "
                                  "yet; bound it ('number-of-rows' for datagen, no 'source.monitor-interval' "
                                  "for filesystem)")
    return Source(node.name, physical, "elements", connector.rows()), proctime


def _with_proctime(frame: DataFrame, node: Source, proctime: list[str], bookkeeping: list[str]) -> DataFrame:
    types = dict(node.schema)
    columns = [F.localtimestamp().cast(to_spark(types[n])).alias(n) if n in proctime else F.col(f"`{n}`")
               for n in node.field_names]
    return frame.select(*columns, *bookkeeping)


def connector_batch_frame(spark: SparkSession, node: Source) -> DataFrame:
    from changeflow.runtime.spark.sources import batch_frame

    physical, proctime = _physical(node)
    return _with_proctime(batch_frame(spark, physical), node, proctime, [SEQ])


def connector_stream_frame(spark: SparkSession, node: Source, directory: str, rows_per_batch: int) -> DataFrame:
    from changeflow.runtime.spark.sources import stream_frame

    physical, proctime = _physical(node)
    return _with_proctime(stream_frame(spark, physical, directory, rows_per_batch), node, proctime,
                          [KIND, SEQ, SUB])
