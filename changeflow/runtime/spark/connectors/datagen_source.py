"""A bounded ``datagen`` or a ``nexmark`` table on Spark, generated on the executors a range of rows at a time.

Row ``i`` of a datagen table is a function of ``i`` (:mod:`changeflow.connectors.datagen`),
as event ``i`` of a nexmark table (:mod:`changeflow.connectors.nexmark`), so the
source never exists whole anywhere: memory is that of one Arrow batch per task,
whatever ``number-of-rows`` or ``events.num`` says.

- Batch: ``spark.range(n)`` cut into partitions; each partition's indexes become
  rows in the Python workers (``mapInArrow``). ``_seq`` is the row index.
- Streaming: a Python data source whose offset is the next row index. Each
  micro-batch takes at most ``rows_per_batch`` rows (the admission limit), as the
  file-backed bounded sources of :mod:`..sources` take one file of that many rows,
  so micro-batch boundaries (mini-batch bundles) and ``_seq`` (the index) are the
  same as there. With ``end_of_input`` the last micro-batch also holds the
  source's end-of-input control row (:mod:`..control_rows`), after its rows. A resumed query regenerates
  its rows from the checkpointed offset. An unbounded nexmark table
  (``events.num`` = 0) is the same stream without an end: every micro-batch takes
  ``rows_per_batch`` more events.
"""

from __future__ import annotations

import math

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadMaxRows, SupportsTriggerAvailableNow

from changeflow.connectors.datagen import DataGenSource
from changeflow.connectors.formats import arrow_type
from changeflow.connectors.nexmark import NexmarkSource
from changeflow.kernels.changelog import SEQ
from changeflow.runtime.spark.connectors.python_streams import Span, table_stream
from changeflow.runtime.spark.spark_types import struct

ROWS_PER_ARROW_BATCH = 10_000  # rows a Python worker generates and hands to Spark at once
_ROWS_PER_PARTITION = 1_000_000  # batch read: a partition is at most this many rows...
_MAX_PARTITIONS = 100_000        # ...unless that needs more partitions than this


def is_bounded_datagen(connector) -> bool:
    return isinstance(connector, (DataGenSource, NexmarkSource)) and connector.bounded


def is_nexmark(connector) -> bool:
    return isinstance(connector, NexmarkSource)


def _spark_schema(physical, all_nullable: bool) -> T.StructType:
    schema = struct(physical).add(SEQ, T.LongType(), False)
    if all_nullable:  # the end-of-input marker row holds nulls in every column
        schema = T.StructType([T.StructField(f.name, f.dataType, True) for f in schema.fields])
    return schema


def _arrow_schema(physical, all_nullable: bool) -> pa.Schema:
    # Nullability as in the Spark schema: a Python data source's batches must match it exactly.
    spark = _spark_schema(physical, all_nullable)
    types = [arrow_type(t) for _, t in physical] + [pa.int64()]
    return pa.schema([pa.field(f.name, a, f.nullable) for f, a in zip(spark.fields, types, strict=True)])


def _batches(connector: DataGenSource | NexmarkSource, physical, start: int, end: int, all_nullable: bool = False):
    """Rows ``start .. end - 1`` as Arrow record batches of at most ROWS_PER_ARROW_BATCH rows."""
    schema = _arrow_schema(physical, all_nullable)
    for first in range(start, end, ROWS_PER_ARROW_BATCH):
        count = min(ROWS_PER_ARROW_BATCH, end - first)
        if isinstance(connector, NexmarkSource):  # built as Arrow arrays (ROWs) by the generator
            arrays = connector.arrow_columns(first, count)
        else:
            arrays = [pa.array(c, type=arrow_type(t))
                      for c, (_, t) in zip(connector.columns(first, count), physical, strict=True)]
        arrays.append(pa.array(range(first, first + count), type=pa.int64()))
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def datagen_batch_frame(spark: SparkSession, connector: DataGenSource | NexmarkSource, physical) -> DataFrame:
    """The bounded datagen or nexmark table as a batch DataFrame of its connector's columns and ``_seq``."""
    n = connector.total_rows
    parallelism = spark.sparkContext.defaultParallelism
    partitions = max(1, min(max(math.ceil(n / _ROWS_PER_PARTITION), min(parallelism, math.ceil(n / 10_000))),
                            _MAX_PARTITIONS))

    def generate(batches):
        for indexes in batches:
            ids = indexes.column(0)
            if len(ids) == 0:
                continue
            first, last = ids[0].as_py(), ids[len(ids) - 1].as_py()
            if last - first + 1 == len(ids):  # a partition of spark.range is one run of indexes
                yield from _batches(connector, physical, first, last + 1)
            else:  # never seen; correct anyway
                for i in ids.to_pylist():
                    yield from _batches(connector, physical, i, i + 1)

    out = _spark_schema(physical, False)
    return spark.range(0, n, 1, partitions).mapInArrow(generate, out)


