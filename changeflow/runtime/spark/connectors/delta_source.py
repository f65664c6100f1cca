"""A ``delta`` table read on Spark: the bounded snapshot, and the change data feed as a stream.

Both read the table on the executors, with delta-rs, from ``table-path`` (and its
``storage-options.*``): the path must be one every executor reaches, an object store's
URI on a cluster (a local path only in local mode). The driver opens the table first,
to fail at the job's start naming the option when it is missing or its columns differ.

- The snapshot (``'mode' = 'batch'``) is one Spark partition reading the version asked
  for; the caller treats it as any bounded Spark frame (:mod:`..sources`).
- The change data feed (``'mode' = 'streaming'``) is a Python data source
  (:class:`DeltaChangesSource`) whose offsets are table versions: a micro-batch reads
  the versions after its start up to its end (:func:`~changeflow.connectors.delta_changes.read_changes`),
  so a resumed job goes on from the version its checkpoint committed, and a micro-batch
  run again after a restart reads the same versions.
"""

from __future__ import annotations

import base64
import pickle
from typing import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from changeflow.connectors.delta import DeltaSource, Location
from changeflow.connectors.delta_changes import KIND, SEQ, SUB, check_change_feed, latest_version, read_changes
from changeflow.runtime.spark.connectors.python_streams import Span
from changeflow.runtime.spark.spark_types import struct

_FORMAT = "changeflow_delta_changes"


def is_delta(connector) -> bool:
    return isinstance(connector, DeltaSource)


def delta_snapshot_frame(spark: SparkSession, source: DeltaSource, schema: tuple) -> DataFrame:
    """The snapshot's rows as a batch DataFrame of ``schema`` (the connector's columns), read on an executor."""
    version = source.version_as_of if source.version_as_of is not None else source.timestamp_as_of
    source.location.check_schema(source.location.open(version))  # fails now, naming the option or column
    snapshot = source.snapshot

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows:
                yield from snapshot().to_batches()

    return spark.range(0, 1, numPartitions=1).mapInArrow(read, struct(schema))


def delta_changes_stream(spark: SparkSession, source: DeltaSource, schema: tuple) -> DataFrame:
    """The change rows (columns, ``_kind``, ``_seq``, ``_sub``) of the table's change data feed, a stream."""
    location = source.location
    delta_table = location.open()
    location.check_schema(delta_table)
    check_change_feed(location, delta_table)
    spark.dataSource.register(DeltaChangesSource)
    encoded = base64.b64encode(pickle.dumps(location)).decode("ascii")
    start = "" if source.starting_version is None else str(source.starting_version)
    return (spark.readStream.format(_FORMAT).option("location", encoded).option("startingVersion", start)
            .schema(changes_struct(schema)).load())


def changes_struct(schema: tuple) -> T.StructType:
    # Nullable, as the Arrow batches the reader yields declare them (Spark compares the two schemas exactly).
    return struct(schema).add(KIND, T.ByteType(), True).add(SEQ, T.LongType(), True).add(SUB, T.LongType(), True)


class DeltaChangesSource(DataSource):
    """Spark's Python data source over a Delta table's change data feed (options: ``location``, ``startingVersion``)."""

    @classmethod
    def name(cls) -> str:
        return _FORMAT

    def schema(self) -> str:
        raise ValueError(f"{_FORMAT} needs the schema of the changes (changeflow passes it)")

    def streamReader(self, schema: T.StructType) -> "DataSourceStreamReader":
        location = pickle.loads(base64.b64decode(self.options["location"]))  # noqa: S301 - written by changeflow
        text = self.options.get("startingVersion") or ""
        return _ChangesReader(location, int(text) if text else None)


class _ChangesReader(DataSourceStreamReader):
    """Offsets ``{"version": v}``: every change up to table version ``v`` has been read (-1: nothing yet)."""

    def __init__(self, location: Location, starting_version: int | None) -> None:
        self.location = location
        self.snapshot = starting_version is None  # the first micro-batch reads the snapshot of the latest version
        self.floor = -1 if starting_version is None else starting_version - 1

    def initialOffset(self) -> dict:
        return {"version": self.floor}

    def latestOffset(self) -> dict:
        return {"version": max(self.floor, latest_version(self.location))}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        if end["version"] <= start["version"]:
            return []
        return [Span(start["version"], end["version"])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, Span)
        table = read_changes(self.location, partition.start, partition.end, self.snapshot)
        yield from table.to_batches()

    def commit(self, end: dict) -> None:
        pass  # nothing to release: the versions stay in the table's log
