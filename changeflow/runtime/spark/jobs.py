"""Runs a planned query on Spark and returns its changes.

Streaming: one Structured Streaming query per ``execute()``, run with the
``availableNow`` trigger so that bounded input ends the query once consumed.
Batch: Spark batch operations; the result is the final table as ``+I`` rows.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from typing import Any, Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from changeflow.common.row_kind import RowKind
from changeflow.runtime.changes import Change
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.nodes import PlanNode
from changeflow.runtime.spark.batch import BatchTranslator
from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator

_KINDS = list(RowKind)


class SparkJobs:
    """Executes plans on one SparkSession; every streaming job gets its own checkpoint."""

    def __init__(self, spark: SparkSession, checkpoint_root: str | None = None) -> None:
        self.spark = spark
        self.checkpoint_root = checkpoint_root

    # --- streaming ------------------------------------------------------------------
    def streaming_frame(self, plan: PlanNode, settings: StreamingSettings, workdir: str) -> DataFrame:
        return StreamingTranslator(self.spark, settings, workdir).translate(plan)

    def run_streaming(self, plan: PlanNode, settings: StreamingSettings) -> list[Change]:
        workdir = tempfile.mkdtemp(prefix="changeflow-", dir=self.checkpoint_root)
        try:
            frame = self.streaming_frame(plan, settings, workdir)
            batches: list[tuple[int, pa.Table]] = []
            lock = threading.Lock()

            def collect(batch: DataFrame, batch_id: int) -> None:
                table = batch.toArrow()
                with lock:
                    batches.append((batch_id, table))

            query = (frame.writeStream.foreachBatch(collect)
                     .option("checkpointLocation", f"{workdir}/checkpoint")
                     .trigger(availableNow=True).start())
            query.awaitTermination()  # raises the query's error, if it failed
            names = [n for n in frame.columns if n not in (KIND, SEQ, SUB)]
            changes: list[Change] = []
            for _, table in sorted(batches, key=lambda b: b[0]):
                changes.extend(_changes(table, names))
            return changes
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    # --- batch ----------------------------------------------------------------------
    def batch_frame(self, plan: PlanNode) -> DataFrame:
        return BatchTranslator(self.spark).translate(plan)

    def run_batch(self, plan: PlanNode) -> list[Change]:
        frame = self.batch_frame(plan).orderBy(SEQ)
        names = [n for n in frame.columns if n != SEQ]
        table = frame.select(*[F.col(f"`{n}`") for n in names]).toArrow()
        return [Change(RowKind.INSERT, values) for values in _rows(table, names)]


def _changes(table: pa.Table, names: list[str]) -> Iterator[Change]:
    table = table.sort_by([(SEQ, "ascending"), (SUB, "ascending")])
    kinds = table.column(KIND).to_pylist()
    for kind, values in zip(kinds, _rows(table, names)):
        yield Change(_KINDS[kind], values)


def _rows(table: pa.Table, names: list[str]) -> Iterator[tuple]:
    columns = [_python_values(table.column(n)) for n in names]
    return iter(list(zip(*columns)) if columns else [])


def _python_values(column: pa.ChunkedArray) -> list[Any]:
    values = column.to_pylist()
    if pa.types.is_map(column.type):
        # A MULTISET is a Spark map; Arrow gives (element, count) pairs, PyFlink a dict.
        return [None if v is None else dict(v) for v in values]
    return values
