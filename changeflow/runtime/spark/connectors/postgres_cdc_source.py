"""A ``postgres-cdc`` table on Spark: its snapshot staged as files, then its changes from a Python data source.

When the job first starts (the driver; :mod:`changeflow.connectors.postgres_cdc_stream`
tells why each step makes the result exact):

1. the server, table and publication are checked and the replication slot created
   when missing; its position is where the stream starts;
2. with ``scan.startup.mode`` = ``initial`` the driver opens a REPEATABLE READ
   transaction and exports its snapshot; one executor imports it and reads the
   table, and Spark writes the rows as Parquet files of ``rows_per_batch`` rows in
   the job's directory (storage every executor reads), numbered ``_seq`` 0..N-1;
3. ``cdc.json`` records the start position, the snapshot's row and file counts and
   what the snapshot saw. A resumed job finds it and stages nothing: its snapshot
   files and its position are those of its first run.

The query is the union of two streams. Spark's file stream reads the snapshot, one
file per micro-batch. A Python data source (``pyspark.sql.datasource``) reads the
changes; its offsets ``{"gate", "lsn", "rows"}`` live in Spark's checkpoint. It
holds back for as many micro-batches as there are snapshot files (``gate`` counts
them: each of those micro-batches takes one file), so every change comes after the
whole snapshot; then each micro-batch is a range of whole transactions, about
``rows_per_batch`` change rows, decoded on an executor (``read``), and the slot is
advanced to the range's end when Spark commits it (``commit``). ``rows`` numbers the
change rows: ``_seq`` continues the snapshot's, so positions grow through the stream;
an update's ``-U`` and ``+U`` share nothing but follow each other.
"""

from __future__ import annotations

import json

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSourceStreamReader

from changeflow.common.type_values import arrow_type
from changeflow.connectors import filestore
from changeflow.connectors.postgres_cdc import CdcError, PostgresCdcSource
from changeflow.connectors.postgres_cdc_stream import (SnapshotFilter, StreamSettings, advance, export_snapshot,
                                                       next_end, prepare, read_changes, settings_of, snapshot_rows)
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.runtime.spark.connectors.python_streams import Span, table_stream
from changeflow.runtime.spark.job_directory import require_shared
from changeflow.runtime.spark.shipping import master_url
from changeflow.runtime.spark.source_files import file_stream, write_frame_files
from changeflow.runtime.spark.spark_types import struct

_STATE = "cdc.json"


def _change_schema(physical) -> T.StructType:
    fields = [T.StructField(f.name, f.dataType, True) for f in struct(physical).fields]
    return T.StructType(fields + [T.StructField(KIND, T.ByteType(), False), T.StructField(SEQ, T.LongType(), False),
                                  T.StructField(SUB, T.LongType(), False)])


def _start(spark: SparkSession, source: PostgresCdcSource, physical, directory: str, rows_per_batch: int) -> dict:
    """The job's start (``cdc.json``): read back when the job resumes, else made now (steps 1 to 3)."""
    store = filestore.store_for(directory)
    state_path = filestore.join(directory, _STATE)
    if store.exists(state_path):
        return json.loads(store.read_bytes(state_path))
    snapshot_dir = filestore.join(directory, "snapshot")
    if store.exists(snapshot_dir):  # an earlier start that did not finish staging: nothing read it
        store.delete(snapshot_dir, recursive=True)
    position = prepare(source)
    state: dict = {"lsn": position, "rows": 0, "files": 0, "snapshot": None}
    if source.startup_mode == "initial":
        require_shared(master_url(spark.sparkContext), directory, f"the snapshot of table {source.table.name}")
        store.makedirs(directory)
        conn, snapshot_id, seen = export_snapshot(source.connection)
        try:
            frame = _snapshot_frame(spark, settings_of(source, None), physical, snapshot_id, source.fetch_size)
            write_frame_files(frame, snapshot_dir, rows_per_batch)
        finally:
            conn.close()  # the executor imported the snapshot; the files hold its rows
        files = sorted(n for n, _ in store.entries(snapshot_dir) if n.endswith(".parquet"))
        rows = spark.read.parquet(snapshot_dir).count() if files else 0
        state.update(rows=rows, files=len(files),
                     snapshot={"xmin": seen.xmin, "xmax": seen.xmax, "xip": sorted(seen.xip), "bound": seen.bound})
    store.makedirs(directory)
    filestore.write_atomically(state_path, json.dumps(state).encode())
    return state


