"""DDL tables' sources on Spark: connector rows as batch frames and streams.

The files of a bounded filesystem table are read once; their rows take the
path of any bounded source (:mod:`..sources`): a batch frame, or in streaming
mode Parquet files of ``rows_per_batch`` rows, one per micro-batch. A bounded
datagen table is generated on the executors instead, by row ranges
(:mod:`.datagen_source`), with the same ``_seq`` and micro-batches (a nexmark
table too, bounded or not); a ``jdbc``
table is read on the executors, a partition per query (:mod:`.jdbc_source`), a bounded ``delta`` table's
snapshot on an executor (:mod:`.delta_source`), a bounded ``kafka`` table by Spark's Kafka source
(:mod:`.kafka_bounded`). Processing-time columns
(``pt AS PROCTIME()``) are stamped by Spark when each micro-batch runs.

Unbounded connectors are Spark streams decoded in the Python workers with the
connector's own code, so rows and errors are the same as in the bounded read:

- a monitored filesystem table is Spark's ``binaryFile`` stream of the
  directory, one new file per micro-batch (oldest first); each file's content
  is decoded by the table's format, ``_seq`` being the row's position in its file;
- a ``kafka`` table is Spark's Kafka source (:mod:`.kafka_source`);
- a ``postgres-cdc`` table is its staged snapshot, then its changes (:mod:`.postgres_cdc_source`);
- a ``delta`` table with ``'mode' = 'streaming'`` is its change data feed, a Python data
  source whose offsets are table versions (:mod:`.delta_source`);
- an unbounded datagen table is Spark's ``rate`` stream (``rows-per-second``),
  each index turned into a generated row, ``_seq`` being the index.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.types import DataTypes
from changeflow.connectors.formats import arrow_type
from changeflow.connectors.kafka import KafkaSource
from changeflow.connectors.postgres_cdc import PostgresCdcSource

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.nodes import Source, side_inputs
from changeflow.runtime.spark.connectors.delta_source import delta_changes_stream, delta_snapshot_frame, is_delta
from changeflow.runtime.spark.connectors.datagen_source import (datagen_batch_frame, datagen_stream, is_bounded_datagen,
                                                                is_nexmark)
from changeflow.runtime.spark.connectors.jdbc_source import is_jdbc, jdbc_frame
from changeflow.runtime.spark.connectors.kafka_bounded import is_bounded_kafka, kafka_batch_frame
from changeflow.runtime.spark.job_directory import already_written
from changeflow.runtime.spark.spark_types import struct


def is_postgres_cdc(connector) -> bool:
    return isinstance(connector, PostgresCdcSource)


def _proctime(node: Source) -> list[str]:
    return [c.name for c in node.payload.table.schema.columns if c.proctime]


def _physical_schema(node: Source) -> tuple:
    """The connector's own columns (the schema without processing-time columns)."""
    proctime = _proctime(node)
    return tuple((n, t) for n, t in node.schema if n not in proctime)


def _physical(node: Source, columnar: bool = False, staged: bool = False) -> tuple[Source, list[str]]:
    """The source of the connector's own columns, and the names of the processing-time columns.

    A changelog connector's rows end with their change kind: a last column, :data:`CDC_KIND`.
    With ``columnar`` a connector that can read its rows as one Arrow table (``arrow_rows``:
    Parquet files needing no conversion) gives them so (kind ``"arrow"``), not as Python tuples.
    With ``staged`` (the rows' staged files exist) the rows are not read: the source has none.
    """
    schema = _physical_schema(node) + _kind_column(node)
    if staged:
        return Source(node.name, schema, "elements", []), _proctime(node)
    read = getattr(node.payload, "arrow_rows", None) if columnar and not _kind_column(node) else None
    table = read() if read is not None else None
    if table is not None:
        return Source(node.name, schema, "arrow", table), _proctime(node)
    return Source(node.name, schema, "elements", node.payload.rows()), _proctime(node)


CDC_KIND = "_cdc_kind"  # a changelog connector's change kind, until it becomes the frame's _kind


