"""A ``jdbc`` table read on Spark's executors: one Spark partition per query of the connector.

The driver checks the table first (connection, columns, types: the errors name the
option), then a frame of the query numbers (one partition each) is mapped to the rows
each query reads, in the executors' Python workers, through psycopg. With
``scan.partition.*`` the ranges are read in parallel; without, one partition reads the
table. The result is a batch DataFrame of the connector's columns; the caller treats it
as any bounded Spark frame (:mod:`..sources`: a ``_seq`` in partition order, and in
streaming mode Parquet files of ``rows_per_batch`` rows staged once in the job's
directory, so a resumed job reads the rows of its first run).
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from changeflow.common.type_values import arrow_type, to_engine
from changeflow.connectors.jdbc_source import JdbcSource, read_rows
from changeflow.runtime.spark.spark_types import struct


def is_jdbc(connector) -> bool:
    return isinstance(connector, JdbcSource)


def jdbc_frame(spark: SparkSession, source: JdbcSource, schema: tuple) -> DataFrame:
    """The table's rows as a batch DataFrame of ``schema`` (the connector's columns), read on the executors."""
    source.check()
    queries = source.queries()
    connection, fetch_size = source.connection, source.fetch_size
    names = [n for n, _ in schema]
    types = [t for _, t in schema]
    arrow_schema = pa.schema([(n, arrow_type(t)) for n, t in schema])

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for number in batch.column(0).to_pylist():
                rows = read_rows(connection, queries[number], fetch_size, number)
                columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
                arrays = [pa.array([to_engine(v, t) for v in column], type=arrow_schema.field(i).type)
                          for i, (column, t) in enumerate(zip(columns, types, strict=True))]
                yield pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)

    numbers = spark.range(0, len(queries), numPartitions=len(queries))
    return numbers.mapInArrow(read, struct(schema))