class _Reader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets ``{"row": i}``: the next row index; row ``row_count`` is the end-of-input marker."""

    def __init__(self, connector: DataGenSource | NexmarkSource, physical, rows_per_batch: int, end_of_input: bool,
                 partitions_per_batch: int) -> None:
        self.connector, self.physical = connector, physical
        self.rows_per_batch, self.end_of_input = rows_per_batch, end_of_input
        self.partitions_per_batch = partitions_per_batch

    def initialOffset(self) -> dict:
        return {"row": 0}

    def getDefaultReadLimit(self):
        return ReadMaxRows(self.rows_per_batch)

    def latestOffset(self, start: dict, limit) -> dict:
        row = start["row"]
        # At most rows_per_batch rows whatever the limit: a micro-batch is a bundle.
        step = min(self.rows_per_batch, limit.max_rows) if isinstance(limit, ReadMaxRows) else self.rows_per_batch
        if self.connector.row_count is None:  # an unbounded nexmark stream: always more events
            return {"row": row + step}
        n = self.connector.total_rows
        if row < n:
            end = min(n, row + step)
            # The end-of-input row (index n) rides in the last data micro-batch: none of its own.
            return {"row": n + 1 if end == n and self.end_of_input else end}
        if row == n and self.end_of_input:
            return {"row": n + 1}  # no rows at all, or a checkpoint whose last micro-batch ended at n
        return start

    def prepareForTriggerAvailableNow(self) -> None:
        pass  # the rows are fixed: everything up to row_count (and the marker) is available now

    def partitions(self, start: dict, end: dict):
        first, last = start["row"], end["row"]
        if last <= first:
            return []
        size = max(math.ceil((last - first) / self.partitions_per_batch), ROWS_PER_ARROW_BATCH)
        return [Span(a, min(a + size, last)) for a in range(first, last, size)]

    def read(self, partition: Span):
        from changeflow.runtime.spark.control_rows import END_OF_INPUT

        n = self.connector.row_count
        if n is None:  # unbounded
            yield from _batches(self.connector, self.physical, partition.start, partition.end)
            return
        yield from _batches(self.connector, self.physical, partition.start, min(partition.end, n), self.end_of_input)
        if partition.end > n:  # the end-of-input marker: every column null
            schema = _arrow_schema(self.physical, True)
            arrays = [pa.nulls(1, type=f.type) for f in schema][:-1] + [pa.array([END_OF_INPUT], type=pa.int64())]
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    def commit(self, end: dict) -> None:
        pass


def datagen_stream(spark: SparkSession, connector: DataGenSource | NexmarkSource, physical, rows_per_batch: int,
                   end_of_input: bool) -> DataFrame:
    """The datagen (bounded) or nexmark table as a stream of its connector's columns and ``_seq``."""
    partitions = max(1, spark.sparkContext.defaultParallelism)
    stream = table_stream(spark, "changeflow_datagen", _spark_schema(physical, end_of_input), _Reader, connector,
                          tuple(physical), rows_per_batch, end_of_input, partitions)
    return stream.select(*[F.col(f"`{n}`") for n, _ in physical], F.col(SEQ))