def is_changelog_source(node: Source) -> bool:
    """Whether the connector source ``node`` reads a changelog (a CDC format: its rows carry their change kind)."""
    return bool(getattr(node.payload, "changelog", False))


def _kind_column(node: Source) -> tuple:
    return ((CDC_KIND, DataTypes.TINYINT()),) if is_changelog_source(node) else ()


def _with_kinds(frame: DataFrame, node: Source) -> DataFrame:
    """A changelog connector's change kinds as ``_kind`` (control rows, whose ``_kind`` is set, stay)."""
    if not is_changelog_source(node):
        return frame
    return frame.withColumn(KIND, F.when(F.col(KIND) == 0, F.col(CDC_KIND)).otherwise(F.col(KIND)).cast("byte"))


def trigger_interval_ms(plan) -> int | None:
    """How often an unbounded plan's query runs (a monitored source's interval); None for a bounded plan."""
    intervals = []

    def visit(node) -> None:
        if isinstance(node, Source) and node.kind == "connector" and not node.payload.bounded:
            intervals.append(getattr(node.payload, "monitor_interval_ms", None) or 1000)
        for child in side_inputs(node):
            visit(child)

    visit(plan)
    return min(intervals) if intervals else None


def _with_proctime(frame: DataFrame, node: Source, proctime: list[str], bookkeeping: list[str]) -> DataFrame:
    # Processing time: the instant the micro-batch runs (TIMESTAMP_LTZ, Spark's TIMESTAMP).
    columns = [F.current_timestamp().alias(n) if n in proctime else F.col(f"`{n}`") for n in node.field_names]
    return frame.select(*columns, *bookkeeping)


def connector_batch_frame(spark: SparkSession, node: Source) -> DataFrame:
    from changeflow.runtime.spark.sources import batch_frame

    if is_bounded_datagen(node.payload):  # generated on the executors, never whole on the driver
        physical = _physical_schema(node)
        frame = datagen_batch_frame(spark, node.payload, physical)
        return _with_proctime(frame, node, _proctime(node), [SEQ])
    if is_jdbc(node.payload) or is_delta(node.payload) or is_bounded_kafka(node.payload):  # read on the executors
        physical = Source(node.name, _physical_schema(node), "spark", _executor_frame(spark, node))
        return _with_proctime(batch_frame(spark, physical), node, _proctime(node), [SEQ])
    physical, proctime = _physical(node)
    return _with_proctime(batch_frame(spark, physical), node, proctime, [SEQ])


def connector_stream_frame(spark: SparkSession, node: Source, directory: str, rows_per_batch: int,
                           end_of_input: bool = False) -> DataFrame:
    from changeflow.runtime.spark.sources import bounded_changes, stream_frame

    if is_nexmark(node.payload) and not node.payload.bounded:  # generated on the executors, without an end
        physical = Source(node.name, _physical_schema(node), "connector", node.payload)
        rows = datagen_stream(spark, node.payload, physical.schema, rows_per_batch, False)
        return _with_proctime(bounded_changes(rows, physical, False), node, _proctime(node), [KIND, SEQ, SUB])
    if not node.payload.bounded:
        if is_postgres_cdc(node.payload):  # a snapshot, then the changes (+I/-U/+U/-D) of a replication slot
            from changeflow.runtime.spark.connectors.postgres_cdc_source import postgres_cdc_stream

            frame = postgres_cdc_stream(spark, node.payload, _physical_schema(node), directory, rows_per_batch)
            return _with_proctime(frame, node, _proctime(node), [KIND, SEQ, SUB])
        if is_delta(node.payload):  # the change data feed, offsets = table versions
            frame = delta_changes_stream(spark, node.payload, _physical_schema(node))
            return _with_proctime(frame, node, _proctime(node), [KIND, SEQ, SUB])
        if isinstance(node.payload, KafkaSource):
            from changeflow.runtime.spark.connectors.kafka_source import kafka_stream

            frame = kafka_stream(spark, node.payload, rows_per_batch)
            return _with_proctime(frame, node, _proctime(node), [KIND, SEQ, SUB])
        return _with_proctime(_with_kinds(_unbounded_stream(spark, node), node), node, _proctime(node),
                              [KIND, SEQ, SUB])
    if is_bounded_datagen(node.payload):  # generated on the executors, a micro-batch at a time
        physical = Source(node.name, _physical_schema(node), "connector", node.payload)
        rows = datagen_stream(spark, node.payload, physical.schema, rows_per_batch, end_of_input)
        return _with_proctime(bounded_changes(rows, physical, end_of_input), node, _proctime(node), [KIND, SEQ, SUB])
    if is_jdbc(node.payload) or is_delta(node.payload) or is_bounded_kafka(node.payload):  # staged by the job
        physical = Source(node.name, _physical_schema(node), "spark", _executor_frame(spark, node))
        return _with_proctime(stream_frame(spark, physical, directory, rows_per_batch, end_of_input), node,
                              _proctime(node), [KIND, SEQ, SUB])
    # Staged already (a second scan of the table in this query, which shares the first one's files, or a
    # resumed job): the connector's rows are not read again. Nexmark's joins scan its event file twice.
    physical, proctime = _physical(node, columnar=True, staged=already_written(directory))
    frame = _with_kinds(stream_frame(spark, physical, directory, rows_per_batch, end_of_input), node)
    return _with_proctime(frame, node, proctime, [KIND, SEQ, SUB])


