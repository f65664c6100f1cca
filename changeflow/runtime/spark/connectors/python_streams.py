"""A connector's stream as a Python data source (``pyspark.sql.datasource``) of its own, one per table.

Spark finds a Python data source by its name and hands its workers the class, pickled by value. So a
table that streams through one (``datagen``/``nexmark``, ``postgres-cdc``) gets a class of its own: a
subclass of :class:`_TableStream` made with ``type(...)``, holding the table's reader settings as class
attributes (they travel with the class; no option strings to encode), registered under a fresh name.

:class:`Span` is the input partition such a reader hands Spark: the offsets it reads from and up to.
"""

from __future__ import annotations

import uuid

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition


class Span(InputPartition):
    """The offsets (whatever the reader's offsets are: row numbers, versions, dicts) one partition reads."""

    def __init__(self, start, end) -> None:
        super().__init__((start, end))
        self.start, self.end = start, end


class _TableStream(DataSource):
    """Subclassed per table by :func:`table_stream`: its name, schema and reader are class attributes."""

    source_name = ""
    spark_schema: T.StructType | None = None
    reader: type[DataSourceStreamReader] = DataSourceStreamReader
    settings: tuple = ()

    @classmethod
    def name(cls) -> str:
        return cls.source_name

    def schema(self):
        return self.spark_schema

    def streamReader(self, schema) -> DataSourceStreamReader:
        return self.reader(*self.settings)


def table_stream(spark: SparkSession, prefix: str, schema: T.StructType, reader: type[DataSourceStreamReader],
                 *settings) -> DataFrame:
    """The stream of a new Python data source ``<prefix>_<uuid>`` of ``schema``, read by ``reader(*settings)``."""
    name = f"{prefix}_{uuid.uuid4().hex}"
    source = type(name, (_TableStream,), {"source_name": name, "spark_schema": schema, "reader": reader,
                                          "settings": settings})
    spark.dataSource.register(source)
    return spark.readStream.format(name).load()