def _snapshot_frame(spark: SparkSession, settings: StreamSettings, physical, snapshot_id: str,
                    fetch_size: int) -> DataFrame:
    """The table's rows in the exported snapshot, read by one executor, with ``_seq`` 0..N-1."""
    schema = pa.schema([(n, arrow_type(t)) for n, t in physical] + [(SEQ, pa.int64())])

    def read(batches):
        for _ in batches:
            seq = 0
            for rows in snapshot_rows(settings, snapshot_id, fetch_size):
                columns = list(zip(*rows, strict=True))
                arrays = [pa.array(list(c), type=arrow_type(t)) for c, (_, t) in zip(columns, physical, strict=True)]
                arrays.append(pa.array(range(seq, seq + len(rows)), type=pa.int64()))
                seq += len(rows)
                yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    out = struct(physical).add(SEQ, T.LongType(), False)
    return spark.range(0, 1, 1, 1).mapInArrow(read, out)


class _ChangeReader(DataSourceStreamReader):
    """Offsets ``{"gate": snapshot files passed, "lsn": position, "rows": change rows before it}``."""

    def __init__(self, settings: StreamSettings, state: dict, physical, rows_per_batch: int) -> None:
        self.settings, self.state, self.physical = settings, state, physical
        self.rows_per_batch = rows_per_batch

    def initialOffset(self) -> dict:
        return {"gate": 0, "lsn": self.state["lsn"], "rows": self.state["rows"]}

    def latestOffset(self, start: dict, limit) -> dict:
        if start["gate"] < self.state["files"]:  # this micro-batch reads a snapshot file: no change yet
            return {**start, "gate": start["gate"] + 1}
        end, rows = next_end(self.settings, start["lsn"], self.rows_per_batch)
        return start if end == start["lsn"] else {"gate": start["gate"], "lsn": end, "rows": start["rows"] + rows}

    def partitions(self, start: dict, end: dict):
        return [] if end["lsn"] == start["lsn"] else [Span(start, end)]

    def read(self, partition: Span):
        changes = list(read_changes(self.settings, partition.start["lsn"], partition.end["lsn"]))
        expected = partition.end["rows"] - partition.start["rows"]
        if len(changes) != expected:  # the range was measured by the driver: a re-read must find the same rows
            raise CdcError(f"{self.settings.connection.where()}: the changes between LSN {partition.start['lsn']} "
                           f"and {partition.end['lsn']} are {len(changes)} rows, not the {expected} the offset says")
        schema = pa.schema([(n, arrow_type(t)) for n, t in self.physical] +
                           [pa.field(KIND, pa.int8(), False), pa.field(SEQ, pa.int64(), False),
                            pa.field(SUB, pa.int64(), False)])
        columns = list(zip(*[values for _, values in changes], strict=True)) if changes else [()] * len(self.physical)
        arrays = [pa.array(list(c), type=arrow_type(t)) for c, (_, t) in zip(columns, self.physical, strict=True)]
        first = partition.start["rows"]
        arrays += [pa.array([k for k, _ in changes], type=pa.int8()),
                   pa.array(range(first, first + len(changes)), type=pa.int64()),
                   pa.array([0] * len(changes), type=pa.int64())]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    def commit(self, end: dict) -> None:
        advance(self.settings, end["lsn"])  # the micro-batch up to `end` is committed: PostgreSQL may free its WAL


def postgres_cdc_stream(spark: SparkSession, source: PostgresCdcSource, physical, directory: str,
                        rows_per_batch: int) -> DataFrame:
    """The table's snapshot and changes as a stream of its columns, ``_kind``, ``_seq`` and ``_sub``."""
    physical = tuple(physical)
    state = _start(spark, source, physical, directory, rows_per_batch)
    seen = state["snapshot"]
    snapshot = None if seen is None else SnapshotFilter(seen["xmin"], seen["xmax"], frozenset(seen["xip"]),
                                                        seen["bound"])
    columns = [F.col(f"`{n}`") for n, _ in physical]
    stream = table_stream(spark, "changeflow_postgres_cdc", _change_schema(physical), _ChangeReader,
                          settings_of(source, snapshot), state, physical, rows_per_batch)
    changes = stream.select(*columns, KIND, SEQ, SUB)
    if not state["files"]:
        return changes
    rows = file_stream(spark, filestore.join(directory, "snapshot"), struct(physical).add(SEQ, T.LongType(), True))
    snapshot_rows_ = rows.select(*columns, F.lit(0).cast("byte").alias(KIND), F.col(SEQ).cast("long"),
                                 F.lit(0).cast("long").alias(SUB))
    return snapshot_rows_.unionByName(changes)