def _executor_frame(spark: SparkSession, node: Source) -> DataFrame:
    """A ``jdbc`` or bounded ``delta`` table as a batch frame read on the executors (lazy: a resumed job has
    the rows it staged)."""
    if is_jdbc(node.payload):
        return jdbc_frame(spark, node.payload, _physical_schema(node))
    if is_bounded_kafka(node.payload):
        return kafka_batch_frame(spark, node.payload)
    return delta_snapshot_frame(spark, node.payload, _physical_schema(node))


_FILE = T.StructType([T.StructField("path", T.StringType()), T.StructField("modificationTime", T.TimestampType()),
                      T.StructField("length", T.LongType()), T.StructField("content", T.BinaryType())])


def _unbounded_stream(spark: SparkSession, node: Source) -> DataFrame:
    connector = node.payload
    proctime = _proctime(node)
    physical = tuple((n, t) for n, t in node.schema if n not in proctime) + _kind_column(node)
    out = struct(physical).add(SEQ, T.LongType(), False)
    arrow_schema = pa.schema([(n, arrow_type(t)) for n, t in physical] + [(SEQ, pa.int64())])

    def batch(rows: list[tuple], seqs: list[int]) -> pa.RecordBatch:
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(physical)
        arrays = [pa.array(list(c), type=arrow_type(t)) for c, (_, t) in zip(columns, physical, strict=True)]
        return pa.RecordBatch.from_arrays(arrays + [pa.array(seqs, type=pa.int64())], schema=arrow_schema)

    if hasattr(connector, "monitor_interval_ms"):
        def decode(batches):
            for files in batches:
                paths, contents = files.column("path").to_pylist(), files.column("content").to_pylist()
                for path, content in zip(paths, contents, strict=True):
                    local = path[len("file:"):] if path.startswith("file:") else path
                    rows = connector.decode(content, local)
                    yield batch(rows, list(range(len(rows))))

        files = (spark.readStream.schema(_FILE).format("binaryFile").option("maxFilesPerTrigger", 1)
                 .option("recursiveFileLookup", "true").load(connector.path))
        frame = files.select("path", "content").mapInArrow(decode, out)
    else:
        def generate(batches):
            for indexes in batches:
                values = indexes.column("value").to_pylist()
                if values:
                    rows = connector.generate(min(values), len(values))
                    yield batch(rows, values)

        rate = spark.readStream.format("rate").option("rowsPerSecond", connector.rows_per_second).load()
        frame = rate.select("value").mapInArrow(generate, out)
    return frame.select(*[F.col(f"`{n}`") for n, _ in physical], F.lit(0).cast("byte").alias(KIND), F.col(SEQ),
                        F.lit(0).cast("long").alias(SUB))
